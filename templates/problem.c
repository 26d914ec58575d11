/* problem.c: the problem key: its kind (element type, math, ops, order,
 * batch, fused epilogue), equality, the names of the kind values and the text form. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

#define PB_MAX_SIZE (1LL << 40)         /* largest size or batch count in text */

/* Names indexed by value; append only, like the enums (autotune.h). */
static const char *const pb_dtypes[] = {"f32", "f64", "f16", "bf16", "e4m3", "e5m2"};
static const char *const pb_maths[] = {"", "tf32"};
static const char *const pb_ops[] = {"N", "T"};
static const char *const pb_orders[] = {"row", "col"};
/* The epilogue's two parts, by value (TPL_EPI_BIAS, TPL_EPI_ACT); "" is none. */
static const char *const pb_biases[] = {"", "bias_row", "bias_col"};
static const char *const pb_acts[] = {"", "relu", "gelu", "gelu_erf"};
#define PB_COUNT(a) ((int)(sizeof a / sizeof a[0]))

static const char *pb_name(const char *const *names, int n, int value)
{
    return value >= 0 && value < n ? names[value] : NULL;
}

static int pb_value(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return TPL_KIND_UNKNOWN;
}

const char *tpl_dtype_name(at_dtype t) { return pb_name(pb_dtypes, PB_COUNT(pb_dtypes), (int)t); }
/* The FP8 maths by tpl_math_fp8 - 1 (TPL_MATH_E4M3 ...): names and operand types. */
static const char *const pb_fp8_names[] = {"e4m3xe4m3", "e4m3xe5m2", "e5m2xe4m3",
                                           "e4m3xe4m3_b128", "e4m3xe5m2_b128", "e5m2xe4m3_b128"};
#define PB_FP8_PAIRS 3      /* pb_fp8_names: the pairs per-tensor, then block-scaled */
static const at_dtype pb_fp8_types[][2] = {
    {AT_R_8F_E4M3, AT_R_8F_E4M3}, {AT_R_8F_E4M3, AT_R_8F_E5M2}, {AT_R_8F_E5M2, AT_R_8F_E4M3}};

/* The index of an FP8 math in pb_fp8_names, -1 for any other math. */
static int pb_fp8_index(at_math m)
{
    int v = (int)m - (int)TPL_MATH_E4M3;
    return v >= 0 && v < PB_COUNT(pb_fp8_names) ? v : -1;
}

int tpl_math_fp8(at_math m)
{
    int v = pb_fp8_index(m);
    return v < 0 ? 0 : v % PB_FP8_PAIRS + 1;
}

int tpl_math_fp8_block(at_math m)
{
    return pb_fp8_index(m) >= PB_FP8_PAIRS;
}

at_math tpl_math_fp8_scaled(int f, int block)
{
    if (f < 1 || f > PB_FP8_PAIRS)
        return AT_MATH_DEFAULT;
    return (at_math)((int)TPL_MATH_E4M3 + (f - 1) + (block ? PB_FP8_PAIRS : 0));
}

int tpl_math_of_fp8(at_dtype a, at_dtype b)
{
    for (int i = 0; i < PB_FP8_PAIRS; i++)
        if (pb_fp8_types[i][0] == a && pb_fp8_types[i][1] == b)
            return (int)TPL_MATH_E4M3 + i;
    return TPL_KIND_UNKNOWN;
}

at_dtype tpl_math_fp8_a(at_math m)
{
    int f = tpl_math_fp8(m);
    return f ? pb_fp8_types[f - 1][0] : AT_R_32F;
}

at_dtype tpl_math_fp8_b(at_math m)
{
    int f = tpl_math_fp8(m);
    return f ? pb_fp8_types[f - 1][1] : AT_R_32F;
}

at_math tpl_math_fp8_swap(at_math m)
{
    if (!tpl_math_fp8(m))
        return m;
    int f = tpl_math_of_fp8(tpl_math_fp8_b(m), tpl_math_fp8_a(m));
    return tpl_math_fp8_scaled(tpl_math_fp8((at_math)f), tpl_math_fp8_block(m));
}

const char *tpl_math_name(at_math m)
{
    int v = pb_fp8_index(m);
    return v >= 0 ? pb_fp8_names[v] : pb_name(pb_maths, PB_COUNT(pb_maths), (int)m);
}
const char *tpl_op_name(at_op o) { return pb_name(pb_ops, PB_COUNT(pb_ops), (int)o); }
const char *tpl_order_name(at_order o) { return pb_name(pb_orders, PB_COUNT(pb_orders), (int)o); }
int tpl_dtype_of(const char *name) { return pb_value(pb_dtypes, PB_COUNT(pb_dtypes), name); }
int tpl_math_of(const char *name)
{
    int f = pb_value(pb_fp8_names, PB_COUNT(pb_fp8_names), name);
    return f != TPL_KIND_UNKNOWN ? (int)TPL_MATH_E4M3 + f
                                 : pb_value(pb_maths, PB_COUNT(pb_maths), name);
}
int tpl_op_of(const char *name) { return pb_value(pb_ops, PB_COUNT(pb_ops), name); }
int tpl_order_of(const char *name) { return pb_value(pb_orders, PB_COUNT(pb_orders), name); }

/* Every epilogue's name by value TPL_EPI(bias, act): the bias part, then the activation. */
static const char *const pb_epilogues[TPL_N_EPI] = {
    "", "relu", "gelu", "gelu_erf",
    "bias_row", "bias_row:relu", "bias_row:gelu", "bias_row:gelu_erf",
    "bias_col", "bias_col:relu", "bias_col:gelu", "bias_col:gelu_erf",
};

const char *tpl_epilogue_name(int epilogue)
{
    return pb_name(pb_epilogues, TPL_N_EPI, epilogue);
}

int tpl_epilogue_of(const char *name)
{
    return pb_value(pb_epilogues, TPL_N_EPI, name);
}

long long tpl_problem_batch(const tpl_problem *p)
{
    return p->batch > 1 ? p->batch : 1;
}

int tpl_problem_same_kind(const tpl_problem *a, const tpl_problem *b)
{
    return a->dtype == b->dtype && a->math == b->math && a->op_a == b->op_a &&
           a->op_b == b->op_b && a->order == b->order && a->epilogue == b->epilogue;
}

int tpl_problem_equal(const tpl_problem *a, const tpl_problem *b)
{
    if (a->n_dims != b->n_dims || !tpl_problem_same_kind(a, b) ||
        tpl_problem_batch(a) != tpl_problem_batch(b))
        return 0;
    for (int i = 0; i < a->n_dims && i < TPL_MAX_DIMS; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

int tpl_problem_plain(const tpl_problem *p)
{
    static const tpl_problem plain;
    return tpl_problem_same_kind(p, &plain) && tpl_problem_batch(p) == 1;
}

int tpl_family_accepts(const tpl_family *fam, const tpl_problem *p)
{
    if (!fam || !p || p->n_dims != fam->n_dims || (p->epilogue != 0 && !fam->epilogues))
        return 0;
    return fam->accepts ? fam->accepts(p) : tpl_problem_plain(p);
}

at_status tpl_check_problem(at_exec *ex, const tpl_family *fam, const tpl_problem *p)
{
    if (tpl_family_accepts(fam, p))
        return AT_OK;
    char text[128] = "";
    if (p)
        tpl_problem_format(p, text, sizeof text);
    return ex_fail(ex, AT_ERR_UNSUPPORTED, "%s does not compute the problem %s (%d sizes; "
                   "its kinds: autotune list)", fam ? fam->name : "?", text, p ? p->n_dims : 0);
}

at_status tpl_check_gemm_prepare(at_exec *ex, const tpl_family *fam, const tpl_problem *p)
{
    at_status s = tpl_check_problem(ex, fam, p);
    if (s != AT_OK)
        return s;
    long long batch = tpl_problem_batch(p);
    if (p->dims[0] < 1 || p->dims[1] < 1 || p->dims[2] < 1 || p->dims[0] > 0x7fffffff ||
        p->dims[1] > 0x7fffffff || p->dims[2] > 0x7fffffff || batch > 65535 ||
        batch * p->dims[0] > 0x7fffffff)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: bad problem for prepare", fam->name);
    return AT_OK;
}

at_status tpl_check_gemm_operands(at_exec *ex, const tpl_family *fam, const tpl_args *args,
                                  int m, int n, int k, int op_a_t, int op_b_t)
{
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    long long need_a = op_a_t ? m : k, need_b = op_b_t ? k : n;
    if (oa->ld < (need_a > 1 ? need_a : 1) || ob->ld < (need_b > 1 ? need_b : 1) || oc->ld < n)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld too small for %dx%dx%d (ops %c%c)", fam->name, oa->ld, ob->ld,
                       oc->ld, m, n, k, op_a_t ? 'T' : 'N', op_b_t ? 'T' : 'N');
    if (tpl_problem_batch(&args->problem) > 1 &&
        (oa->batch_stride < 0 || ob->batch_stride < 0 || oc->batch_stride < 0))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: negative batch stride", fam->name);
    if (!oc->ptr || (k > 0 && (!oa->ptr || !ob->ptr)))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: NULL operand", fam->name);
    return AT_OK;
}

/* ---- text form ---- */

/* Appends to out (len bytes, *used of them taken), truncating. */
static void pb_append(char *out, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void pb_append(char *out, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *used, len - *used, fmt, ap);
    va_end(ap);
    if (w > 0)
        *used = *used + (size_t)w < len ? *used + (size_t)w : len - 1;
}

static const char *pb_or_unknown(const char *name)
{
    return name ? name : "?";
}

void tpl_problem_format(const tpl_problem *p, char *out, size_t len)
{
    size_t used = 0;
    if (!out || len == 0)
        return;
    out[0] = '\0';
    for (int i = 0; i < p->n_dims && i < TPL_MAX_DIMS; i++)
        pb_append(out, len, &used, "%s%lld", i ? "x" : "", p->dims[i]);
    if (p->dtype != AT_R_32F)
        pb_append(out, len, &used, ":%s", pb_or_unknown(tpl_dtype_name(p->dtype)));
    if (p->math != AT_MATH_DEFAULT)
        pb_append(out, len, &used, ":%s", pb_or_unknown(tpl_math_name(p->math)));
    if (p->order != AT_ROW_MAJOR)
        pb_append(out, len, &used, ":%s", pb_or_unknown(tpl_order_name(p->order)));
    if (p->op_a != AT_OP_N || p->op_b != AT_OP_N)
        pb_append(out, len, &used, ":%s%s", pb_or_unknown(tpl_op_name(p->op_a)),
                  pb_or_unknown(tpl_op_name(p->op_b)));
    if (tpl_problem_batch(p) > 1)
        pb_append(out, len, &used, ":b%lld", p->batch);
    if (p->epilogue != 0)
        pb_append(out, len, &used, ":%s", pb_or_unknown(tpl_epilogue_name(p->epilogue)));
}

/* A whole decimal number in 1..PB_MAX_SIZE at s (digits only); its end in
 * *end. -1 if none. */
static long long pb_number(const char *s, const char **end)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *e;
    long long v = strtoll(s, &e, 10);
    *end = e;
    return errno || v < 1 || v > PB_MAX_SIZE ? -1 : v;
}

/* Sets one suffix field from tok (len characters); seen marks the fields
 * given. 0 with the reason in err if tok is no field or a repeated one. */
static int pb_suffix(const char *tok, size_t n, tpl_problem *p, int *seen, char *err,
                     size_t errlen)
{
    static const char *const what[] = {"element type", "math mode", "storage order",
                                       "operand ops", "batch count", "bias", "activation"};
    char word[16];
    if (n == 0 || n >= sizeof word) {
        snprintf(err, errlen, "%s suffix \":%.*s\"", n ? "unknown" : "empty",
                 (int)(n > 40 ? 40 : n), tok);
        return 0;
    }
    memcpy(word, tok, n);
    word[n] = '\0';
    int field = -1, v;
    const char *end = NULL;
    long long batch;
    if ((v = tpl_dtype_of(word)) != TPL_KIND_UNKNOWN) {
        field = 0;
        p->dtype = (at_dtype)v;
    } else if ((v = tpl_math_of(word)) != TPL_KIND_UNKNOWN) {
        field = 1;
        p->math = (at_math)v;
    } else if ((v = tpl_order_of(word)) != TPL_KIND_UNKNOWN) {
        field = 2;
        p->order = (at_order)v;
    } else if (n == 2 && strchr("NT", word[0]) && strchr("NT", word[1])) {
        field = 3;
        p->op_a = word[0] == 'T' ? AT_OP_T : AT_OP_N;
        p->op_b = word[1] == 'T' ? AT_OP_T : AT_OP_N;
    } else if (word[0] == 'b' && (batch = pb_number(word + 1, &end)) > 0 && *end == '\0') {
        field = 4;
        p->batch = batch;
    } else if ((v = pb_value(pb_biases, PB_COUNT(pb_biases), word)) != TPL_KIND_UNKNOWN ||
               strcmp(word, "bias_none") == 0) {
        field = 5;
        v = v == TPL_KIND_UNKNOWN ? TPL_BIAS_NONE : v;
        p->epilogue = TPL_EPI(v, TPL_EPI_ACT(p->epilogue));
    } else if ((v = pb_value(pb_acts, PB_COUNT(pb_acts), word)) != TPL_KIND_UNKNOWN ||
               strcmp(word, "act_none") == 0) {
        field = 6;
        v = v == TPL_KIND_UNKNOWN ? 0 : v;
        p->epilogue = TPL_EPI(TPL_EPI_BIAS(p->epilogue), v);
    }
    if (field < 0) {
        snprintf(err, errlen, "unknown suffix \":%s\" (element type f32, f64, f16, bf16; "
                 "tf32, e4m3xe4m3, e4m3xe5m2 or e5m2xe4m3 (_b128: block-scaled); row or col; NN, NT, TN, TT; bCOUNT "
                 "with COUNT >= 1; bias_row or bias_col; relu, gelu or gelu_erf)", word);
        return 0;
    }
    if (seen[field]) {
        snprintf(err, errlen, "%s given twice (\":%s\")", what[field], word);
        return 0;
    }
    seen[field] = 1;
    return 1;
}

/* Zeroes p and returns AT_ERR_INVALID_ARG (the reason is already in err). */
static at_status pb_reject(tpl_problem *p)
{
    memset(p, 0, sizeof *p);
    return AT_ERR_INVALID_ARG;
}

at_status tpl_problem_parse(const char *text, tpl_problem *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (!text || !*text) {
        snprintf(err, errlen, "no sizes given");
        return AT_ERR_INVALID_ARG;
    }
    const char *s = text;
    for (;;) {
        const char *end;
        long long v = pb_number(s, &end);
        if (p->n_dims == TPL_MAX_DIMS) {
            snprintf(err, errlen, "more than %d sizes", TPL_MAX_DIMS);
            return pb_reject(p);
        }
        if (v < 0) {
            snprintf(err, errlen, "expected sizes in 1..2^40 joined by x (4096x4096x4096) "
                     "at \"%.40s\"", s);
            return pb_reject(p);
        }
        p->dims[p->n_dims++] = v;
        s = end;
        if (*s != 'x' && *s != 'X')
            break;
        s++;
    }
    int seen[7] = {0};
    while (*s == ':') {
        const char *tok = s + 1;
        size_t n = strcspn(tok, ":");
        if (!pb_suffix(tok, n, p, seen, err, errlen))
            return pb_reject(p);
        s = tok + n;
    }
    if (*s) {
        snprintf(err, errlen, "unexpected \"%.40s\" after the sizes", s);
        return pb_reject(p);
    }
    if (p->math == AT_MATH_TF32 && p->dtype != AT_R_32F) {
        snprintf(err, errlen, ":tf32 is a math mode of FP32 data, not of %s",
                 tpl_dtype_name(p->dtype));
        return pb_reject(p);
    }
    if (tpl_math_fp8(p->math) && p->dtype != AT_R_16BF && p->dtype != AT_R_16F &&
        p->dtype != AT_R_32F) {
        snprintf(err, errlen, ":%s (FP8 operands) outputs bf16, f16 or f32, not %s",
                 tpl_math_name(p->math), tpl_dtype_name(p->dtype));
        return pb_reject(p);
    }
    if (tpl_math_fp8_block(p->math) && (p->order != AT_ROW_MAJOR || p->batch > 1)) {
        snprintf(err, errlen, ":%s (block-scaled FP8) is a row-major problem of one product",
                 tpl_math_name(p->math));
        return pb_reject(p);
    }
    return AT_OK;
}
