// tcgemm.cu: the tensor-core GEMM family, C = alpha*A*B + beta*C, row-major, BF16/FP16 inputs
// (C of the input type) or TF32 from FP32 data (FP32 C), FP32 accumulation; PATH 90 = sm_90a kernel.
//
// PATH 90 (compile with NVRTC -arch=sm_90a): a persistent, warp-specialized kernel. Warpgroup 0
// is the producer: one elected thread brings A and B tiles with TMA (cp.async.bulk.tensor, 128-byte
// swizzle) into a STAGES-deep ring, each stage guarded by a full/empty mbarrier pair; with a
// thread-block cluster of CM x CN CTAs the A tile is shared by the CN CTAs of a cluster row and the
// B tile by the CM CTAs of a cluster column (each loads a slice and multicasts it). Warpgroups
// 1..WG are consumers issuing wgmma.mma_async from shared memory; setmaxnreg moves registers from
// the producer to them. The epilogue applies alpha and beta to the FP32 accumulators and rounds
// once at the store, guarded at the edges (any m, n); beta == 0 never reads C.
//
// Host contract (bench/tc/t9_host.h builds it): tensor maps over A (dims {k, m}, box {128/ES,
// BM/CN}) and B (dims {n, k}, box {128/ES, BK/CM}), 128-byte swizzle, so row strides must be
// multiples of 16 bytes and bases 16-byte aligned (else the host packs the operand first with
// t9_pack); zero fill of out-of-range boxes makes ragged m, n, k correct with no special loop.
//
// Types: 16-bit inputs compute D = A*B with A K-major and B N-major (wgmma transposes B). TF32
// needs both wgmma operands K-major, so it computes D^T = B^T * A^T: the B tile (N-major in
// shared memory) is read into registers as wgmma's A operand, the A tile is the K-major B operand.
// TF32 rounding: the FP32 inputs go to the tensor cores unchanged, which read the top 19 bits:
// each input is TRUNCATED to TF32 (toward zero). A reference must truncate the same way.
//
// Verification rule (used by bench/tc/proto.cu, to be used by the family's tests):
//   ||C - C_ref||_F / ||C_ref||_F <= 2 * u_out + 4 * sqrt(k) * 2^-24,
//   u_out = 2^-8 (BF16 C), 2^-11 (FP16 C), 2^-24 (FP32 C), C_ref = float64 product of the same
//   rounded (TF32: truncated) inputs plus beta*C0, not rounded; NaN anywhere fails.

// ---- tunables (the host passes every one as -D) ----
#ifndef TYPE
#define TYPE 0          // input type: 0 BF16, 1 FP16 (C of the same type), 2 TF32 math on FP32 data (FP32 C)
#endif
#ifndef PATH
#define PATH 90         // 90: wgmma + TMA + mbarriers + clusters (sm_90a); 80: mma.sync (sm_80, other file)
#endif
#ifndef BM
#define BM 128          // block tile rows of C: 64*WG*i (16-bit), any multiple of 8 in 64..256 (TF32: wgmma N)
#endif
#ifndef BN
#define BN 256          // block tile columns of C: 64, 128, 192, 256 (16-bit: wgmma N); TF32: 64*WG*i
#endif
#ifndef BK
#define BK 64           // K depth of one stage: 64 or 128 (16-bit), 32 or 64 (TF32); multiple of 8*CM
#endif
#ifndef STAGES
#define STAGES 4        // pipeline depth (2..8), limited by 227 KB of shared memory
#endif
#ifndef WG
#define WG 2            // consumer warpgroups (1, 2, 3); each owns BM/WG rows (TF32: BN/WG columns)
#endif
#ifndef CM
#define CM 1            // cluster rows (1, 2, 4): CTAs along M sharing (multicasting) one B tile
#endif
#ifndef CN
#define CN 1            // cluster columns (1, 2, 4): CTAs along N sharing one A tile; CM*CN <= 8
#endif
#ifndef RASTER
#define RASTER 0        // tile order: 0 along rows first (n fastest), 1 along columns first (m fastest)
#endif
#ifndef GROUP
#define GROUP 8         // tile swizzle: this many cluster-tile rows (RASTER 1: columns) walked together; 1 = off
#endif
#ifndef SPLITK
#define SPLITK 1        // K slices (1..16): >1 writes FP32 partials to a workspace, t9_splitk_reduce sums them
#endif
#ifndef PING
#define PING 0          // PATH 90: 1 = pingpong: each consumer warpgroup owns whole tiles (BM x BN), taking
                        // turns, so one's epilogue overlaps the other's MMAs; 0 = WG split one tile
#endif
#ifndef VEC
#define VEC 2           // epilogue: 1 scalar stores, 2 pairs (16-bit C, when ldc and C allow), 8 (16-bit, PATH 90):
                        // C staged in shared memory, written by asynchronous TMA stores (beta == 0, aligned C)
#endif

#define TC_CDIV(a, b) (((a) + (b) - 1) / (b))

// t9_pack (any PATH): copies a rows x cols matrix (element size es bytes, leading dimension lds)
// into dst with leading dimension ldd >= cols (ldd * es a multiple of 16), zero-filling columns
// cols..ldd-1, so that TMA sees 16-byte aligned rows. Grid (ceil(ldd*es/16 / 256), rows): one
// thread per 16-byte word of a destination row.
extern "C" __global__ void t9_pack(const void *__restrict__ src, long long lds, void *__restrict__ dst,
                                   long long ldd, int rows, int cols, int es)
{
    int w = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
    int per = 16 / es;                  // elements per 16-byte word
    if ((long long)w * per >= ldd || r >= rows)
        return;
    int c = w * per;
    unsigned v[4];
    if (es == 4) {
        const float *s = (const float *)src + r * lds;
        for (int i = 0; i < 4; i++)
            v[i] = c + i < cols ? __float_as_uint(s[c + i]) : 0u;
    } else {
        const unsigned short *s = (const unsigned short *)src + r * lds;
        for (int i = 0; i < 4; i++) {
            unsigned lo = c + 2 * i < cols ? s[c + 2 * i] : 0u, hi = c + 2 * i + 1 < cols ? s[c + 2 * i + 1] : 0u;
            v[i] = lo | (hi << 16);
        }
    }
    unsigned *d = (unsigned *)((char *)dst + r * ldd * es) + 4 * w;
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(d), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
}

// t9_splitk_reduce (any PATH): C = alpha * sum of SPLITK partials + beta * C (beta == 0: C unread);
// partials are FP32 m x n, row-major, one after another in ws.
#if TYPE == 2
typedef float tc_out_t;
#else
typedef unsigned short tc_out_t;
#endif

__device__ __forceinline__ float tc_to_f32(tc_out_t v)
{
#if TYPE == 2
    return v;
#elif TYPE == 0
    return __uint_as_float((unsigned)v << 16);
#else
    float f;
    asm("{ .reg .b16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(v));
    return f;
#endif
}

__device__ __forceinline__ tc_out_t tc_from_f32(float f)
{
#if TYPE == 2
    return f;
#elif TYPE == 0
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#endif
}

// Two FP32 values to one packed 16-bit pair (lo at the lower address).
__device__ __forceinline__ unsigned tc_pack2(float lo, float hi)
{
    unsigned r;
#if TYPE == 0
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

extern "C" __global__ void t9_splitk_reduce(const float *__restrict__ ws, tc_out_t *__restrict__ C,
                                            int m, int n, long long ldc, float alpha, float beta)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long mn = (long long)m * n;
    if (i >= mn)
        return;
    float s = 0.0f;
    for (int z = 0; z < SPLITK; z++)
        s += ws[z * mn + i];
    long long r = i / n, c = i - r * n;
    tc_out_t *p = C + r * ldc + c;
    float v = alpha * s;
    if (beta != 0.0f)
        v += beta * tc_to_f32(*p);
    *p = tc_from_f32(v);
}

#if PATH == 90
#if TYPE == 2
#define T9_ES 4         // bytes per input element
#define T9_KSTEP 8      // K of one wgmma
#define T9_WN BM        // wgmma N: the A tile's rows (D^T = B^T A^T)
#define T9_WP (PING ? BN : BN / WG) // C columns per consumer warpgroup
#else
#define T9_ES 2
#define T9_KSTEP 16
#define T9_WN BN        // wgmma N: the B tile's columns
#define T9_WP (PING ? BM : BM / WG) // C rows per consumer warpgroup
#endif
#if TYPE == 0
#define T9_PTXT "bf16"
#elif TYPE == 1
#define T9_PTXT "f16"
#else
#define T9_PTXT "tf32"   // t9_mma is unused for TF32 (t9_mma_tf32 instead)
#endif
#define T9_BOXE (128 / T9_ES)           // elements in one 128-byte swizzled row
#define T9_MI (T9_WP / 64)              // wgmma (m64) instructions per K step per warpgroup
#define T9_A_BYTES (BM * BK * T9_ES)
#define T9_B_BYTES (BK * BN * T9_ES)
#define T9_STAGE_BYTES (T9_A_BYTES + T9_B_BYTES)
#define T9_CL (CM * CN)
#define T9_OWN (PING ? 1 : WG)         // consumer warpgroups reading each stage
#define T9_THREADS ((WG + 1) * 128)
#if VEC == 8 && TYPE != 2
#define T9_C_BYTES (BM * BN * 2)        // C staging for the TMA-store epilogue
#else
#define T9_C_BYTES 0
#endif
#define T9_SMEM_BYTES (STAGES * T9_STAGE_BYTES + T9_C_BYTES + 1024 + 2 * STAGES * 8)

#if BK % T9_BOXE != 0 || T9_WP % 64 != 0 || BN % T9_BOXE != 0 || BM % (8 * CN) != 0 || BK % (8 * CM) != 0
#error "tcgemm PATH 90: illegal tile (BK, BN multiples of 128 bytes; BM/WG or BN/WG (TF32) multiple of 64)"
#endif
#if T9_WN != 64 && T9_WN != 128 && T9_WN != 192 && T9_WN != 256
#error "tcgemm PATH 90: wgmma N (BN, TF32: BM) must be 64, 128, 192 or 256"
#endif
#if VEC == 8 && TYPE != 2 && (PING || SPLITK > 1 || BN % 64 != 0)
#error "tcgemm PATH 90: VEC 8 (TMA-store epilogue) needs PING 0, SPLITK 1"
#endif
#if T9_CL > 8 || STAGES < 2
#error "tcgemm PATH 90: cluster at most 8 CTAs, at least 2 stages"
#endif

// TMA tensor map (CUtensorMap: 128 bytes, 64-byte aligned), passed by value as __grid_constant__
struct __align__(64) t9_tmap { unsigned long long v[16]; };

// ---- wgmma wrappers (generated: one per wgmma N; T9_ACC = FP32 accumulators per thread) ----
#if T9_WN == 64
#define T9_ACC 32
// d += A * B on a 64 x 64 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." T9_PTXT "." T9_PTXT "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif
#if T9_WN == 128
#define T9_ACC 64
// d += A * B on a 64 x 128 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." T9_PTXT "." T9_PTXT "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif
#if T9_WN == 192
#define T9_ACC 96
// d += A * B on a 64 x 192 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32." T9_PTXT "." T9_PTXT "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, {%96, %97, %98, %99}, %100, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif
#if T9_WN == 256
#define T9_ACC 128
// d += A * B on a 64 x 256 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." T9_PTXT "." T9_PTXT "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif

// ---- PTX helpers (sm_90) ----
__device__ __forceinline__ unsigned t9_smem_addr(const void *p)
{
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ void t9_bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count));
}

__device__ __forceinline__ void t9_bar_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

// Waits until the phase of the given parity of the barrier has completed (spins on try_wait).
__device__ __forceinline__ void t9_bar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nT9_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra T9_WAIT;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}

// Arrives once on the barrier at the same offset in CTA `rank` of the cluster (itself included).
__device__ __forceinline__ void t9_bar_arrive_cta(unsigned bar, unsigned rank)
{
#if T9_CL == 1
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
#else
    asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [r];\n}\n"
                 :: "r"(bar), "r"(rank) : "memory");
#endif
}

// TMA: a 2D box at {c0 (inner), c1} of the tensor map into shared memory at dst, completing on
// bar; with mask != 0 the same box lands at dst in every CTA of the cluster named by mask.
__device__ __forceinline__ void t9_tma(const void *map, unsigned dst, unsigned bar, int c0, int c1,
                                       unsigned short mask)
{
#if T9_CL == 1
    (void)mask;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1) : "memory");
#else
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%3, %4}], [%2], %5;"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
#endif
}

// wgmma shared-memory descriptor, 128-byte swizzle: lbo/sbo in bytes (address of a 1024-byte
// aligned atom plus an offset inside its first row).
__device__ __forceinline__ unsigned long long t9_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16)
         | ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void t9_fence_acc(float *d)
{
#pragma unroll
    for (int i = 0; i < T9_ACC; i++)
        asm volatile("" : "+f"(d[i]) :: "memory");
}

__device__ __forceinline__ void t9_cluster_sync()
{
#if T9_CL > 1
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
}

// Cluster tile t -> its (row, column) in cluster tiles, by RASTER and GROUP (see the tunables).
__device__ __forceinline__ void t9_tile(int t, int sm, int sn, int *pm, int *pn)
{
#if RASTER == 0
    int rows = sm, cols = sn;
#else
    int rows = sn, cols = sm;
#endif
    int per = GROUP * cols, g = t / per, first = g * GROUP;
    int in = rows - first < GROUP ? rows - first : GROUP;
    int r = first + (t - g * per) % in, c = (t - g * per) / in;
#if RASTER == 0
    *pm = r; *pn = c;
#else
    *pm = c; *pn = r;
#endif
}

// Epilogue store of one value (scalar) or an adjacent pair (VEC 2) at (r, c), guarded.
__device__ __forceinline__ void t9_st1(tc_out_t *C, long long ldc, int m, int n, int r, int c,
                                       float v, float alpha, float beta)
{
    if (r < m && c < n) {
        tc_out_t *p = C + (long long)r * ldc + c;
        float o = alpha * v;
        if (beta != 0.0f)
            o += beta * tc_to_f32(*p);
        *p = tc_from_f32(o);
    }
}

#if TYPE != 2
__device__ __forceinline__ void t9_st2(tc_out_t *C, long long ldc, int m, int n, int r, int c,
                                       float v0, float v1, float alpha, float beta, int vec_ok)
{
    if (r >= m)
        return;
#if VEC == 2
    if (vec_ok && c + 1 < n) {
        unsigned *p = (unsigned *)(C + (long long)r * ldc + c);
        float o0 = alpha * v0, o1 = alpha * v1;
        if (beta != 0.0f) {
            unsigned old = *p;
            o0 += beta * tc_to_f32((tc_out_t)(old & 0xFFFF));
            o1 += beta * tc_to_f32((tc_out_t)(old >> 16));
        }
        *p = tc_pack2(o0, o1);
        return;
    }
#endif
    (void)vec_ok;
    t9_st1(C, ldc, m, n, r, c, v0, alpha, beta);
    t9_st1(C, ldc, m, n, r, c + 1, v1, alpha, beta);
}
#endif

// The kernel. Grid: a whole number of clusters (<= the number that fit at once), each walking
// cluster tiles t = cluster, cluster + clusters, ... (times SPLITK K slices). vec_ok: bit 0, C base
// and ldc allow paired stores; bit 1 (VEC 8), tmC maps C (dims {n, m}, box {64, BM/WG (PING: BM)},
// 128-byte swizzle) and beta == 0: the TMA-store epilogue; bit 2 (VEC 8), beta == 0 but C not
// TMA-able: staged, then row-contiguous stores. ws: SPLITK > 1 workspace, else unused.
extern "C" __global__ void __launch_bounds__(T9_THREADS, 1)
#if T9_CL > 1
__cluster_dims__(T9_CL, 1, 1)
#endif
tcgemm(const __grid_constant__ t9_tmap tmA, const __grid_constant__ t9_tmap tmB,
       const __grid_constant__ t9_tmap tmC, tc_out_t *__restrict__ C, int m, int n, int k, long long ldc,
       float alpha, float beta, int vec_ok, float *__restrict__ ws)
{
    extern __shared__ unsigned char t9_raw[];
    unsigned base = (t9_smem_addr(t9_raw) + 1023) & ~1023u;
    unsigned bars = base + STAGES * T9_STAGE_BYTES + T9_C_BYTES;   // full[s] at bars + 8s, empty[s] at bars + 8(STAGES+s)
    int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    unsigned rank = 0;
#if T9_CL > 1
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
#endif
    int cm = rank % CM, cn = rank / CM;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            t9_bar_init(bars + 8 * s, 1);
            t9_bar_init(bars + 8 * (STAGES + s), T9_OWN * (CM + CN - 1));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    t9_cluster_sync();

    int tm = TC_CDIV(m, BM), tn = TC_CDIV(n, BN);
    int sm = TC_CDIV(tm, CM), sn = TC_CDIV(tn, CN);
    int units = sm * sn * SPLITK;
    int kt_all = TC_CDIV(k, BK), kt_per = TC_CDIV(kt_all, SPLITK);
    int cluster = blockIdx.x / T9_CL, clusters = gridDim.x / T9_CL;

    if (wg == 0) {
        // ---- producer ----
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            unsigned short maskA = 0, maskB = 0;   // A: same cm (a cluster row); B: same cn
            for (int j = 0; j < CN; j++) maskA |= (unsigned short)(1u << (cm + j * CM));
            for (int i = 0; i < CM; i++) maskB |= (unsigned short)(1u << (i + cn * CM));
            int s = 0;
            unsigned ph = 0;
            for (int u = cluster; u < units; u += clusters) {
                int t = u / SPLITK, z = u - t * SPLITK, pm, pn;
                t9_tile(t, sm, sn, &pm, &pn);
                int m0 = (pm * CM + cm) * BM, n0 = (pn * CN + cn) * BN;
                int k0 = z * kt_per, k1 = k0 + kt_per < kt_all ? k0 + kt_per : kt_all;
                for (int kt = k0; kt < k1; kt++) {
                    t9_bar_wait(bars + 8 * (STAGES + s), ph ^ 1);
                    unsigned full = bars + 8 * s;
                    t9_bar_expect(full, T9_STAGE_BYTES);
                    unsigned sa = base + s * T9_STAGE_BYTES, sb = sa + T9_A_BYTES;
#pragma unroll
                    for (int b = 0; b < BK / T9_BOXE; b++)
                        t9_tma(&tmA, sa + b * (BM * 128) + cn * (BM / CN) * 128, full,
                               kt * BK + b * T9_BOXE, m0 + cn * (BM / CN), maskA);
#pragma unroll
                    for (int j = 0; j < BN / T9_BOXE; j++)
                        t9_tma(&tmB, sb + j * (BK * 128) + cm * (BK / CM) * 128, full,
                               n0 + j * T9_BOXE, kt * BK + cm * (BK / CM), maskB);
                    if (++s == STAGES) { s = 0; ph ^= 1; }
                }
            }
        }
    } else {
        // ---- consumers ----
#if WG == 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
#elif WG == 2
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 152;");
#endif
        int c = wg - 1, warp = tid / 32, lane = tid % 32;
        float d[T9_MI][T9_ACC];
        unsigned fr0[T9_MI][BK / 8][4], fr1[T9_MI][BK / 8][4];   // TF32 A fragments, two K steps
#pragma unroll
        for (int i = 0; i < T9_MI; i++)
#pragma unroll
            for (int kk = 0; kk < BK / 8; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    fr0[i][kk][q] = fr1[i][kk][q] = 0u;
        int s = 0, i_unit = 0;
        unsigned ph = 0;
        for (int u = cluster; u < units; u += clusters, i_unit++) {
            int t = u / SPLITK, z = u - t * SPLITK, pm, pn;
            int k0 = z * kt_per, k1 = k0 + kt_per < kt_all ? k0 + kt_per : kt_all;
            if (PING && i_unit % WG != c) {     // the other warpgroup's tile: skip its stages
                int adv = s + (k1 > k0 ? k1 - k0 : 0);
                ph ^= (adv / STAGES) & 1;
                s = adv % STAGES;
                continue;
            }
            t9_tile(t, sm, sn, &pm, &pn);
            int m0 = (pm * CM + cm) * BM, n0 = (pn * CN + cn) * BN;
            int prev = -1;
#if PING
            // the previous tile's owner must have finished its main loop: before that, this
            // warpgroup's full-barrier phases are not the next ones (parity would alias)
            if (i_unit > 0)
                asm volatile("bar.sync %0, 256;" :: "r"(1 + c) : "memory");
#endif
            // One K step: wait for the stage, issue its wgmmas, keep one step in flight, release the
            // previous stage. TF32: fa holds this step's register A fragments, fo the previous
            // step's, still read by its in-flight wgmmas until the wait below (so the two are never
            // the same registers: the loop is unrolled by two and fo is fenced after the wait).
            auto step = [&](int kt, unsigned (&fa)[T9_MI][BK / 8][4], unsigned (&fo)[T9_MI][BK / 8][4]) {
                t9_bar_wait(bars + 8 * s, ph);
                unsigned sa = base + s * T9_STAGE_BYTES, sb = sa + T9_A_BYTES;
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
                    t9_fence_acc(d[i]);
#if TYPE != 2
                (void)fa;
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int kk = 0; kk < BK / 16; kk++) {
                    unsigned long long db = t9_desc(sb + kk * 2048, BK * 128, 1024);
#pragma unroll
                    for (int i = 0; i < T9_MI; i++) {
                        unsigned aa = sa + (kk / 4) * (BM * 128) + ((PING ? 0 : c * T9_WP) + i * 64) * 128 + (kk % 4) * 32;
                        t9_mma(d[i], t9_desc(aa, 16, 1024), db, kt > k0 || kk > 0);
                    }
                }
#else
                // A fragments (64 x 8 of B^T per k8: rows p = C columns, cols = k) go to registers, and
                // wgmma.fence orders those register writes before the wgmmas that read them. T9_TFO
                // (internal, measured in bench/notes_tcgemm.md): 0 = per k8 load, fence, wgmma (the next
                // loads run under this wgmma); 1 = the whole stage's loads, one fence, the wgmmas;
                // 2 = one fence per stage ahead of the loads (the register-write ordering then rests on
                // the hardware scoreboard alone: not what the PTX ISA promises)
#ifndef T9_TFO
#define T9_TFO 0
#endif
#if T9_TFO == 2
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int kk = 0; kk < BK / 8; kk++) {
#pragma unroll
                        for (int q = 0; q < 4; q++) {
                            int p = (PING ? 0 : c * T9_WP) + i * 64 + warp * 16 + lane / 4 + (q & 1) * 8;
                            int kc = kk * 8 + lane % 4 + (q >> 1) * 4;
                            unsigned ad = sb + (p / 32) * (BK * 128) + kc * 128
                                        + ((((p % 32) / 4) ^ (kc % 8)) * 16) + (p % 4) * 4;
                            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(fa[i][kk][q]) : "r"(ad) : "memory");
                        }
#if T9_TFO == 0
                        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
#if T9_TFO != 1
                        t9_mma_tf32(d[i], fa[i][kk], t9_desc(sa + (kk / 4) * (BM * 128) + (kk % 4) * 32, 16, 1024),
                                    kt > k0 || kk > 0);
#endif
                    }
#if T9_TFO == 1
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int kk = 0; kk < BK / 8; kk++)
                        t9_mma_tf32(d[i], fa[i][kk], t9_desc(sa + (kk / 4) * (BM * 128) + (kk % 4) * 32, 16, 1024),
                                    kt > k0 || kk > 0);
#endif
#endif
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
                    t9_fence_acc(d[i]);
#if TYPE == 2
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int kk = 0; kk < BK / 8; kk++)
#pragma unroll
                        for (int q = 0; q < 4; q++)
                            asm volatile("" : "+r"(fo[i][kk][q]) :: "memory");
#else
                (void)fo;
#endif
                if (prev >= 0 && tid < T9_CL) {
                    unsigned r = tid;
                    if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                        t9_bar_arrive_cta(bars + 8 * (STAGES + prev), r);
                }
                prev = s;
                if (++s == STAGES) { s = 0; ph ^= 1; }
            };
            for (int kt = k0; kt < k1; kt += 2) {
                step(kt, fr0, fr1);
                if (kt + 1 < k1)
                    step(kt + 1, fr1, fr0);
            }
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
            for (int i = 0; i < T9_MI; i++)
                t9_fence_acc(d[i]);
#if TYPE == 2
#pragma unroll
            for (int i = 0; i < T9_MI; i++)
#pragma unroll
                for (int kk = 0; kk < BK / 8; kk++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        asm volatile("" : "+r"(fr0[i][kk][q]), "+r"(fr1[i][kk][q]) :: "memory");
#endif
#if PING
            if (u + clusters < units)       // hand the ring to the next tile's owner
                asm volatile("bar.arrive %0, 256;" :: "r"(1 + (c + 1) % WG) : "memory");
#endif
            if (prev >= 0 && tid < T9_CL) {
                unsigned r = tid;
                if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                    t9_bar_arrive_cta(bars + 8 * (STAGES + prev), r);
            }
            if (k1 <= k0) {                 // empty K slice: its partial is zero
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int j = 0; j < T9_ACC; j++)
                        d[i][j] = 0.0f;
            }
#if T9_C_BYTES > 0 && SPLITK == 1
            if (vec_ok & 6) {
                // stage alpha*acc (rounded) in this warpgroup's 128-byte-swizzled boxes of 64 columns,
                // then one thread stores them with TMA; the stores overlap the next tile's main loop
                unsigned cs = base + STAGES * T9_STAGE_BYTES + (PING ? 0 : c) * (T9_WP * BN * 2);
                if (tid == 0)
                    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
#pragma unroll
                for (int i = 0; i < T9_MI; i++) {
#pragma unroll
                    for (int j = 0; j < T9_ACC / 4; j++) {
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            int r = i * 64 + warp * 16 + lane / 4 + h * 8, col = j * 8 + (lane % 4) * 2;
                            unsigned ad = cs + (col / 64) * (T9_WP * 128) + r * 128
                                        + ((((col % 64) / 8) ^ (r % 8)) * 16) + (col % 8) * 2;
                            unsigned v = tc_pack2(alpha * d[i][4 * j + 2 * h], alpha * d[i][4 * j + 2 * h + 1]);
                            asm volatile("st.shared.b32 [%0], %1;" :: "r"(ad), "r"(v) : "memory");
                        }
                    }
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
                if (!(vec_ok & 2)) {
                    // C not TMA-able (unaligned ldc or base): row-contiguous 2-byte stores from the staging
                    int rbase = m0 + (PING ? 0 : c * T9_WP);
                    for (int e = tid; e < T9_WP * BN; e += 128) {
                        int r = e / BN, col = e % BN;
                        unsigned ad = cs + (col / 64) * (T9_WP * 128) + r * 128
                                    + ((((col % 64) / 8) ^ (r % 8)) * 16) + (col % 8) * 2;
                        unsigned short v;
                        asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(ad));
                        if (rbase + r < m && n0 + col < n)
                            C[(long long)(rbase + r) * ldc + n0 + col] = v;
                    }
                    continue;
                }
                if (tid == 0) {
#pragma unroll
                    for (int b = 0; b < BN / 64; b++)
                        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                                     :: "l"(&tmC), "r"(cs + b * (T9_WP * 128)), "r"(n0 + b * 64),
                                        "r"(m0 + (PING ? 0 : c * T9_WP)) : "memory");
                    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
                }
                continue;
            }
#endif
            // ---- epilogue: fragment (warp, lane) holds rows g, g+8 and column pairs of each n8 ----
#pragma unroll
            for (int i = 0; i < T9_MI; i++) {
                int g = (PING ? 0 : c * T9_WP) + i * 64 + warp * 16 + lane / 4;
#pragma unroll
                for (int j = 0; j < T9_ACC / 4; j++) {
                    int q = j * 8 + (lane % 4) * 2;
#if TYPE != 2
                    int r0 = m0 + g, c0 = n0 + q;
#else
                    int r0 = m0 + q, c0 = n0 + g;   // D^T: rows of the fragment are C columns
#endif
                    if (SPLITK > 1) {
                        float *w = ws + (long long)z * m * n;
#if TYPE != 2
                        if (r0 < m && c0 < n) w[(long long)r0 * n + c0] = d[i][4 * j];
                        if (r0 < m && c0 + 1 < n) w[(long long)r0 * n + c0 + 1] = d[i][4 * j + 1];
                        if (r0 + 8 < m && c0 < n) w[(long long)(r0 + 8) * n + c0] = d[i][4 * j + 2];
                        if (r0 + 8 < m && c0 + 1 < n) w[(long long)(r0 + 8) * n + c0 + 1] = d[i][4 * j + 3];
#else
                        if (r0 < m && c0 < n) w[(long long)r0 * n + c0] = d[i][4 * j];
                        if (r0 + 1 < m && c0 < n) w[(long long)(r0 + 1) * n + c0] = d[i][4 * j + 1];
                        if (r0 < m && c0 + 8 < n) w[(long long)r0 * n + c0 + 8] = d[i][4 * j + 2];
                        if (r0 + 1 < m && c0 + 8 < n) w[(long long)(r0 + 1) * n + c0 + 8] = d[i][4 * j + 3];
#endif
                        continue;
                    }
#if TYPE != 2
                    t9_st2(C, ldc, m, n, r0, c0, d[i][4 * j], d[i][4 * j + 1], alpha, beta, vec_ok & 1);
                    t9_st2(C, ldc, m, n, r0 + 8, c0, d[i][4 * j + 2], d[i][4 * j + 3], alpha, beta, vec_ok & 1);
#else
                    (void)vec_ok;
                    t9_st1(C, ldc, m, n, r0, c0, d[i][4 * j], alpha, beta);
                    t9_st1(C, ldc, m, n, r0 + 1, c0, d[i][4 * j + 1], alpha, beta);
                    t9_st1(C, ldc, m, n, r0, c0 + 8, d[i][4 * j + 2], alpha, beta);
                    t9_st1(C, ldc, m, n, r0 + 1, c0 + 8, d[i][4 * j + 3], alpha, beta);
#endif
                }
            }
        }
#if T9_C_BYTES > 0
        if (tid == 0)
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");   // C stores complete
#endif
    }
    t9_cluster_sync();      // no CTA leaves while a peer may still signal or write its shared memory
}
#endif  // PATH == 90
