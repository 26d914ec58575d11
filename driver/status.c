/* status.c: the text of every at_status, as a switch without default so the
 * compiler flags a status added without its text. */
#include "autotune.h"

const char *at_status_string(at_status status)
{
    switch (status) {
    case AT_OK: return "success";
    case AT_ERR_INVALID_ARG: return "invalid argument";
    case AT_ERR_NO_DRIVER: return "no CUDA driver";
    case AT_ERR_NO_DEVICE: return "no such CUDA device";
    case AT_ERR_CUDA: return "CUDA driver call failed";
    case AT_ERR_COMPILE: return "kernel compilation failed";
    case AT_ERR_DB: return "tuning database error";
    case AT_ERR_DB_CORRUPT: return "tuning database is corrupt or not ours";
    case AT_ERR_NO_MEMORY: return "out of memory";
    case AT_ERR_NOT_FOUND: return "not found";
    case AT_ERR_WRONG_RESULT: return "result differs from the reference";
    case AT_ERR_NOT_CONVERGED: return "did not converge";
    case AT_ERR_DIVERGED: return "diverged (NaN/Inf or zero diagonal)";
    case AT_ERR_TIMEOUT: return "timed out";
    case AT_ERR_CRASHED: return "crashed";
    case AT_ERR_UNSUPPORTED: return "unsupported";
    case AT_ERR_IO: return "file input/output error";
    case AT_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
