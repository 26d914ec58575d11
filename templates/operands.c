/* operands.c: the argument builders (tpl_args) that the families' workspaces
 * and the runtime's calls share: GEMM, reduction and Jacobi operands, and
 * the smallest legal GEMM leading dimension. */
#include <string.h>
#include "tpl.h"

tpl_args tpl_gemm_args(int m, int n, int k, float alpha, CUdeviceptr A, int lda, CUdeviceptr B,
                       int ldb, float beta, CUdeviceptr C, int ldc)
{
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 3;
    args.problem.dims[0] = m;
    args.problem.dims[1] = n;
    args.problem.dims[2] = k;
    args.operand[TPL_GEMM_A] = (tpl_operand){A, lda, 0};
    args.operand[TPL_GEMM_B] = (tpl_operand){B, ldb, 0};
    args.operand[TPL_GEMM_C] = (tpl_operand){C, ldc, 0};
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    return args;
}

long long tpl_gemm_min_ld(at_order order, at_op op, long long rows, long long cols)
{
    /* stored as rows x cols (op N) or cols x rows (op T); row-major ld spans the
     * stored columns, column-major ld the stored rows */
    long long stored_rows = op == AT_OP_T ? cols : rows;
    long long stored_cols = op == AT_OP_T ? rows : cols;
    long long need = order == AT_COL_MAJOR ? stored_rows : stored_cols;
    return need > 1 ? need : 1;
}

tpl_args tpl_reduce_args(long long n, CUdeviceptr x, CUdeviceptr y, CUdeviceptr result)
{
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 1;
    args.problem.dims[0] = n;
    args.operand[TPL_RED_X].ptr = x;
    args.operand[TPL_RED_Y].ptr = y;
    args.operand[TPL_RED_RESULT].ptr = result;
    return args;
}

tpl_args tpl_jacobi_args(int n, CUdeviceptr A, CUdeviceptr b, CUdeviceptr x, float tol,
                         int max_iter)
{
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 1;
    args.problem.dims[0] = n;
    args.operand[TPL_JAC_A] = (tpl_operand){A, n, 0};
    args.operand[TPL_JAC_B].ptr = b;
    args.operand[TPL_JAC_X].ptr = x;
    args.scalar[TPL_JAC_TOL] = tol;
    args.ints[TPL_JAC_MAX_ITER] = max_iter;
    return args;
}
