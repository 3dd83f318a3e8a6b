/*
 * The x87's 80-bit extended precision (x86-64's long double) in software, for the GPU kernels
 * (kern_body.h), which have no such type: add, subtract, multiply and compare, rounded to nearest
 * (ties to even) at 64 bits of significand, with gradual underflow and the x87's NaN rules, so that
 * a reduction of long doubles on the GPU gives the bits the CPU gives. C++ for nvcc (device code)
 * and for the host compiler (the unit test compares it with the x87 itself).
 */
#ifndef UMPI_CUDA_KERN_F80_H
#define UMPI_CUDA_KERN_F80_H

#include <stdint.h>

#if defined(__CUDACC__)
#define UMPI_HD __host__ __device__ __forceinline__
#else
#define UMPI_HD inline __attribute__((always_inline))
#endif

/* ---- 128-bit helpers (software long double) ----------------------------------------------------- */

struct umpi_u128 {
    uint64_t hi, lo;
};

UMPI_HD umpi_u128 umpi_mul64(uint64_t a, uint64_t b)
{
    umpi_u128 r;
#ifdef __CUDA_ARCH__
    r.hi = __umul64hi(a, b);
    r.lo = a * b;
#else
    unsigned __int128 p = (unsigned __int128) a * b;
    r.hi = (uint64_t) (p >> 64);
    r.lo = (uint64_t) p;
#endif
    return r;
}

UMPI_HD int umpi_clz64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long) x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
}

UMPI_HD int umpi_clz128(umpi_u128 x)
{
    return x.hi ? umpi_clz64(x.hi) : 64 + umpi_clz64(x.lo);
}

UMPI_HD umpi_u128 umpi_shl128(umpi_u128 x, int n)  /* 0 <= n < 128 */
{
    umpi_u128 r;
    if (n == 0)
        return x;
    if (n >= 64) {
        r.hi = x.lo << (n - 64);
        r.lo = 0;
    } else {
        r.hi = (x.hi << n) | (x.lo >> (64 - n));
        r.lo = x.lo << n;
    }
    return r;
}

/* x >> n, the bits shifted out ORed into bit 0 (a "sticky" bit: rounding needs only to know that
 * something nonzero was there). */
UMPI_HD umpi_u128 umpi_shr128_sticky(umpi_u128 x, int n)
{
    umpi_u128 r;
    uint64_t lost;
    if (n <= 0)
        return x;
    if (n >= 128) {
        r.hi = 0;
        r.lo = (x.hi | x.lo) != 0;
        return r;
    }
    if (n < 64) {
        lost = x.lo << (64 - n);
        r.lo = (x.lo >> n) | (x.hi << (64 - n));
        r.hi = x.hi >> n;
    } else if (n == 64) {
        lost = x.lo;
        r.lo = x.hi;
        r.hi = 0;
    } else {
        lost = x.lo | (x.hi << (128 - n));
        r.lo = x.hi >> (n - 64);
        r.hi = 0;
    }
    r.lo |= lost != 0;
    return r;
}

UMPI_HD umpi_u128 umpi_add128(umpi_u128 a, umpi_u128 b)
{
    umpi_u128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo);
    return r;
}

UMPI_HD umpi_u128 umpi_sub128(umpi_u128 a, umpi_u128 b)  /* a >= b */
{
    umpi_u128 r;
    r.lo = a.lo - b.lo;
    r.hi = a.hi - b.hi - (a.lo < b.lo);
    return r;
}

UMPI_HD bool umpi_lt128(umpi_u128 a, umpi_u128 b)
{
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

/* ---- x87 80-bit extended precision in software ---------------------------------------------------- */

/*
 * Layout in memory (x86-64 long double: 16 bytes, of which the first 10 are the number):
 * m, the 64-bit significand with an explicit integer bit J (bit 63), then se, the sign (bit 15)
 * and the 15-bit biased exponent (bias 16383). Stores write those 10 bytes only, as fstpt does.
 *
 *   exponent 0x7fff, J = 1:  infinity (fraction 0) or NaN (bit 62: quiet)
 *   exponent 0:              zero, denormal (J = 0) or pseudo-denormal (J = 1, read as exponent 1)
 *   otherwise, J = 1:        normal, m * 2^(exponent - 16383 - 63)
 *   J = 0 elsewhere:         unsupported encodings (unnormals, pseudo-NaN/infinity): the x87
 *                            refuses them as operands and returns the default NaN
 */
struct alignas(16) umpi_f80 {
    uint64_t m;
    uint16_t se;
    uint16_t pad_[3];
};

#define UMPI_F80_BIAS 16383
#define UMPI_F80_EMAX 0x7fff
#define UMPI_F80_J (1ULL << 63)
#define UMPI_F80_QUIET (1ULL << 62)

enum { UMPI_F80_ZERO, UMPI_F80_FINITE, UMPI_F80_INF, UMPI_F80_NAN, UMPI_F80_BAD };

UMPI_HD umpi_f80 umpi_f80_make(unsigned sign, unsigned exp, uint64_t m)
{
    umpi_f80 r;
    r.m = m;
    r.se = (uint16_t) ((sign << 15) | exp);
    r.pad_[0] = r.pad_[1] = r.pad_[2] = 0;
    return r;
}

/* The x87's default NaN ("real indefinite"): negative, quiet, fraction otherwise 0. */
UMPI_HD umpi_f80 umpi_f80_indefinite(void)
{
    return umpi_f80_make(1, UMPI_F80_EMAX, UMPI_F80_J | UMPI_F80_QUIET);
}

UMPI_HD int umpi_f80_class(umpi_f80 x)
{
    unsigned e = x.se & 0x7fff;
    bool j = (x.m & UMPI_F80_J) != 0;
    if (e == UMPI_F80_EMAX)
        return !j ? UMPI_F80_BAD : (x.m << 1) == 0 ? UMPI_F80_INF : UMPI_F80_NAN;
    if (e == 0)
        return x.m == 0 ? UMPI_F80_ZERO : UMPI_F80_FINITE;
    return j ? UMPI_F80_FINITE : UMPI_F80_BAD;
}

UMPI_HD unsigned umpi_f80_sign(umpi_f80 x)
{
    return x.se >> 15;
}

/* value of a finite x = m * 2^exp2 */
UMPI_HD int umpi_f80_exp2(umpi_f80 x)
{
    int e = x.se & 0x7fff;
    return (e == 0 ? 1 : e) - UMPI_F80_BIAS - 63;
}

/*
 * The number sign * sig * 2^exp2 (sig != 0) rounded to nearest, ties to even, into the format:
 * overflow gives infinity, results below the normal range are denormalized first and rounded
 * once, at their own precision (gradual underflow, as the x87 does with underflow masked).
 */
UMPI_HD umpi_f80 umpi_f80_round(unsigned sign, int exp2, umpi_u128 sig)
{
    int lz = umpi_clz128(sig);
    sig = umpi_shl128(sig, lz);
    exp2 -= lz;
    /* now bit 127 leads: the value is (sig >> 64) * 2^(exp2 + 64) */
    int e = exp2 + 127 + UMPI_F80_BIAS;
    if (e >= UMPI_F80_EMAX)
        return umpi_f80_make(sign, UMPI_F80_EMAX, UMPI_F80_J);
    if (e <= 0) {
        sig = umpi_shr128_sticky(sig, 1 - e);
        e = 0;
    }
    uint64_t m = sig.hi, rest = sig.lo;
    if (rest > UMPI_F80_J || (rest == UMPI_F80_J && (m & 1))) {
        m++;
        if (m == 0) {   /* carried out of the significand: 1.000... at the next exponent */
            m = UMPI_F80_J;
            if (++e == UMPI_F80_EMAX)
                return umpi_f80_make(sign, UMPI_F80_EMAX, UMPI_F80_J);
        }
    }
    if (e == 0 && (m & UMPI_F80_J))   /* a denormal rounded up into the normal range */
        e = 1;
    return umpi_f80_make(sign, (unsigned) e, m);
}

/* The NaN an operation returns when an operand is a NaN or unsupported (x87 rules: an unsupported
 * operand gives the default NaN; a signaling NaN is quieted; a quiet NaN beats a signaling one;
 * of two NaNs of the same kind, the one with the larger significand). */
UMPI_HD umpi_f80 umpi_f80_nan_result(umpi_f80 a, umpi_f80 b)
{
    int ca = umpi_f80_class(a), cb = umpi_f80_class(b);
    if (ca == UMPI_F80_BAD || cb == UMPI_F80_BAD)
        return umpi_f80_indefinite();
    umpi_f80 r;
    if (ca == UMPI_F80_NAN && cb == UMPI_F80_NAN) {
        bool qa = (a.m & UMPI_F80_QUIET) != 0, qb = (b.m & UMPI_F80_QUIET) != 0;
        if (qa != qb)
            r = qa ? a : b;
        else if (a.m != b.m)
            r = a.m > b.m ? a : b;
        else
            r = a.se < b.se ? a : b;   /* equal significands: the positive one */
    } else {
        r = ca == UMPI_F80_NAN ? a : b;
    }
    return umpi_f80_make(umpi_f80_sign(r), UMPI_F80_EMAX, r.m | UMPI_F80_QUIET);
}

UMPI_HD bool umpi_f80_is_nan(umpi_f80 x)  /* unordered, as a comparison sees it */
{
    int c = umpi_f80_class(x);
    return c == UMPI_F80_NAN || c == UMPI_F80_BAD;
}

/* a + b, or a - b with negate_b (FSUB: the sign of a NaN b is kept). */
UMPI_HD umpi_f80 umpi_f80_addsub(umpi_f80 a, umpi_f80 b, unsigned negate_b)
{
    int ca = umpi_f80_class(a), cb = umpi_f80_class(b);
    if (ca >= UMPI_F80_NAN || cb >= UMPI_F80_NAN)
        return umpi_f80_nan_result(a, b);
    unsigned sa = umpi_f80_sign(a), sb = umpi_f80_sign(b) ^ negate_b;
    if (ca == UMPI_F80_INF || cb == UMPI_F80_INF) {
        if (ca == UMPI_F80_INF && cb == UMPI_F80_INF && sa != sb)
            return umpi_f80_indefinite();
        return ca == UMPI_F80_INF ? umpi_f80_make(sa, UMPI_F80_EMAX, UMPI_F80_J)
                                  : umpi_f80_make(sb, UMPI_F80_EMAX, UMPI_F80_J);
    }
    if (ca == UMPI_F80_ZERO && cb == UMPI_F80_ZERO)
        return umpi_f80_make(sa & sb, 0, 0);   /* -0 only from -0 + -0 */
    umpi_u128 x = {0, 0}, y = {0, 0};
    if (ca == UMPI_F80_ZERO) {
        y.lo = b.m;
        return umpi_f80_round(sb, umpi_f80_exp2(b), y);
    }
    if (cb == UMPI_F80_ZERO) {
        x.lo = a.m;
        return umpi_f80_round(sa, umpi_f80_exp2(a), x);
    }
    /* both finite: significands at bits 63..126 (63 guard bits below, bit 127 free for a carry) */
    int ea = umpi_f80_exp2(a), eb = umpi_f80_exp2(b);
    x.hi = a.m >> 1;
    x.lo = a.m << 63;
    y.hi = b.m >> 1;
    y.lo = b.m << 63;
    int e;
    if (ea >= eb) {
        y = umpi_shr128_sticky(y, ea - eb);
        e = ea;
    } else {
        x = umpi_shr128_sticky(x, eb - ea);
        e = eb;
    }
    if (sa == sb)
        return umpi_f80_round(sa, e - 63, umpi_add128(x, y));
    if (x.hi == y.hi && x.lo == y.lo)
        return umpi_f80_make(0, 0, 0);    /* exact cancellation: +0 when rounding to nearest */
    if (umpi_lt128(x, y))
        return umpi_f80_round(sb, e - 63, umpi_sub128(y, x));
    return umpi_f80_round(sa, e - 63, umpi_sub128(x, y));
}

UMPI_HD umpi_f80 umpi_f80_add(umpi_f80 a, umpi_f80 b) { return umpi_f80_addsub(a, b, 0); }
UMPI_HD umpi_f80 umpi_f80_sub(umpi_f80 a, umpi_f80 b) { return umpi_f80_addsub(a, b, 1); }

UMPI_HD umpi_f80 umpi_f80_mul(umpi_f80 a, umpi_f80 b)
{
    int ca = umpi_f80_class(a), cb = umpi_f80_class(b);
    if (ca >= UMPI_F80_NAN || cb >= UMPI_F80_NAN)
        return umpi_f80_nan_result(a, b);
    unsigned s = umpi_f80_sign(a) ^ umpi_f80_sign(b);
    if (ca == UMPI_F80_INF || cb == UMPI_F80_INF) {
        if (ca == UMPI_F80_ZERO || cb == UMPI_F80_ZERO)
            return umpi_f80_indefinite();
        return umpi_f80_make(s, UMPI_F80_EMAX, UMPI_F80_J);
    }
    if (ca == UMPI_F80_ZERO || cb == UMPI_F80_ZERO)
        return umpi_f80_make(s, 0, 0);
    return umpi_f80_round(s, umpi_f80_exp2(a) + umpi_f80_exp2(b), umpi_mul64(a.m, b.m));
}

/* -1, 0, 1, or 2 when unordered. Zeros of either sign are equal; a denormal and its
 * pseudo-denormal twin compare equal, like the numbers they are. */
UMPI_HD int umpi_f80_cmp(umpi_f80 a, umpi_f80 b)
{
    if (umpi_f80_is_nan(a) || umpi_f80_is_nan(b))
        return 2;
    int za = umpi_f80_class(a) == UMPI_F80_ZERO, zb = umpi_f80_class(b) == UMPI_F80_ZERO;
    if (za && zb)
        return 0;
    unsigned sa = umpi_f80_sign(a), sb = umpi_f80_sign(b);
    if (sa != sb)
        return sa ? -1 : 1;
    unsigned ea = a.se & 0x7fff, eb = b.se & 0x7fff;
    ea = ea ? ea : 1;
    eb = eb ? eb : 1;
    int mag = ea != eb ? (ea < eb ? -1 : 1) : a.m != b.m ? (a.m < b.m ? -1 : 1) : 0;
    return sa ? -mag : mag;
}

UMPI_HD bool umpi_f80_isinf(umpi_f80 x) { return umpi_f80_class(x) == UMPI_F80_INF; }
UMPI_HD umpi_f80 umpi_f80_copysign(umpi_f80 x, umpi_f80 s)
{
    x.se = (uint16_t) ((x.se & 0x7fff) | (s.se & 0x8000));
    return x;
}

#endif /* UMPI_CUDA_KERN_F80_H */
