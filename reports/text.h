/* text.h: the report's text layer: a growable output buffer, HTML escaping
 * of every string from outside, and the formatting of numbers and problems. */
#ifndef RP_TEXT_H
#define RP_TEXT_H

#include <stddef.h>
#include "tpl.h"

/* Output under construction; oom is set (and later writes dropped) once an
 * allocation fails, so writers need not check each call. */
typedef struct rp_buf {
    char *p;
    size_t len, cap;
    int oom;
} rp_buf;

/* Appends raw text (n bytes of s; a NUL-terminated s; a printf format).
 * On allocation failure they set b->oom and append nothing. */
void rp_putn(rp_buf *b, const char *s, size_t n);
void rp_put(rp_buf *b, const char *s);
void rp_printf(rp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends s with &, <, >, ", ' escaped; NULL appends nothing. rp_esc_max
 * stops after max bytes of s (max > 0) and then appends "...". */
void rp_esc(rp_buf *b, const char *s);
void rp_esc_max(rp_buf *b, const char *s, size_t max);

/* Short human number into out: 66908, 812.4, 3.25, 0.0123; "-" if not
 * finite. Returns out. */
const char *rp_num(char *out, size_t len, double v);
/* Axis tick: 0, 0.5, 250, 2500, 1e+05 style without trailing zeros. */
const char *rp_tick(char *out, size_t len, double v);

/* "1000x999x1001", "4096x4096x4096:bf16" (tpl_problem_format; "-" for no
 * dimensions), cut short to fit len. */
void rp_problem_text(const tpl_problem *p, char *out, size_t len);
/* "m=1000, n=999, k=1001" (then the kind suffix, ":bf16") with the family's dimension names; the plain
 * text form where fam is NULL. */
void rp_problem_named(const tpl_family *fam, const tpl_problem *p, char *out, size_t len);

#endif
