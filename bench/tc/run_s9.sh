#!/bin/bash
# (Record of session 9. The UNI, SNAKE, L2A and L2B keys it uses were taken out after the session with their
# kernel code, which stays at commit 1ee6570; run_promo.sh ran in part: docs/notes/tcgemm.md section 13.)
# run_s9.sh (session 9, one device call of at most 200 s): TF32 memory traffic against the SM clock.
# 1. Nsight Compute (a few L2/DRAM counters, one launch each) of cuBLAS and the candidates at 8192^3 and 4096^3:
#    base (family default), UNI (plain TMA for the unshared B), SNAKE (odd units walk K backwards), their
#    combination, L2 hints (A evict_last, B evict_first / B evict_first alone), tensor-map prefetch.
# 2. proto check battery of the new options; 3. steady-state paired rounds at 8192^3 and 4096^3 (NVML clock and
# power columns); 4. GPU-tier tcgemm tests of the family built with T9_UNI and T9_SNAKE on for TF32 (this copy's
# kernel defaults, patched before the call; proto names every option explicitly); 5. the other six shapes.
# Every phase has a timeout and the script skips what would pass its own deadline (T_END seconds).
set -u
O=${OUT:-/tmp}
T0=$(date +%s); T_END=${T_END:-188}
left() { echo $(( T_END - ($(date +%s) - T0) )); }
step() { echo "== $1 (elapsed $(( $(date +%s) - T0 )) s)"; }
export REPS=${REPS:-20} WARM_MS=${WARM_MS:-150}
export CUBIN_DIR=$PWD/bench/tc/.cache/cubin
export LD_LIBRARY_PATH=$PWD/../../.dev/lib:${LD_LIBRARY_PATH:-}
P=./bench/tc/.cache/proto
B="BM=256,BN=128,CN=2"
X0="$B,UNI=0,SNAKE=0"                         # the family's TF32 default as shipped
X1="$B,UNI=1,SNAKE=0"
X2="$B,UNI=0,SNAKE=1"
X3="$B,UNI=1,SNAKE=1"
X4="$B,UNI=1,SNAKE=0,L2A=2,L2B=1"
X5="$B,UNI=1,SNAKE=1,L2A=2,L2B=1"
X6="$B,UNI=1,SNAKE=1,L2B=1"
X7="$B,UNI=1,SNAKE=0,PFD=1"
X8="BM=256,BN=128,CN=1,UNI=0,SNAKE=0"          # no cluster, no multicast (for the counts only)
CK="$X1 $X2 $X5 $X7 $B,UNI=1,SNAKE=1,SPLITK=2 BM=256,BN=128,CM=2,UNI=1,SNAKE=1 BM=128,BN=128,TFK=1,UNI=1,SNAKE=1,L2A=2,L2B=1"
if [ "${1:-}" = compile ]; then   # `run_s9.sh compile` (no GPU): every configuration's cubin into CUBIN_DIR
  $P compile 2 $X0 $X1 $X2 $X3 $X4 $X5 $X6 $X7 $X8 $CK; exit $?
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1;
  ncu --version | tail -1; } > $O/env.txt 2>&1
cat $O/env.txt
( export CPATH=$PWD/../../.dev/include LIBRARY_PATH=$PWD/../../.dev/lib
  timeout 120 nice make -j14 all build/run_tests > $O/build.log 2>&1; echo "build rc $? at $(( $(date +%s) - T0 )) s" >> $O/build.log ) &
BUILD=$!
if ! $P compile 2 >/dev/null 2>&1; then
  echo "prebuilt proto does not run: building"; nvcc -O2 -std=c++17 -arch=sm_90 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas || exit 1; P=./proto
fi
MET=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lrc__lts2lrc_sectors_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum,gpu__time_duration.sum,gpc__cycles_elapsed.max
for sh in "8192 8192 8192" "4096 4096 4096"; do
  tag=${sh// /x}
  step "ncu $tag"
  timeout 38 ncu --clock-control none --metrics $MET --print-units base -k regex:'^tcgemm$|xmma|nvjet|cutlass' --csv \
    --log-file $O/ncu_$tag.csv $P prof 2 $sh $X0 $X1 $X2 $X3 $X4 $X5 $X6 $X7 $X8 > $O/ncu_$tag.out 2>&1
  echo "ncu rc $?"; grep -E "^prof|rror" $O/ncu_$tag.out | head -12
done
python3 - $O <<'EOF'
import csv, sys, os
o = sys.argv[1]
for tag in ("8192x8192x8192", "4096x4096x4096"):
    rows = []
    for f in (os.path.join(o, "ncu_%s.csv" % tag), os.path.join(o, "ncu_%s.out" % tag)):
        if os.path.exists(f):
            rows = [r for r in csv.reader(open(f, errors="replace")) if len(r) > 5]
            if rows and rows[0][0] == "ID": break
            rows = []
    if not rows: print("NCU %s: no csv" % tag); continue
    h = rows[0]; iid, ik, im, iv = h.index("ID"), h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
    ks = {}
    for r in rows[1:]:
        ks.setdefault(int(r[iid]), {"name": r[ik]})[r[im]] = float(r[iv].replace(",", ""))
    print("NCU %s: #i kernel | DRAM rd MB | L2 tex rd Msec | tex req M | lrc rd Msec | fabric Msec | L2 all Msec | us | GHz" % tag)
    for i in sorted(ks):
        d = ks[i]; g = lambda k: d.get(k, float("nan"))
        t = g("gpu__time_duration.sum")
        print("NCU %s: #%d %-12s | %8.1f | %7.2f | %6.2f | %7.2f | %6.2f | %7.2f | %8.1f | %.3f" % (tag, i, d["name"][:12],
              g("dram__bytes_read.sum") / 1e6, g("lts__t_sectors_srcunit_tex_op_read.sum") / 1e6,
              g("lts__t_requests_srcunit_tex_op_read.sum") / 1e6, g("lrc__lts2lrc_sectors_op_read.sum") / 1e6,
              g("lts__t_sectors_srcunit_ltcfabric.sum") / 1e6, g("lts__t_sectors.sum") / 1e6, t / 1e3,
              g("gpc__cycles_elapsed.max") / t if t > 0 else 0))
EOF
step "check"
timeout 30 $P check 2 $CK > $O/check.txt 2>&1; echo "check rc $?: ok lines $(grep -c ' ok ' $O/check.txt)"
grep -E "FAIL|CHECK|failed|rror" $O/check.txt | tail -6
C="$X0 $X1 $X3 $X5"
step "rounds 8192"
timeout 40 $P rounds 2 8192 8192 8192 12 $C > $O/r8192.txt 2>&1
step "rounds 4096"
timeout 25 $P rounds 2 4096 4096 4096 12 $C > $O/r4096.txt 2>&1
grep -h -E "^ROUNDS|FAIL" $O/r8192.txt $O/r4096.txt | cut -c1-60,100-
step "tests (waiting for the build)"
wait $BUILD; tail -2 $O/build.log
if [ "$(left)" -gt 20 ]; then
  timeout $(( $(left) - 8 )) build/run_tests tcgemm > $O/tests.log 2>&1; echo "tests rc $?"; tail -3 $O/tests.log
fi
step "other shapes"
C4="$X0 $X1 $X3"
for sh in "2048 2048 2048" "8192 8192 1024" "1024 8192 8192" "8192 1024 8192" "16384 16384 512" "4097 4097 4097"; do
  [ "$(left)" -gt 9 ] || { echo "skipped $sh: deadline"; continue; }
  WARM_MS=100 timeout $(( $(left) - 2 )) $P rounds 2 $sh 5 $C4 >> $O/rother.txt 2>&1
done
grep -h -E "^ROUNDS|FAIL" $O/rother.txt | cut -c1-60,100-
step "done"
