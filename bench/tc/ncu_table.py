#!/usr/bin/env python3
"""ncu_table.py: the L2/DRAM counter table of an `ncu --csv --print-units base --metrics ...` log of `proto prof`
(bench/tc/run_s9.sh, run_promo.sh): one row per profiled kernel, in launch order (#0 cuBLAS, #1.. the configurations).
Usage: ncu_table.py FILE.csv TAG. Prints 'no csv' when FILE holds no ncu table."""
import csv
import sys


def main():
    f, tag = sys.argv[1], sys.argv[2]
    try:
        rows = [r for r in csv.reader(open(f, errors="replace")) if len(r) > 5]
    except OSError:
        rows = []
    if not rows or rows[0][0] != "ID":
        print("NCU %s: no csv" % tag)
        return
    h = rows[0]
    iid, ik, im, iv = h.index("ID"), h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
    ks = {}
    for r in rows[1:]:
        ks.setdefault(int(r[iid]), {"name": r[ik]})[r[im]] = float(r[iv].replace(",", ""))
    print("NCU %s: #i kernel | DRAM rd MB | L2 tex rd Msec | tex req M | lrc rd Msec | fabric Msec | L2 all Msec | us | GHz" % tag)
    for i in sorted(ks):
        d = ks[i]
        g = lambda k: d.get(k, float("nan"))
        t = g("gpu__time_duration.sum")
        print("NCU %s: #%d %-12s | %8.1f | %7.2f | %6.2f | %7.2f | %6.2f | %7.2f | %8.1f | %.3f" % (
            tag, i, d["name"][:12], g("dram__bytes_read.sum") / 1e6, g("lts__t_sectors_srcunit_tex_op_read.sum") / 1e6,
            g("lts__t_requests_srcunit_tex_op_read.sum") / 1e6, g("lrc__lts2lrc_sectors_op_read.sum") / 1e6,
            g("lts__t_sectors_srcunit_ltcfabric.sum") / 1e6, g("lts__t_sectors.sum") / 1e6, t / 1e3,
            g("gpc__cycles_elapsed.max") / t if t > 0 else 0))


if __name__ == "__main__":
    main()
