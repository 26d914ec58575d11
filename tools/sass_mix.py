#!/usr/bin/env python3
"""tools/sass_mix.py CUBIN [KERNEL] [--yield]: a developer's view of an sm_90a kernel's instruction
mix where no disassembler is installed (the CUDA toolkit here has nvcc and ptxas, not cuobjdump or
nvdisasm). It reads the ELF section .text.KERNEL (default tcgemm), decodes each 128-bit instruction's
opcode field (bits 0-11 of the first word, the low 9 bits naming the operation, the top 3 its operand
form) and prints the sequence from 40 instructions before the first wgmma (HGMMA) to 60 after the last,
runs of one class folded (FFMAx32), then the counts. Classes named here were calibrated on CUDA 13.0
(2026-11-30) from probe kernels compiled with nvcc -arch=sm_90a -cubin, each differing from a base
kernel by one PTX instruction: fma.rn.f32 -> 0x23 FFMA, mul -> 0x20 FMUL, add -> 0x21 FADD,
wgmma.mma_async with A by descriptor -> 0x9f3, with A in registers -> 0xdf3 (HGMMA, HGMMA.RS),
wgmma.fence -> 0x1c5 with bit 47 clear (WG.ARRIVE), wgmma.wait_group N -> 0x1c5 with bit 47 set and N
in bits 72-79 (WG.DEPBAR<N>; commit_group is a flag of the HGMMA), ldmatrix -> 0x3b LDSM, bar.sync /
bar.arrive -> 0x11d BAR, mbarrier.try_wait -> 0x1a7 SYNCS, ld/st.global -> 0x181 LDG / 0x186 STG; and
0x183 / 0x187 as LDL / STL from ptxas's spill counts. Anything else prints as its hex opcode. A newer
toolkit may encode differently: recalibrate before trusting the names. --yield prints the yield bit
(bit 109) and stall count (bits 105-108) of every FFMA run after a WG.DEPBAR (ptxas sets alternate
yields itself since CUDA 12.9: the interleaving DeepGEMM once patched into its binaries)."""
import collections
import struct
import sys

NAMES = {0x23: "FFMA", 0x20: "FMUL", 0x21: "FADD", 0x3B: "LDSM", 0x11D: "BAR", 0x1A7: "SYNCS",
         0x181: "LDG", 0x186: "STG", 0x183: "LDL", 0x187: "STL"}


def sections(path):
    """The ELF64 file's sections as {name: bytes}."""
    b = open(path, "rb").read()
    if b[:4] != b"\x7fELF" or b[4] != 2:
        sys.exit("%s: not an ELF64 file (a cubin)" % path)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]
    out = {}
    for name, _typ, _flags, _addr, off, size in heads:
        end = b.index(b"\0", strtab + name)
        out[b[strtab + name:end].decode()] = b[off:off + size]
    return out


def name(w0, w1):
    """The class of one instruction (two 64-bit words)."""
    op = w0 & 0xFFF
    low = op & 0x1FF
    if low == 0x1C5:
        return "WG.DEPBAR%d" % ((w1 >> 8) & 0xFF) if (w0 >> 47) & 1 else "WG.ARRIVE"
    if low == 0x1F3:
        return "HGMMA.RS" if op == 0xDF3 else "HGMMA"
    return NAMES.get(low, "0x%03x" % op)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    kernel = args[1] if len(args) > 1 else "tcgemm"
    text = sections(args[0]).get(".text." + kernel)
    if text is None:
        sys.exit("%s: no section .text.%s" % (args[0], kernel))
    words = [struct.unpack_from("<QQ", text, i) for i in range(0, len(text), 16)]
    names = [name(*w) for w in words]
    mma = [i for i, n in enumerate(names) if n.startswith("HGMMA")]
    if not mma:
        sys.exit("%s: no wgmma in %s" % (args[0], kernel))
    lo, hi = max(mma[0] - 40, 0), min(mma[-1] + 60, len(names))
    print("%s: %d instructions, %d HGMMA between %d and %d" % (kernel, len(names), len(mma), mma[0],
                                                               mma[-1]))
    runs = []
    for n in names[lo:hi]:
        if runs and runs[-1][0] == n:
            runs[-1][1] += 1
        else:
            runs.append([n, 1])
    print(" ".join(n if c == 1 else "%sx%d" % (n, c) for n, c in runs))
    counts = collections.Counter(names[lo:hi])
    print("counts:", ", ".join("%s %d" % kv for kv in counts.most_common()))
    if "--yield" in argv:
        for i in range(lo, hi):
            if names[i].startswith("WG.DEPBAR"):
                run = [w for w, n in zip(words[i + 1:i + 80], names[i + 1:i + 80]) if n == "FFMA"]
                ctl = [w1 >> 41 for _, w1 in run]
                print("FFMAs after %s at %d: yield %s stall %s" % (
                    names[i], i, "".join(str((c >> 4) & 1) for c in ctl),
                    "".join("%x" % (c & 15) for c in ctl)))


if __name__ == "__main__":
    main(sys.argv)
