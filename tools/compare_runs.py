#!/usr/bin/env python3
"""tools/compare_runs.py OLD.txt NEW.txt [--drop PCT]: a developer's regression check between two
logs of the default tuning run (`bench/run.sh default-run OUT` writes them as
OUT/DATE-GPU-default-run.txt; older ones are committed as bench/results/*-default-tune-*.txt).
Per problem it takes the vendor library's time (the `vendor cublas:` / `vendor cub:` line under
the problem's header, the first one where there are two) and the tuned best (the run's closing
summary, else the search's own best line and its second look, as in `--quiet` logs), and prints
both runs' ratio vendor / tuned, the change, and `DROP` where the new ratio fell by more than PCT
percent (default 4: single tuner timings move by 2-3%). A ratio, not a time, so that a GPU in another
clock state moves both sides; a DROP is a reason to time that problem in paired rounds
(bench_matmul --sweep BN_SWEEP_PAIRS, bench_dgemm, ...), not proof. Exit status 1 if any problem
dropped, 2 on unreadable input. Problems in one log only are listed as such."""
import re
import sys

USAGE = 'usage: python3 tools/compare_runs.py OLD.txt NEW.txt [--drop PCT]'

HEADER = re.compile(r'^(?:GPU [0-9,]+: )?(\w+) (\S+): \d+ valid configurations')
VENDOR = re.compile(r'^\s+vendor (\w+): ([0-9.eE+-]+) ms')
SUMMARY = re.compile(r'^\s+(\w+) (\S+): \d+ results')
BEST = re.compile(r'^\s+best ([0-9.eE+-]+) ms')
EVALUATED = re.compile(r'^(?:GPU [0-9,]+: )?(\w+) (\S+): \d+ evaluated')
SEARCH_BEST = re.compile(r'^\s+best [0-9.]+ [GM]\S+ \(([0-9.eE+-]+) ms')
SECOND = re.compile(r'^(?:GPU [0-9,]+: )?(\w+) (\S+): second look, .*best (?:kept \()?([0-9.eE+-]+) ms')


def parse(path):
    """{(kernel, problem): [vendor ms, vendor name, tuned ms]} of one log."""
    runs = {}
    searched = {}                       # the search's best, then its second look's
    current = None
    in_summary = None
    evaluated = None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = EVALUATED.match(line)
            if m:
                evaluated = (m.group(1), m.group(2))
                continue
            m = SEARCH_BEST.match(line)
            if m and evaluated:
                searched[evaluated] = float(m.group(1))
                evaluated = None
                continue
            m = SECOND.match(line)
            if m:
                searched[(m.group(1), m.group(2))] = float(m.group(3))
                continue
            m = HEADER.match(line)
            if m:
                current = (m.group(1), m.group(2))
                runs.setdefault(current, [None, None, None])
                continue
            m = VENDOR.match(line)
            if m and current and runs[current][0] is None:
                runs[current][0] = float(m.group(2))
                runs[current][1] = m.group(1)
                continue
            m = SUMMARY.match(line)
            if m:
                in_summary = (m.group(1), m.group(2))
                continue
            m = BEST.match(line)
            if m and in_summary:
                runs.setdefault(in_summary, [None, None, None])[2] = float(m.group(1))
                in_summary = None
    for key, ms in searched.items():
        if key in runs and runs[key][2] is None:
            runs[key][2] = ms
    return runs


def main(argv):
    if '-h' in argv[1:] or '--help' in argv[1:]:
        print(USAGE)
        print(__doc__)
        return 0
    args = [a for a in argv[1:] if not a.startswith('--')]
    drop = 4.0
    if '--drop' in argv:
        i = argv.index('--drop')
        if i + 1 >= len(argv):
            print(f'--drop needs a percentage\n{USAGE}', file=sys.stderr)
            return 2
        try:
            drop = float(argv[i + 1])
        except ValueError:
            print(f'--drop needs a percentage, not {argv[i + 1]!r}\n{USAGE}', file=sys.stderr)
            return 2
        args = [a for a in args if a != argv[i + 1]]
    if len(args) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        old, new = parse(args[0]), parse(args[1])
    except OSError as e:
        print(f'compare_runs: {e}', file=sys.stderr)
        return 2
    dropped = 0
    print(f'{"problem":34} {"vendor":7} {"old":>7} {"new":>7} {"change":>8}')
    for key in sorted(set(old) | set(new)):
        name = f'{key[0]} {key[1]}'
        a, b = old.get(key), new.get(key)
        if not a or not b:
            print(f'{name:34} only in the {"new" if b else "old"} run')
            continue
        if not (a[0] and a[2] and b[0] and b[2]):
            continue                            # no vendor call (jacobi) or no result
        ra, rb = a[0] / a[2], b[0] / b[2]
        change = (rb / ra - 1.0) * 100.0
        flag = '  DROP' if change < -drop else ''
        dropped += bool(flag)
        print(f'{name:34} {b[1]:7} {ra:6.3f}x {rb:6.3f}x {change:+7.1f}%{flag}')
    print(f'{dropped} problems dropped by more than {drop:g}%')
    return 1 if dropped else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
