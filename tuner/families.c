/* families.c: strong references to every family descriptor, so that the
 * static library's family objects are linked into the command and tests
 * (the registry refers to them weakly, which alone pulls nothing in). */
#include "tpl.h"
#include "tn.h"

extern const tpl_family tpl_matmul, tpl_sum, tpl_dot, tpl_jacobi;
extern const tpl_family tpl_test_oob, tpl_test_hang;

const tpl_family *const tn_linked_families[] = {
    &tpl_matmul, &tpl_sum, &tpl_dot, &tpl_jacobi, &tpl_test_oob, &tpl_test_hang, NULL,
};
