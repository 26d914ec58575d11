/* test_gemm_api.c: the typed GEMM entry point at_gemm and the handle's math
 * mode: routing by type and math, orders and transposes (the column-major
 * mapping and the leading-dimension rules on the CPU), results against a
 * float64 host reference. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "th_gemm.h"
#include "th_half.h"
#include "tpl.h"


GPU_TEST(gemm_api_every_type_odd_shapes_unaligned)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    static const at_dtype types[] = {AT_R_16BF, AT_R_16F, AT_R_32F};
    static const th_gemm_case shapes[] = {
        /* m, n, k, lda, ldb, ldc, offset, alpha, beta, nan_c, order, ops */
        {0, 0, 1, 1, 1, 1, 1, 1, 0, 1.0, 0.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 7, 13, 5, 5, 13, 13, 0, 1.0, 0.0, 1, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 129, 65, 33, 35, 67, 70, 1, -0.5, 0.75, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 256, 192, 320, 320, 192, 192, 0, 1.0, 0.0, 1, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 301, 257, 263, 263, 257, 261, 3, 2.0, -1.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 64, 1000, 17, 24, 1000, 1003, 0, 1.0, 1.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
    };
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            th_gemm_case c = shapes[i];
            c.type = types[t];
            c.tf32 = types[t] == AT_R_32F;
            double err = 0;
            int padding_ok = 0;
            at_status s = th_gemm_run(&g, h, &c, &err, &padding_ok);
            CHECK_MSG(s == AT_OK, "type %d %dx%dx%d: %s: %s", (int)c.type, c.m, c.n, c.k,
                      at_status_string(s), at_errmsg(h));
            CHECK_MSG(err <= th_gemm_tolerance(c.type, c.k), "type %d %dx%dx%d lda %d ldb %d "
                      "ldc %d offset %d: error %.3g > %.3g", (int)c.type, c.m, c.n, c.k, c.lda,
                      c.ldb, c.ldc, c.offset, err, th_gemm_tolerance(c.type, c.k));
            CHECK_MSG(padding_ok, "type %d %dx%dx%d wrote C's padding", (int)c.type, c.m, c.n,
                      c.k);
            at_stats st;
            CHECK_OK(at_get_stats(h, &st));
            /* the tensor-core family (its TYPE 0 BF16, 1 FP16, 2 TF32), or the skinny family
             * for the small shapes it claims; never the FP32 family */
            char want[16];
            snprintf(want, sizeof want, "TYPE=%d", t);
            CHECK_MSG((strcmp(st.last_kernel, "tcgemm") == 0 &&
                       strstr(st.last_config, want) != NULL) ||
                          strcmp(st.last_kernel, "skinny") == 0,
                      "type %d ran %s %s", (int)c.type, st.last_kernel, st.last_config);
        }
    }
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

GPU_TEST(gemm_api_fp32_is_exact_unless_tf32_is_asked_for)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_math.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    th_gemm_case c = {AT_R_32F, 0, 96, 80, 512, 512, 80, 80, 0, 1.0, 0.0, 0, AT_ROW_MAJOR,
                      AT_OP_N, AT_OP_N};
    double exact_err = 0, tf32_err = 0;
    int padding_ok = 0;
    at_stats st;
    /* default math: a CUDA-core family (matmul, or skinny for this small output), error at
     * FP32 level */
    CHECK_OK(th_gemm_run(&g, h, &c, &exact_err, &padding_ok));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strcmp(st.last_kernel, "matmul") == 0 || strcmp(st.last_kernel, "skinny") == 0,
              "default math ran %s %s", st.last_kernel, st.last_config);
    CHECK_MSG(exact_err < 1e-6, "exact FP32 error %.3g", exact_err);
    /* TF32 on: the tensor-core family (or skinny, rounding to TF32 alike); the same data's
     * error against the unrounded product is at TF32 level (rounding off 13 bits shows) */
    c.tf32 = 1;
    CHECK_OK(th_gemm_run(&g, h, &c, &tf32_err, &padding_ok));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG((strcmp(st.last_kernel, "tcgemm") == 0 && strstr(st.last_config, "TYPE=2")) ||
                  strcmp(st.last_kernel, "skinny") == 0,
              "TF32 math ran %s %s", st.last_kernel, st.last_config);
    CHECK_MSG(tf32_err <= th_gemm_tolerance(AT_R_32F, c.k), "TF32 error %.3g", tf32_err);
    /* at_sgemm ignores the math mode: still exact (never the tensor-core family; the result
     * keeps the low bits TF32 would drop) */
    float *A = malloc(sizeof(float) * 64 * 64), *B = malloc(sizeof(float) * 64 * 64);
    CHECK(A && B);
    for (int i = 0; i < 64 * 64; i++) {
        A[i] = 1.0f + ldexp(1, -20) * (i % 7);        /* low bits TF32 drops */
        B[i] = 1.0f;
    }
    CUdeviceptr dA, dB, dC;
    CHECK(g.cu->MemAlloc(&dA, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemAlloc(&dB, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemAlloc(&dC, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyHtoD(dA, A, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyHtoD(dB, B, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK_OK(at_set_math_mode(h, AT_MATH_TF32));
    CHECK_OK(at_sgemm(h, 64, 64, 64, 1.0f, (const float *)dA, 64, (const float *)dB, 64, 0.0f,
                      (float *)dC, 64));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strcmp(st.last_kernel, "tcgemm") != 0, "at_sgemm ran %s %s", st.last_kernel,
              st.last_config);
    float C[64];
    CHECK(g.cu->CtxSynchronize() == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyDtoH(C, dC, sizeof C) == CUDA_SUCCESS);
    for (int j = 0; j < 64; j++) {
        double ref = 0;
        for (int p = 0; p < 64; p++)
            ref += A[p];                          /* row 0 of A times a column of ones */
        CHECK_MSG(fabs(C[j] - ref) <= 1e-6 * ref, "at_sgemm under TF32 mode: %.9g vs %.9g",
                  C[j], ref);
    }
    g.cu->MemFree(dA);
    g.cu->MemFree(dB);
    g.cu->MemFree(dC);
    free(A);
    free(B);
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

GPU_TEST(gemm_api_refuses_what_it_does_not_compute)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_refuse.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CUdeviceptr d;
    CHECK(g.cu->MemAlloc(&d, 4096) == CUDA_SUCCESS);
    CHECK(g.cu->MemsetD8Async(d, 0x5a, 4096, 0) == CUDA_SUCCESS);
    const void *p = (const void *)(uintptr_t)d;
    void *c = (void *)(uintptr_t)d;
    /* column-major and op T with leading dimensions below the BLAS minimum */
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_N, 6, 4, 4, AT_R_16BF, 1, p, 5, p, 4, 0, c, 6),
             AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "lda") != NULL, "message: %s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_T, AT_OP_N, 6, 4, 4, AT_R_16F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_T, 4, 6, 4, AT_R_32F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_N, 6, 4, 4, AT_R_32F, 1, p, 6, p, 4, 0, c, 5),
             AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "ldc") != NULL, "message: %s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, (at_order)2, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_32F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, (at_op)2, AT_OP_N, 4, 4, 4, AT_R_32F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    /* double follows the same BLAS rules: column-major op T A is stored k x m, lda >= k */
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_T, AT_OP_T, 6, 4, 4, AT_R_64F, 1, p, 3, p, 4, 0, c, 6),
             AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "lda") != NULL, "message: %s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, (at_dtype)9, 1, p, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_16BF, 1, p, 3, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, -1, 4, 4, AT_R_16BF, 1, p, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_16BF, 1, NULL, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_16BF, NAN, p, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_set_math_mode(h, (at_math)7), AT_ERR_INVALID_ARG);
    /* nothing was written by the refused calls */
    unsigned char back[4096];
    CHECK(g.cu->CtxSynchronize() == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyDtoH(back, d, sizeof back) == CUDA_SUCCESS);
    for (size_t i = 0; i < sizeof back; i++)
        CHECK_MSG(back[i] == 0x5a, "byte %zu changed", i);
    g.cu->MemFree(d);
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

TEST(gemm_api_null_handle_and_host_conversions)
{
    CHECK_EQ(at_gemm(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 1, 1, 1, AT_R_16BF, 1, NULL, 1, NULL, 1,
                     0, NULL, 1), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_set_math_mode(NULL, AT_MATH_TF32), AT_ERR_INVALID_ARG);
    /* the test's own conversions, against values worked out by hand */
    CHECK_EQ(th_to_bf16(1.0f), 0x3f80);
    CHECK_EQ(th_to_bf16(1.00390625f), 0x3f80);        /* a tie: rounds to even */
    CHECK_EQ(th_to_bf16(1.01171875f), 0x3f82);        /* a tie: rounds to even (up) */
    CHECK_EQ(th_to_f16(1.0f), 0x3c00);
    CHECK_EQ(th_to_f16(-2.0f), 0xc000);
    CHECK_EQ(th_to_f16(0.333251953125f), 0x3555);
    CHECK((float)th_from_f16(0x3555) == 0.333251953125f);
    CHECK((float)th_from_f16(0x0001) == (float)ldexp(1, -24));
    CHECK(th_gemm_tf32(1.0f + (float)ldexp(1, -11)) == 1.0f);     /* a tie: to even (down) */
    /* a tie: up */
    CHECK(th_gemm_tf32(1.0f + (float)ldexp(3, -11)) == 1.0f + (float)ldexp(1, -9));
    CHECK(th_gemm_tf32(1.0f + (float)ldexp(1, -11) + (float)ldexp(1, -20)) ==
          1.0f + (float)ldexp(1, -10));                        /* above half: up */
    CHECK(th_gemm_tf32(-1.9999999f) == -2.0f);                      /* up into the next binade */
    CHECK(th_gemm_tf32(1.0f + (float)ldexp(1, -10)) == 1.0f + (float)ldexp(1, -10));
}

/* Every type x op_a x op_b x order through at_gemm at odd sizes, unaligned leading
 * dimensions and offsets (16-bit: rows of odd byte length; FP32: pointers one element past
 * a 16-byte boundary), against the float64 host product; exact FP32 and FP64 must run the
 * matmul / dgemm configuration of the canonical ops (column-major swaps them: tpl.h). */
GPU_TEST(gemm_api_every_order_and_transpose)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_ops.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    static const at_dtype types[] = {AT_R_16BF, AT_R_16F, AT_R_32F, AT_R_32F, AT_R_64F};
    static const int sizes[][5] = {
        /* m, n, k, ld padding, offset */
        {129, 65, 33, 3, 1}, {1, 1, 1, 0, 0}, {64, 100, 48, 0, 0}, {70, 260, 129, 1, 1},
    };
    int runs = 0;
    for (int t = 0; t < 5; t++)
        for (int order = 0; order < 2; order++)
            for (int ops = 0; ops < 4; ops++)
                for (size_t z = 0; z < sizeof sizes / sizeof sizes[0] && !th_failed(); z++) {
                    /* FP32 twice: TF32 math, then exact */
                    th_gemm_case c =
                        th_gemm_case_of(types[t], t == 2, order ? AT_COL_MAJOR : AT_ROW_MAJOR, ops,
                                        sizes[z][0], sizes[z][1], sizes[z][2], sizes[z][3],
                                        sizes[z][3], sizes[z][3]);
                    c.offset = sizes[z][4];
                    c.alpha = z % 2 ? -0.5 : 1.25;
                    c.beta = z == 1 ? 0.0 : 0.75;
                    double err = 0;
                    int padding_ok = 0;
                    at_status s = th_gemm_run(&g, h, &c, &err, &padding_ok);
                    CHECK_MSG(s == AT_OK && err <= th_gemm_tolerance(c.type, c.k) && padding_ok,
                              "type %d%s %s %s%s %dx%dx%d ld %d/%d/%d offset %d: %s %s, error "
                              "%.3g (bound %.3g), padding %s", (int)c.type, c.tf32 ? " tf32" : "",
                              order ? "col" : "row", c.op_a ? "T" : "N", c.op_b ? "T" : "N", c.m,
                              c.n, c.k, c.lda, c.ldb, c.ldc, c.offset, at_status_string(s),
                              at_errmsg(h), err, th_gemm_tolerance(c.type, c.k),
                              padding_ok ? "kept" : "WRITTEN");
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    if ((c.type == AT_R_32F && !c.tf32) || c.type == AT_R_64F) {
                        /* canonical ops: column-major swaps A and B with their ops */
                        int opa = order ? (ops >> 1) : (ops & 1), opb = order ? (ops & 1) : (ops >> 1);
                        char want[32];
                        snprintf(want, sizeof want, "OPA=%d,OPB=%d", opa, opb);
                        CHECK_MSG(strstr(st.last_config, want) != NULL, "%s %d: ran %s",
                                  order ? "col" : "row", ops, st.last_config);
                    }
                    runs++;
                }
    CHECK_EQ(runs, 5 * 2 * 4 * 4);
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

/* Every built-in default row's class on this GPU, with a fresh database (nothing tuned, no
 * trials): split-K (few tiles, deep K), small and large outputs, each type, every
 * op pair and both orders at the class's shape; the result against float64 and the row that
 * ran named by the stats. */
GPU_TEST(gemm_api_builtin_defaults_of_every_class)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_defaults.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    static const struct { at_dtype t; int tf32; } types[] = {
        {AT_R_16BF, 0}, {AT_R_16F, 0}, {AT_R_32F, 1}, {AT_R_32F, 0}, {AT_R_64F, 0},
    };
    /* the host reference costs m n k per case: each class at its smallest */
    static const int sizes[][3] = {
        {130, 257, 2100},    /* 6 tiles of 128 x 128, deep: split-K 4 */
        {700, 900, 200},     /* 48 tiles, shallow: 128 x 128 */
        {1700, 2500, 16},    /* 280 tiles: 128 x 256 (BF16/FP16) */
        {17, 4099, 33},      /* odd and thin */
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int ops = 0; ops < 4 && !th_failed(); ops++) {
                th_gemm_case c = th_gemm_case_of(types[t].t, types[t].tf32,
                                       (ops + (int)z) % 2 ? AT_COL_MAJOR : AT_ROW_MAJOR, ops,
                                       sizes[z][0], sizes[z][1], sizes[z][2], 0, 0, 0);
                c.alpha = 1.0;
                c.beta = ops == 3 ? 0.5 : 0.0;
                double err = 0;
                int padding_ok = 0;
                at_status s = th_gemm_run(&g, h, &c, &err, &padding_ok);
                at_stats st;
                CHECK_OK(at_get_stats(h, &st));
                CHECK_MSG(s == AT_OK && err <= th_gemm_tolerance(c.type, c.k) && padding_ok,
                          "type %d%s %s %s%s %dx%dx%d: %s %s, error %.3g (bound %.3g), ran %s",
                          (int)c.type, c.tf32 ? " tf32" : "", c.order ? "col" : "row",
                          c.op_a ? "T" : "N", c.op_b ? "T" : "N", c.m, c.n, c.k,
                          at_status_string(s), at_errmsg(h), err, th_gemm_tolerance(c.type, c.k),
                          st.last_config);
                CHECK_EQ(st.last_level, AT_LOOKUP_DEFAULT);
            }
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

/* The shape classes the skinny family serves without measurements (a side of at most 16, a
 * small output over a deep K, a tall-thin output): at_gemm routes them to it, and every type,
 * op pair and order comes back right with padded, offset (unaligned) operands, alpha and beta,
 * C's padding untouched; a repeated call (the slice counters reused) is right again. */
GPU_TEST(gemm_api_skinny_classes_padded_offset_beta)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_skinny.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    CHECK_OK(at_set_vendor(h, AT_VENDOR_OFF));
    static const struct { at_dtype t; int tf32; } types[] = {
        {AT_R_16BF, 0}, {AT_R_16F, 0}, {AT_R_32F, 1}, {AT_R_32F, 0}, {AT_R_64F, 0},
    };
    static const int sizes[][3] = {
        {3, 517, 1200},     /* GEMV-like: one tile row, K slices */
        {29, 41, 3100},     /* small output, deep K: 32 x 32 tiles, K slices */
        {700, 9, 300},      /* tall and thin */
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int ops = 0; ops < 4 && !th_failed(); ops++) {
                th_gemm_case c = th_gemm_case_of(types[t].t, types[t].tf32,
                                       (ops + (int)z) % 2 ? AT_COL_MAJOR : AT_ROW_MAJOR, ops,
                                       sizes[z][0], sizes[z][1], sizes[z][2], 1, 3, 2);
                c.offset = 1;
                c.alpha = -0.75;
                c.beta = ops == 2 ? 0.5 : 0.0;
                for (int rep = 0; rep < 2 && !th_failed(); rep++) {
                    double err = 0;
                    int padding_ok = 0;
                    at_status s = th_gemm_run(&g, h, &c, &err, &padding_ok);
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    CHECK_MSG(s == AT_OK && err <= th_gemm_tolerance(c.type, c.k) && padding_ok,
                              "type %d%s %s %s%s %dx%dx%d call %d: %s %s, error %.3g (bound "
                              "%.3g), ran %s %s", (int)c.type, c.tf32 ? " tf32" : "",
                              c.order ? "col" : "row", c.op_a ? "T" : "N", c.op_b ? "T" : "N",
                              c.m, c.n, c.k, rep + 1, at_status_string(s), at_errmsg(h), err,
                              th_gemm_tolerance(c.type, c.k), st.last_kernel, st.last_config);
                    CHECK_STR(st.last_kernel, "skinny");
                }
            }
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}


/* Strided batches of the tensor-core types through at_gemm_strided_batched with a fresh
 * database: every op pair, both orders, product strides that break 16-byte alignment (packed
 * first) and ones that keep it; each product against its float64 host product. */
GPU_TEST(gemm_api_tensor_core_batches)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_batches.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    static const struct { at_dtype t; int tf32; } types[] = {
        {AT_R_16BF, 0}, {AT_R_16F, 0}, {AT_R_32F, 1},
    };
    const int m = 130, n = 70, k = 50, batch = 5;
    for (size_t t = 0; t < 3; t++)
        for (int order = 0; order < 2; order++)
            for (int ops = 0; ops < 4 && !th_failed(); ops++) {
                at_order o = order ? AT_COL_MAJOR : AT_ROW_MAJOR;
                at_op opa = (ops & 1) ? AT_OP_T : AT_OP_N, opb = (ops >> 1) ? AT_OP_T : AT_OP_N;
                long long lda = th_gemm_min_ld(o, opa, m, k), ldb = th_gemm_min_ld(o, opb, k, n),
                          ldc = th_gemm_min_ld(o, AT_OP_N, m, n);
                int pad = ops == 1 ? 3 : 8;             /* odd: unaligned product starts */
                long long sa = (long long)th_gemm_lines(o, opa, m, k) * lda + pad,
                          sb = (long long)th_gemm_lines(o, opb, k, n) * ldb + pad,
                          sc = (long long)th_gemm_lines(o, AT_OP_N, m, n) * ldc + pad;
                at_dtype ty = types[t].t;
                size_t es = th_gemm_size(ty), na = (size_t)(sa * batch), nb = (size_t)(sb * batch),
                       nc = (size_t)(sc * batch);
                void *A = th_gemm_random(ty, na, 5u + (unsigned)ops),
                     *B = th_gemm_random(ty, nb, 7u), *C = malloc(nc * es);
                CUdeviceptr dA = 0, dB = 0, dC = 0;
                CHECK(A && B && C && !g.cu->MemAlloc(&dA, na * es) &&
                      !g.cu->MemAlloc(&dB, nb * es) && !g.cu->MemAlloc(&dC, nc * es) &&
                      !g.cu->MemcpyHtoD(dA, A, na * es) && !g.cu->MemcpyHtoD(dB, B, nb * es) &&
                      !g.cu->MemsetD8Async(dC, 0xff, nc * es, 0));
                CHECK_OK(at_set_math_mode(h, types[t].tf32 ? AT_MATH_TF32 : AT_MATH_DEFAULT));
                at_status s = at_gemm_strided_batched(
                    h, o, opa, opb, m, n, k, ty, 1.0, (const void *)(uintptr_t)dA, (int)lda, sa,
                    (const void *)(uintptr_t)dB, (int)ldb, sb, 0.0, (void *)(uintptr_t)dC,
                    (int)ldc, sc, batch);
                CHECK_MSG(s == AT_OK, "%s", at_errmsg(h));
                CHECK(!g.cu->CtxSynchronize() && !g.cu->MemcpyDtoH(C, dC, nc * es));
                double worst = 0;
                for (int z = 0; z < batch; z++) {
                    double num = 0, den = 0;
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            double ref = 0;
                            for (int q = 0; q < k; q++)
                                ref += th_gemm_get(ty, types[t].tf32, A,
                                              (size_t)(z * sa) + th_gemm_index(o, opa, lda, i, q)) *
                                       th_gemm_get(ty, types[t].tf32, B,
                                              (size_t)(z * sb) + th_gemm_index(o, opb, ldb, q, j));
                            double got = th_gemm_get(
                                ty, 0, C, (size_t)(z * sc) + th_gemm_index(o, AT_OP_N, ldc, i, j));
                            num += (got - ref) * (got - ref);
                            den += ref * ref;
                        }
                    double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                    worst = e > worst ? e : worst;
                }
                at_stats st;
                CHECK_OK(at_get_stats(h, &st));
                CHECK_MSG(worst <= th_gemm_tolerance(ty, k), "type %d %s ops %d: error %.3g (%s)",
                          (int)ty, order ? "col" : "row", ops, worst, st.last_config);
                g.cu->MemFree(dA);
                g.cu->MemFree(dB);
                g.cu->MemFree(dC);
                free(A);
                free(B);
                free(C);
            }
    CHECK_OK(at_destroy(h));
    th_gemm_end(&g);
}

/* ---- CPU tier: the mapping and the argument rules, against the host ---- */

/* Row-major host GEMM with ops (the form the families compute): C = op(A) op(B), op(A) m x k. */
static void ga_host_row_major(const tpl_args *a, const double *A, const double *B, double *C)
{
    const tpl_problem *p = &a->problem;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    long long lda = a->operand[TPL_GEMM_A].ld, ldb = a->operand[TPL_GEMM_B].ld,
              ldc = a->operand[TPL_GEMM_C].ld;
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++) {
            double acc = 0;
            for (long long q = 0; q < k; q++)
                acc += (p->op_a == AT_OP_T ? A[q * lda + i] : A[i * lda + q]) *
                       (p->op_b == AT_OP_T ? B[j * ldb + q] : B[q * ldb + j]);
            C[i * ldc + j] = acc;
        }
}

/* A column-major call, mapped by ag_gemm_canonical and computed row-major on the host, gives
 * what the column-major definition gives, element for element, for every pair of ops; a
 * row-major call is left as it is. */
TEST(gemm_mapping_column_major_is_row_major_swapped)
{
    static const int sizes[][3] = {{3, 5, 7}, {1, 4, 2}, {6, 1, 1}, {5, 5, 5}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int ops = 0; ops < 4; ops++) {
            int m = sizes[z][0], n = sizes[z][1], k = sizes[z][2];
            at_op op_a = (ops & 1) ? AT_OP_T : AT_OP_N, op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            /* column-major: op N A is m x k with lda >= m; op T A is k x m with lda >= k */
            int lda = (op_a == AT_OP_N ? m : k) + 2, ldb = (op_b == AT_OP_N ? k : n) + 1,
                ldc = m + 3;
            double A[256], B[256], C[256], want[256];
            for (int i = 0; i < 256; i++) {
                A[i] = (double)((i * 37) % 19) - 9;
                B[i] = (double)((i * 53) % 23) - 11;
                C[i] = want[i] = -1000;
            }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int q = 0; q < k; q++)
                        acc += (op_a == AT_OP_N ? A[i + q * lda] : A[q + i * lda]) *
                               (op_b == AT_OP_N ? B[q + j * ldb] : B[j + q * ldb]);
                    want[i + j * ldc] = acc;
                }
            tpl_args args = tpl_gemm_args(m, n, k, 1.0f, (CUdeviceptr)(uintptr_t)A, lda,
                                          (CUdeviceptr)(uintptr_t)B, ldb, 0.0f,
                                          (CUdeviceptr)(uintptr_t)C, ldc);
            args.problem.order = AT_COL_MAJOR;
            args.problem.op_a = op_a;
            args.problem.op_b = op_b;
            char err[256];
            CHECK_OK(ag_gemm_check(&args, err, sizeof err));
            ag_gemm_canonical(&args);
            const tpl_problem *p = &args.problem;
            CHECK(p->order == AT_ROW_MAJOR && p->dims[0] == n && p->dims[1] == m &&
                  p->dims[2] == k && p->op_a == op_b && p->op_b == op_a);
            CHECK(args.operand[TPL_GEMM_A].ptr == (CUdeviceptr)(uintptr_t)B &&
                  args.operand[TPL_GEMM_A].ld == ldb && args.operand[TPL_GEMM_C].ld == ldc);
            /* the canonical call obeys the row-major rules */
            CHECK_OK(ag_gemm_check(&args, err, sizeof err));
            ga_host_row_major(&args, (const double *)(uintptr_t)args.operand[TPL_GEMM_A].ptr,
                              (const double *)(uintptr_t)args.operand[TPL_GEMM_B].ptr, C);
            for (int i = 0; i < 256; i++)
                CHECK_MSG(C[i] == want[i], "%dx%dx%d ops %d: element %d %g != %g", m, n, k, ops,
                          i, C[i], want[i]);
            /* row-major calls are already canonical */
            tpl_args row = tpl_gemm_args(m, n, k, 1.0f, 1, lda, 2, ldb, 0.0f, 3, ldc);
            row.problem.op_a = op_a;
            tpl_args before = row;
            ag_gemm_canonical(&row);
            CHECK(memcmp(&row, &before, sizeof row) == 0);
        }
}

/* The leading-dimension rules of every order and op (BLAS: row-major ld >= the columns of X
 * as stored, column-major >= its rows), at the minimum (accepted) and one below (refused,
 * naming the argument), written out here from the definitions; negative sizes and values
 * outside the enums refused. */
TEST(gemm_check_leading_dimensions_by_order_and_op)
{
    const int m = 7, n = 5, k = 3;
    for (int order = 0; order < 2; order++)
        for (int ops = 0; ops < 4; ops++) {
            at_op op_a = (ops & 1) ? AT_OP_T : AT_OP_N, op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            int need[3];
            if (order == 0) {   /* row-major: A m x k or k x m, B k x n or n x k, C m x n */
                need[0] = op_a == AT_OP_N ? k : m;
                need[1] = op_b == AT_OP_N ? n : k;
                need[2] = n;
            } else {            /* column-major: the rows of each as stored */
                need[0] = op_a == AT_OP_N ? m : k;
                need[1] = op_b == AT_OP_N ? k : n;
                need[2] = m;
            }
            static const char *const names[3] = {"lda", "ldb", "ldc"};
            for (int which = -1; which < 3; which++) {
                int ld[3] = {need[0], need[1], need[2]};
                if (which >= 0)
                    ld[which]--;
                tpl_args a = tpl_gemm_args(m, n, k, 1.0f, 16, ld[0], 32, ld[1], 0.0f, 48, ld[2]);
                a.problem.order = order ? AT_COL_MAJOR : AT_ROW_MAJOR;
                a.problem.op_a = op_a;
                a.problem.op_b = op_b;
                char err[256] = "";
                at_status s = ag_gemm_check(&a, err, sizeof err);
                if (which < 0) {
                    CHECK_MSG(s == AT_OK, "order %d ops %d at the minimum: %s", order, ops, err);
                } else {
                    CHECK_MSG(s == AT_ERR_INVALID_ARG && strstr(err, names[which]) != NULL,
                              "order %d ops %d %s one below: %s", order, ops, names[which], err);
                }
                CHECK_EQ(tpl_gemm_min_ld(a.problem.order, which == 1 ? op_b : op_a,
                                         which == 1 ? k : m, which == 1 ? n : k),
                         need[which == 1 ? 1 : 0]);
            }
        }
    /* empty matrices: ld >= 1 */
    tpl_args e = tpl_gemm_args(0, 0, 0, 1.0f, 0, 1, 0, 1, 0.0f, 0, 1);
    char err[256];
    CHECK_OK(ag_gemm_check(&e, err, sizeof err));
    e.operand[TPL_GEMM_B].ld = 0;
    CHECK_EQ(ag_gemm_check(&e, err, sizeof err), AT_ERR_INVALID_ARG);
    tpl_args bad = tpl_gemm_args(-1, 4, 4, 1.0f, 0, 4, 0, 4, 0.0f, 0, 4);
    CHECK_EQ(ag_gemm_check(&bad, err, sizeof err), AT_ERR_INVALID_ARG);
    CHECK(strstr(err, "negative") != NULL);
    bad = tpl_gemm_args(4, 4, 4, 1.0f, 0, 4, 0, 4, 0.0f, 0, 4);
    bad.problem.order = (at_order)2;
    CHECK_EQ(ag_gemm_check(&bad, err, sizeof err), AT_ERR_INVALID_ARG);
    bad.problem.order = AT_ROW_MAJOR;
    bad.problem.op_b = (at_op)5;
    CHECK_EQ(ag_gemm_check(&bad, err, sizeof err), AT_ERR_INVALID_ARG);
}
