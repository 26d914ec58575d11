#!/usr/bin/env python3
"""loopseq.py CUBIN [KERNEL] [--full]: the K-loop body of a matmul kernel read through the opcode
field (sm_90: low 12 bits of each 128-bit word; no disassembler here): the cluster of FFMAs
(0x223) that holds the most of them, printed as a run-length opcode sequence (FFMA runs as F*n),
with the opcode histogram of the cluster's non-FFMA instructions. Names are guesses from
histograms (bench/dgemm/ophist.py); compare variants, do not read counts as exact."""
import struct, sys, collections
NAMES = {0x223:'F',0x823:'F(i)',0xc23:'F(c)',0x984:'LDS',0xfae:'LDGSTS',0x91a:'DEPBAR',0x983:'LDL',0x387:'STL',
 0x224:'IMAD',0x424:'IMAD(i)',0x824:'IMAD(i2)',0xc24:'IMAD(c)',0x225:'IMAD.WIDE',0x825:'IMAD.WIDE(i)',
 0x425:'IMAD.WIDE(i1)',0xc25:'IMAD.WIDE(c)',0x211:'LEA',0x811:'LEA(i)',0xc11:'LEA(c)',0x210:'IADD3',
 0x810:'IADD3(i)',0xc10:'IADD3(c)',0x202:'MOV',0x802:'MOV(i)',0xc02:'MOV(c)',0x290:'UIADD3',
 0x890:'UIADD3(i)',0x947:'BRA',0xb1d:'BAR',0x20c:'ISETP',0x80c:'ISETP(i)',0xc0c:'ISETP(c)',
 0x212:'LOP3',0x812:'LOP3(i)',0x219:'SHF',0x819:'SHF(i)',0x9af:'LDGDEPBAR',0xab9:'ULDC',0x882:'UMOV(i)',
 0x291:'ULEA',0x807:'SEL(i)',0x207:'SEL',0x20b:'?20b',0x986:'STG',0x981:'LDG',0x220:'FMUL',0xc20:'FMUL(c)'}
def sections(data):
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    secs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size = struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)
        secs.append((name, off, size))
    stroff = secs[shstrndx][1]
    def nm(o):
        e = data.index(b'\0', stroff + o); return data[stroff + o:e].decode()
    return [(nm(n), o, s) for n, o, s in secs]
data = open(sys.argv[1], 'rb').read()
args = [a for a in sys.argv[2:] if not a.startswith('--')]
kern = args[0] if args else 'matmul_tuned'
for name, off, size in sections(data):
    if name != '.text.' + kern: continue
    ops = [struct.unpack_from('<Q', data, i)[0] & 0xfff for i in range(off, off + size, 16)]
    idx = [i for i, o in enumerate(ops) if o == 0x223]
    clusters, cur = [], [idx[0]]
    for i in idx[1:]:
        if i - cur[-1] > 60: clusters.append(cur); cur = [i]
        else: cur.append(i)
    clusters.append(cur)
    print(f'{name}: {len(ops)} instructions, FFMA clusters: ' + ' '.join(f'{c[0]}..{c[-1]}({len(c)})' for c in clusters))
    for c in sorted(clusters, key=len, reverse=True)[:int(dict(a.split('=') for a in sys.argv if a.startswith('--n=')).get('--n', 1))]:
        lo, hi = c[0], c[-1] + 1
        if '--full' in sys.argv: lo, hi = max(0, lo - 80), min(len(ops), hi + 80)
        seq, run = [], 0
        for o in ops[lo:hi]:
            if o == 0x223: run += 1; continue
            if run: seq.append(f'F*{run}'); run = 0
            seq.append(NAMES.get(o, hex(o)))
        if run: seq.append(f'F*{run}')
        h = collections.Counter(o for o in ops[c[0]:c[-1] + 1] if o != 0x223)
        print(f'cluster {c[0]}..{c[-1]}: {len(c)} FFMA, others: ' + '  '.join(f'{NAMES.get(k, hex(k))} {v}' for k, v in h.most_common(30)))
        print('  ' + ' '.join(seq))
