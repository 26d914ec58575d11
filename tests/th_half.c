/* th_half.c: host conversions of bfloat16 and IEEE half for the tests (th_half.h). */
#include <math.h>
#include <string.h>
#include "th_half.h"

uint16_t th_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float th_from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t th_to_f16(double v)
{
    if (v == 0.0)
        return signbit(v) ? 0x8000u : 0;
    int e;
    double m = frexp(fabs(v), &e);                   /* |v| = m * 2^e, m in [0.5, 1) */
    uint16_t sign = v < 0 ? 0x8000u : 0;
    if (e < -13)                                     /* subnormal half: multiples of 2^-24 */
        return (uint16_t)(sign | (uint16_t)nearbyint(fabs(v) * 16777216.0));
    double frac = nearbyint((m * 2.0 - 1.0) * 1024.0);  /* 10 mantissa bits */
    int exp = e - 1 + 15;
    if (frac >= 1024.0) {
        frac = 0;
        exp++;
    }
    return (uint16_t)(sign | (uint16_t)(exp << 10) | (uint16_t)frac);
}

double th_from_f16(uint16_t h)
{
    int exp = (h >> 10) & 31, frac = h & 1023;
    double v = exp == 0 ? ldexp(frac, -24) : ldexp(1024 + frac, exp - 25);
    return (h & 0x8000u) ? -v : v;
}
