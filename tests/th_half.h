/* th_half.h: host conversions of the 16-bit float formats for the tests (tests/th_half.c),
 * written from the formats' definitions, independent of the kernels' and the library's code. */
#ifndef TH_HALF_H
#define TH_HALF_H

#include <stdint.h>

/* bfloat16 bits of f, round to nearest even (finite inputs). */
uint16_t th_to_bf16(float f);
/* The value of bfloat16 bits b (exact). */
float th_from_bf16(uint16_t b);
/* IEEE half bits of v, round to nearest even, for |v| < 65504: normal, subnormal (multiples of
 * 2^-24) or zero, the sign of a zero kept. */
uint16_t th_to_f16(double v);
/* The value of IEEE half bits h (exact; finite codes). */
double th_from_f16(uint16_t h);

#endif
