#!/usr/bin/env python3
"""bench/tc/retime_replay.py: replays re-timing decision rules on the rounds a traced re-timing printed
(AUTOTUNE_RETIME_TRACE=1, bench/s16_retime_study_gpu_run.sh). For each traced re-timing of a log it prints every
configuration's median and its median ratio to the round's geometric mean, then, for every window of R consecutive
rounds and with each of the first N configurations in turn as the short-timing winner, what a rule would pick and
how much slower that pick is than the best by all rounds' medians (mean loss, share of windows losing over 1%).
Rules: "keep" (tuner/retime.c without a settle: the short-timing winner stays unless a challenger is faster in all
rounds, or in all but one by a median of 2%), "lowest" (with a settle: the lowest median of round-normalized times).
usage: python3 bench/tc/retime_replay.py LOG [N R ...]   (default: 8 4 8 5)"""
import math
import re
import statistics
import sys


def load(path):
    blocks, cur = [], None
    for line in open(path):
        if line.startswith('## '):
            cur = {'label': line[3:].strip(), 'rows': []}
            blocks.append(cur)
        m = re.match(r'\s*retime trace (\d+) \(short ([\d.]+) ms\) (\S+): (.*)', line)
        if m and cur is not None:
            keep = [kv for kv in m.group(3).split(',')
                    if kv.split('=')[0] in ('BM', 'BN', 'BK', 'STAGES', 'CM', 'CN', 'RASTER', 'GROUP', 'VEC')]
            cur['rows'].append((','.join(keep), float(m.group(2)), [float(v) for v in m.group(4).split()]))
    return [b for b in blocks if b['rows']]


def geomean_level(t, rounds, cands):
    return [math.exp(sum(math.log(t[k][r]) for k in cands) / len(cands)) for r in rounds]


def pick(t, rounds, inc, rule, cands):
    if rule == 'lowest':
        level = geomean_level(t, rounds, cands)
        score = {k: statistics.median([t[k][r] / level[i] for i, r in enumerate(rounds)]) for k in cands}
        return min(cands, key=lambda k: (score[k], k))
    n_r = len(rounds)
    key = {}
    for k in cands:
        if k == inc:
            key[k] = 1.0
            continue
        ratio = [t[k][r] / t[inc][r] for r in rounds]
        med, faster = statistics.median(ratio), sum(x < 1 for x in ratio)
        displaces = faster >= n_r or (faster >= n_r - 1 and med <= 0.98)
        key[k] = med if med < 1 and displaces else 1.000001
    return min(cands, key=lambda k: key[k])


def main():
    blocks = load(sys.argv[1])
    plans = [int(v) for v in sys.argv[2:]] or [8, 4, 8, 5]
    for b in blocks:
        t = [row[2] for row in b['rows']]
        n, total = len(t), len(t[0])
        level = geomean_level(t, range(total), range(n))
        true = [statistics.median(x) for x in t]
        best = min(true)
        print('##', b['label'])
        for (name, short, x), med in zip(b['rows'], true):
            norm = statistics.median([x[r] / level[r] for r in range(total)])
            print(f'  {name:58s} short {short:.4f}  median {med:.4f} ({(med / best - 1) * 100:+.1f}%)  '
                  f'round-normalized {norm:.4f}')
        for i in range(0, len(plans) - 1, 2):
            n_c, n_r = min(plans[i], n), plans[i + 1]
            if n_r > total:
                continue
            for rule in ('keep', 'lowest'):
                losses = []
                for start in range(total - n_r + 1):
                    rounds = list(range(start, start + n_r))
                    for inc in range(n_c):
                        losses.append(true[pick(t, rounds, inc, rule, list(range(n_c)))] / best - 1)
                print(f'  {rule:6s} {n_c} configurations, windows of {n_r} rounds: mean loss '
                      f'{100 * sum(losses) / len(losses):.2f}%, over 1% in '
                      f'{100 * sum(v > 0.01 for v in losses) / len(losses):.0f}% of {len(losses)}')


if __name__ == '__main__':
    main()
