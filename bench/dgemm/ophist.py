#!/usr/bin/env python3
"""ophist.py CUBIN [KERNEL]: static SASS opcode histogram of a kernel's .text section (sm_90:
low 12 bits of each 128-bit instruction word), named where the opcode is known (names in
parentheses: operand-form variants, guessed), then the same for each cluster of DMMAs (a K-loop
body: from its first to its last DMMA). For machines without cuobjdump/nvdisasm (notes_dgemm
sections 7.1, 9.2); compare variants of one kernel, do not read single counts as exact."""
import struct, sys, collections
NAMES = {0x23f:'DMMA',0x984:'LDS',0xfae:'LDGSTS',0x91a:'DEPBAR',0x983:'LDL',0x387:'STL',
 0x224:'IMAD',0x424:'IMAD(imm)',0x824:'IMAD(imm2)',0xc24:'IMAD(c)',0x225:'IMAD.WIDE',0x825:'IMAD.WIDE(imm)',0x425:'IMAD.WIDE(i)',0xc25:'IMAD.WIDE(c)',
 0x211:'LEA',0x811:'LEA(imm)',0xc11:'LEA(c)',0x210:'IADD3',0x810:'IADD3(imm)',0xc10:'IADD3(c)',
 0x202:'MOV',0x802:'MOV(imm)',0xc02:'MOV(c)',0x290:'UIADD3',0x890:'UIADD3(imm)',0x947:'BRA',
 0xb1d:'BAR',0x20c:'ISETP',0x80c:'ISETP(imm)',0xc0c:'ISETP(c)',0x212:'LOP3',0x812:'LOP3(imm)',
 0x219:'SHF',0x819:'SHF(imm)'}
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
kern = sys.argv[2] if len(sys.argv) > 2 else 'dg_mma'
for name, off, size in sections(data):
    if name != '.text.' + kern: continue
    h = collections.Counter()
    for i in range(off, off + size, 16):
        w, = struct.unpack_from('<Q', data, i)
        h[w & 0xfff] += 1
    tot = sum(h.values())
    print(f'{name}: {tot} instructions')
    print('  ' + '  '.join(f'{NAMES.get(k, hex(k))} {v}' for k, v in h.most_common(40)))
    # the DMMA clusters (K-loop bodies): instructions from a cluster's first to its last DMMA
    ops = [struct.unpack_from('<Q', data, i)[0] & 0xfff for i in range(off, off + size, 16)]
    idx = [i for i, o in enumerate(ops) if o == 0x23f]
    clusters, cur = [], [idx[0]]
    for i in idx[1:]:
        if i - cur[-1] > 150: clusters.append(cur); cur = [i]
        else: cur.append(i)
    clusters.append(cur)
    for c in clusters:
        hc = collections.Counter(ops[c[0]:c[-1] + 1])
        print(f'  loop span {c[0]}..{c[-1]}: {c[-1]-c[0]+1} instr, {len(c)} DMMA: ' +
              '  '.join(f'{NAMES.get(k, hex(k))} {v}' for k, v in hc.most_common(16)))
