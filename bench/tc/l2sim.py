#!/usr/bin/env python3
# l2sim.py: DRAM-read model of the persistent TF32 schedule (docs/notes/tcgemm.md section 13). 66 clusters of
# 2 CTAs (BM 256, BN 128, CN 2: cluster tile 256 x 256 of C) walk their units (cluster c: tiles c, c + 66, ...) in
# lockstep, one K slice of 32 at a time; each step reads an A slice (row panel, kt) and a B slice (column panel, kt)
# of 32 KB each through a fully associative LRU cache of cap MB. Prints the modelled DRAM reads for GROUP, RASTER and
# the K snake (odd units walk K backwards). Usage: l2sim.py [SIZE] (M = N = K, default 8192). A model: the real L2 is
# two partitions, set-associative, hashed, and the real clusters drift apart in K.
import sys
from collections import OrderedDict
def tile(t, sm, sn, group, raster):
    rows, cols = (sm, sn) if raster == 0 else (sn, sm)
    per = group * cols; g = t // per; first = g * group
    inn = min(rows - first, group)
    r = first + (t - g * per) % inn; c = (t - g * per) // inn
    return (r, c) if raster == 0 else (c, r)
def sim(M, N, K, group, raster, snake, cap_mb, clusters=66):
    sm, sn = M // 256, N // 256; KT = K // 32
    units = sm * sn
    cap = int(cap_mb * 2**20 / 32768)
    lru = OrderedDict(); miss = 0; acc = 0
    waves = (units + clusters - 1) // clusters
    for w in range(waves):
        ts = [w * clusters + c for c in range(clusters) if w * clusters + c < units]
        tl = [tile(t, sm, sn, group, raster) for t in ts]
        for j in range(KT):
            kt = KT - 1 - j if (snake and w % 2) else j
            for (pm, pn) in tl:
                for key in (('A', pm, kt), ('B', pn, kt)):
                    acc += 1
                    if key in lru: lru.move_to_end(key)
                    else:
                        miss += 1; lru[key] = 1
                        if len(lru) > cap: lru.popitem(last=False)
    return miss * 32768 / 1e9, acc * 32768 / 1e9
M = N = K = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
for cap in (25, 40, 50):
    for group in (2, 4, 6, 8, 16, 32):
        for raster in (0, 1):
            for snake in (0, 1):
                d, a = sim(M, N, K, group, raster, snake, cap)
                print(f"cap {cap} MB GROUP {group:2d} RASTER {raster} snake {snake}: DRAM {d:.3f} GB (L2 reads {a:.2f} GB)")
