#!/bin/sh
# make-schema1-db.sh: writes tests/data/schema1-fake-tuning.db with the release
# whose database has schema version 1 (commit dc67c42), through its fake tuner.
# usage: tests/data/make-schema1-db.sh RELEASE_BUILD_DIR OUT.db
#   RELEASE_BUILD_DIR: `make all build/autotune-test` in a checkout of dc67c42
set -eu
rel=$1
out=$2
rm -f "$out" "$out-wal" "$out-shm"
seed=0
tune() {
    # tune DEVICE KERNEL SIZE EVALS [FAKE]: a random search, its own seed
    seed=$((seed + 1))
    AUTOTUNE_WORKER="$rel/autotune-test __fake_worker" AUTOTUNE_FAKE="${5:-}" \
        "$rel/autotune-test" --device "$1" --kernel "$2" --size "$3" --db "$out" \
        --strategy random --budget "$4"e --seed "$seed" --quiet > /dev/null
}
# device 0 (GPU-fa4e...0000, sm_90): two sizes of every family. The fake
# worker's time depends on the configuration alone, so the winner of one
# size would win every size: `wrong=` marks it wrong elsewhere, giving each
# size of a family its own best.
sum_best=STYLE=1,FINISH=0,BLOCK=1024,ITEMS=1,VEC=1,GRID=0,UNROLL=1
jac_best=ROW_THREADS=1,ROWS_PER_BLOCK=256,VEC=1,UNROLL=4,XCACHE=1,CHECK_EVERY=25,ORDER=1
mm_tiled=ALGO=1,TILE=16,UNROLL=1,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1
mm_tiled=$mm_tiled,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0
tune 0 sum 1048576 8
tune 0 sum 65536 8 "wrong=$sum_best"
tune 0 dot 16777216 8 "wrong=STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=4,GRID=2,UNROLL=1"
tune 0 dot 4096 6 "wrong=$sum_best"
tune 0 jacobi 1024 8
tune 0 jacobi 8192 6 "wrong=$jac_best"
tune 0 matmul 1024x1024x1024 7
tune 0 matmul 4096x4096x128 6
# device 1 (GPU-fa4e...0001, the same architecture): one size of two families
tune 1 sum 1048576 6 "wrong=$sum_best"
tune 1 matmul 2048x2048x2048 6 "wrong=$mm_tiled"
# Keep the file small: the cubins of every problem but sum 65536 go (the
# lookup reads no cubin; the kept ones show the binary table survives).
sqlite3 "$out" "DELETE FROM binary WHERE key NOT IN (SELECT r.binary_key FROM result r
    JOIN problem p ON p.id = r.problem_id WHERE p.kernel = 'sum' AND p.d0 = 65536);
    VACUUM; PRAGMA wal_checkpoint(TRUNCATE);"
