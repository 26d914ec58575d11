#!/usr/bin/env python3
"""tools/selection_vs_oracle.py SELECTED.tsv TUNED.tsv: how close the runtime's choice for shapes
nobody tuned comes to a per-shape tuned oracle, from two bench_calls --tsv files of the same calls
(same seed or shapes file): SELECTED served below the exact level (e.g. state b: after the default
run, the shipped database under it), TUNED after `autotune --recorded` tuned those calls' problems
(state c). Per call that SELECTED served below the exact level and TUNED at the exact level, the
score is TUNED's time over SELECTED's (1.0: the selection found the oracle's speed); prints the
geomean (raw, and with each score capped at 1, since single timings move by a few percent either
way), the counts below 0.9 and 0.8, and the lowest calls. The oracle is only as good as the
tuning's budget. Exit status 2 on unreadable input, 1 if no call qualifies."""
import math
import sys


def load(path):
    with open(path) as f:
        rows = [line.rstrip('\n').split('\t') for line in f if line.strip()]
    head = rows[0]
    return {r[0]: dict(zip(head, r)) for r in rows[1:]}


def main(argv):
    if len(argv) != 3:
        print('usage: python3 tools/selection_vs_oracle.py SELECTED.tsv TUNED.tsv', file=sys.stderr)
        return 2
    try:
        sel, tuned = load(argv[1]), load(argv[2])
    except (OSError, IndexError) as e:
        print('selection_vs_oracle: %s' % e, file=sys.stderr)
        return 2
    scores = []
    for i, s in sel.items():
        t = tuned.get(i)
        if not t or s['level'] == '1' or t['level'] != '1':
            continue
        ts, tt = float(s['ours_us']), float(t['ours_us'])
        if ts <= 0 or tt <= 0:
            continue
        call = '%s %s %s %sx%sx%sx%s' % (s['type'], s['order'], s['ops'], s['m'], s['n'], s['k'],
                                         s['batch'])
        scores.append((tt / ts, call))
    if not scores:
        print('selection_vs_oracle: no call served below the exact level in the first file and '
              'at it in the second', file=sys.stderr)
        return 1
    raw = math.exp(sum(math.log(x) for x, _ in scores) / len(scores))
    capped = math.exp(sum(math.log(min(x, 1.0)) for x, _ in scores) / len(scores))
    print('%d calls; oracle / selected geomean %.3f (each capped at 1: %.3f); below 0.9: %d, '
          'below 0.8: %d' % (len(scores), raw, capped, sum(x < 0.9 for x, _ in scores),
                             sum(x < 0.8 for x, _ in scores)))
    for x, call in sorted(scores)[:10]:
        print('  %.3f  %s' % (x, call))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
