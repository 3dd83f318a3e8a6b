/*
 * The bodies of umpi's GPU kernels, in C++ that both nvcc (device code, src/cuda/kernels.cu) and a
 * host C++ compiler (the unit test test/unit/kern_emu.cc, which runs them on the CPU against the
 * host kernels) compile. A body is what one thread does: body(args, tid, nthreads) walks a
 * grid-stride loop from tid by nthreads, touching nothing another thread touches, so running the
 * threads one after the other on the CPU computes exactly what the GPU computes.
 *
 * Arithmetic must match the host kernels of src/core/op_kernels.c bit for bit:
 *  - integers and the MAX/MIN/SUM/PROD of float and double: the same C expressions
 *    (UMPI_OP_EXPR_*), one IEEE operation each (nvcc runs with --fmad=false: nothing is fused);
 *  - complex products: gcc's expansion, (ac - bd) + (ad + bc)i, and when both parts are NaN the
 *    C standard's Annex G recovery of infinities (libgcc's __mulsc3 family), each operation
 *    rounded on its own (__fmul_rn & co. on the device);
 *  - long double (x87 80-bit extended on x86-64) has no GPU type: umpi_f80 (kern_f80.h) is a
 *    software implementation of the x87's add, subtract, multiply and compare.
 */
#ifndef UMPI_CUDA_KERN_BODY_H
#define UMPI_CUDA_KERN_BODY_H

#include "core/umpi_op_enum.h"
#include "cuda/kern_args.h"
#include "cuda/kern_f80.h"

#include <stdint.h>
#include <string.h>


/* ---- memory -------------------------------------------------------------------------------------- */

/* Aligned loads and stores: one typed access on the device; memcpy on the host (no aliasing
 * questions, the same single instruction). */
template <class T> UMPI_HD T umpi_ld(const char *p)
{
#ifdef __CUDA_ARCH__
    return *reinterpret_cast<const T *>(p);
#else
    T v;
    memcpy(&v, p, sizeof(T));
    return v;
#endif
}

template <class T> UMPI_HD void umpi_st(char *p, const T &v)
{
#ifdef __CUDA_ARCH__
    *reinterpret_cast<T *>(p) = v;
#else
    memcpy(p, &v, sizeof(T));
#endif
}

/* Byte by byte, for addresses the type's alignment does not divide (the GPU faults on misaligned
 * accesses where the CPU only slows down). */
UMPI_HD void umpi_bytes(char *d, const char *s, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        d[i] = s[i];
}

struct alignas(16) umpi_w16 {
    uint64_t a, b;
};
template <unsigned W> struct umpi_word;
template <> struct umpi_word<1> { typedef uint8_t type; };
template <> struct umpi_word<2> { typedef uint16_t type; };
template <> struct umpi_word<4> { typedef uint32_t type; };
template <> struct umpi_word<8> { typedef uint64_t type; };
template <> struct umpi_word<16> { typedef umpi_w16 type; };

template <unsigned W> UMPI_HD void umpi_move(char *d, const char *s)
{
    typedef typename umpi_word<W>::type T;
    umpi_st<T>(d, umpi_ld<T>(s));
}

/* ---- element types -------------------------------------------------------------------------------- */

/* The host's complex types: two parts, the alignment of one (long double's is 16). */
struct umpi_c32 {
    float re, im;
};
struct umpi_c64 {
    double re, im;
};
struct alignas(16) umpi_c80 {
    umpi_f80 re, im;
};

/* Device type of each scalar kernel type of UMPI_OP_CTYPES (a kernel type missing here stops
 * nvcc: a new host type needs its device type). */
#define UMPI_KDEV_i8 int8_t
#define UMPI_KDEV_u8 uint8_t
#define UMPI_KDEV_i16 int16_t
#define UMPI_KDEV_u16 uint16_t
#define UMPI_KDEV_i32 int32_t
#define UMPI_KDEV_u32 uint32_t
#define UMPI_KDEV_i64 int64_t
#define UMPI_KDEV_u64 uint64_t
#define UMPI_KDEV_f32 float
#define UMPI_KDEV_f64 double
#define UMPI_KDEV_f80 umpi_f80
#define UMPI_KDEV_c32 umpi_c32
#define UMPI_KDEV_c64 umpi_c64
#define UMPI_KDEV_c80 umpi_c80
#define UMPI_KDEV_b8 uint8_t
#define UMPI_KDEV_b32 int32_t

/* Device types of the value and the index of each pair kernel type of UMPI_OP_PAIRS (the host's
 * C types stay out of device code: long double is not a device type). */
struct umpi_kpair_float_int { typedef float V; typedef int32_t I; };
struct umpi_kpair_double_int { typedef double V; typedef int32_t I; };
struct umpi_kpair_long_int { typedef int64_t V; typedef int32_t I; };
struct umpi_kpair_short_int { typedef int16_t V; typedef int32_t I; };
struct umpi_kpair_ldouble_int { typedef umpi_f80 V; typedef int32_t I; };
struct umpi_kpair_int_int { typedef int32_t V; typedef int32_t I; };
struct umpi_kpair_float_float { typedef float V; typedef float I; };
struct umpi_kpair_double_double { typedef double V; typedef double I; };

/*
 * How an element is loaded and stored: umpi_kmem<D>::align is the alignment the aligned path
 * needs; ld/st are aligned accesses; st writes what the host kernel writes (10 bytes of a long
 * double, not its padding); copy moves a pair's value whole, padding included, as the host's
 * memcpy does.
 */
template <class D> struct umpi_kmem {
    static const unsigned align = alignof(D);
    UMPI_HD static D ld(const char *p) { return umpi_ld<D>(p); }
    UMPI_HD static void st(char *p, const D &v) { umpi_st<D>(p, v); }
    UMPI_HD static void copy(char *d, const char *s) { umpi_st<D>(d, umpi_ld<D>(s)); }
};

template <> struct umpi_kmem<umpi_f80> {
    static const unsigned align = 8;
    UMPI_HD static umpi_f80 ld(const char *p)
    {
        umpi_f80 r;
        r.m = umpi_ld<uint64_t>(p);
        r.se = umpi_ld<uint16_t>(p + 8);
        r.pad_[0] = r.pad_[1] = r.pad_[2] = 0;
        return r;
    }
    UMPI_HD static void st(char *p, const umpi_f80 &v)
    {
        umpi_st<uint64_t>(p, v.m);
        umpi_st<uint16_t>(p + 8, v.se);
    }
    UMPI_HD static void copy(char *d, const char *s)
    {
        umpi_st<uint64_t>(d, umpi_ld<uint64_t>(s));
        umpi_st<uint64_t>(d + 8, umpi_ld<uint64_t>(s + 8));
    }
};

template <> struct umpi_kmem<umpi_c80> {
    static const unsigned align = 8;
    UMPI_HD static umpi_c80 ld(const char *p)
    {
        umpi_c80 r;
        r.re = umpi_kmem<umpi_f80>::ld(p);
        r.im = umpi_kmem<umpi_f80>::ld(p + 16);
        return r;
    }
    UMPI_HD static void st(char *p, const umpi_c80 &v)
    {
        umpi_kmem<umpi_f80>::st(p, v.re);
        umpi_kmem<umpi_f80>::st(p + 16, v.im);
    }
    UMPI_HD static void copy(char *d, const char *s)
    {
        umpi_kmem<umpi_f80>::copy(d, s);
        umpi_kmem<umpi_f80>::copy(d + 16, s + 16);
    }
};

/* Misaligned: through an aligned copy of the element's bytes. */
template <class D> UMPI_HD D umpi_kld_u(const char *p)
{
    umpi_w16 tmp[(sizeof(D) + 15) / 16];
    umpi_bytes((char *) tmp, p, sizeof(D));
    return umpi_kmem<D>::ld((const char *) tmp);
}
template <class D> UMPI_HD void umpi_kst_u(char *p, const D &v)
{
    umpi_w16 tmp[(sizeof(D) + 15) / 16];
    umpi_bytes((char *) tmp, p, sizeof(D));   /* what st leaves alone stays as it was */
    umpi_kmem<D>::st((char *) tmp, v);
    umpi_bytes(p, (const char *) tmp, sizeof(D));
}

/* Elements per 16-byte vector, 0 where the type is not moved by whole vectors. */
template <class D> struct umpi_kvec {
    static const unsigned n = (sizeof(D) & (sizeof(D) - 1)) == 0 && sizeof(D) <= 16 ? 16 / sizeof(D) : 0;
};
template <> struct umpi_kvec<umpi_f80> { static const unsigned n = 0; };

template <class D, unsigned V> struct alignas(16) umpi_kv {
    D e[V];
};

/* ---- the real operations behind complex arithmetic -------------------------------------------- */

UMPI_HD bool umpi_isnan_f(float x) { return x != x; }
UMPI_HD bool umpi_isnan_d(double x) { return x != x; }
UMPI_HD bool umpi_isinf_f(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (u & 0x7fffffffu) == 0x7f800000u;
}
UMPI_HD bool umpi_isinf_d(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return (u & 0x7fffffffffffffffULL) == 0x7ff0000000000000ULL;
}
UMPI_HD float umpi_copysign_f(float x, float s)
{
    uint32_t u, v;
    memcpy(&u, &x, 4);
    memcpy(&v, &s, 4);
    u = (u & 0x7fffffffu) | (v & 0x80000000u);
    memcpy(&x, &u, 4);
    return x;
}
UMPI_HD double umpi_copysign_d(double x, double s)
{
    uint64_t u, v;
    memcpy(&u, &x, 8);
    memcpy(&v, &s, 8);
    u = (u & 0x7fffffffffffffffULL) | (v & 0x8000000000000000ULL);
    memcpy(&x, &u, 8);
    return x;
}

struct umpi_rf {
    typedef float T;
#ifdef __CUDA_ARCH__
    UMPI_HD static T mul(T a, T b) { return __fmul_rn(a, b); }
    UMPI_HD static T add(T a, T b) { return __fadd_rn(a, b); }
    UMPI_HD static T sub(T a, T b) { return __fsub_rn(a, b); }
#else
    UMPI_HD static T mul(T a, T b) { return a * b; }
    UMPI_HD static T add(T a, T b) { return a + b; }
    UMPI_HD static T sub(T a, T b) { return a - b; }
#endif
    UMPI_HD static bool isnan(T x) { return umpi_isnan_f(x); }
    UMPI_HD static bool isinf(T x) { return umpi_isinf_f(x); }
    UMPI_HD static T copysign(T x, T s) { return umpi_copysign_f(x, s); }
    UMPI_HD static T zero(void) { return 0.0f; }
    UMPI_HD static T one(void) { return 1.0f; }
    UMPI_HD static T inf(void)
    {
        uint32_t u = 0x7f800000u;
        T x;
        memcpy(&x, &u, 4);
        return x;
    }
};

struct umpi_rd {
    typedef double T;
#ifdef __CUDA_ARCH__
    UMPI_HD static T mul(T a, T b) { return __dmul_rn(a, b); }
    UMPI_HD static T add(T a, T b) { return __dadd_rn(a, b); }
    UMPI_HD static T sub(T a, T b) { return __dsub_rn(a, b); }
#else
    UMPI_HD static T mul(T a, T b) { return a * b; }
    UMPI_HD static T add(T a, T b) { return a + b; }
    UMPI_HD static T sub(T a, T b) { return a - b; }
#endif
    UMPI_HD static bool isnan(T x) { return umpi_isnan_d(x); }
    UMPI_HD static bool isinf(T x) { return umpi_isinf_d(x); }
    UMPI_HD static T copysign(T x, T s) { return umpi_copysign_d(x, s); }
    UMPI_HD static T zero(void) { return 0.0; }
    UMPI_HD static T one(void) { return 1.0; }
    UMPI_HD static T inf(void)
    {
        uint64_t u = 0x7ff0000000000000ULL;
        T x;
        memcpy(&x, &u, 8);
        return x;
    }
};

struct umpi_rx {
    typedef umpi_f80 T;
    UMPI_HD static T mul(T a, T b) { return umpi_f80_mul(a, b); }
    UMPI_HD static T add(T a, T b) { return umpi_f80_add(a, b); }
    UMPI_HD static T sub(T a, T b) { return umpi_f80_sub(a, b); }
    UMPI_HD static bool isnan(T x) { return umpi_f80_is_nan(x); }
    UMPI_HD static bool isinf(T x) { return umpi_f80_isinf(x); }
    UMPI_HD static T copysign(T x, T s) { return umpi_f80_copysign(x, s); }
    UMPI_HD static T zero(void) { return umpi_f80_make(0, 0, 0); }
    UMPI_HD static T one(void) { return umpi_f80_make(0, UMPI_F80_BIAS, UMPI_F80_J); }
    UMPI_HD static T inf(void) { return umpi_f80_make(0, UMPI_F80_EMAX, UMPI_F80_J); }
};

/* (a + bi)(c + di) as C computes it (Annex G: infinities are recovered from NaN results). */
template <class R>
UMPI_HD void umpi_cmul(typename R::T a, typename R::T b, typename R::T c, typename R::T d, typename R::T &x,
                       typename R::T &y)
{
    typedef typename R::T T;
    T ac = R::mul(a, c), bd = R::mul(b, d), ad = R::mul(a, d), bc = R::mul(b, c);
    x = R::sub(ac, bd);
    y = R::add(ad, bc);
    if (!(R::isnan(x) && R::isnan(y)))
        return;
    bool recalc = false;
    if (R::isinf(a) || R::isinf(b)) {   /* (a + bi) infinite: a box of unit size around it */
        a = R::copysign(R::isinf(a) ? R::one() : R::zero(), a);
        b = R::copysign(R::isinf(b) ? R::one() : R::zero(), b);
        if (R::isnan(c))
            c = R::copysign(R::zero(), c);
        if (R::isnan(d))
            d = R::copysign(R::zero(), d);
        recalc = true;
    }
    if (R::isinf(c) || R::isinf(d)) {
        c = R::copysign(R::isinf(c) ? R::one() : R::zero(), c);
        d = R::copysign(R::isinf(d) ? R::one() : R::zero(), d);
        if (R::isnan(a))
            a = R::copysign(R::zero(), a);
        if (R::isnan(b))
            b = R::copysign(R::zero(), b);
        recalc = true;
    }
    if (!recalc && (R::isinf(ac) || R::isinf(bd) || R::isinf(ad) || R::isinf(bc))) {
        /* overflow of a partial product: recover infinities from it */
        if (R::isnan(a))
            a = R::copysign(R::zero(), a);
        if (R::isnan(b))
            b = R::copysign(R::zero(), b);
        if (R::isnan(c))
            c = R::copysign(R::zero(), c);
        if (R::isnan(d))
            d = R::copysign(R::zero(), d);
        recalc = true;
    }
    if (recalc) {
        x = R::mul(R::inf(), R::sub(R::mul(a, c), R::mul(b, d)));
        y = R::mul(R::inf(), R::add(R::mul(a, d), R::mul(b, c)));
    }
}

/* ---- the operations ------------------------------------------------------------------------------- */

/* x op y, x from `in`, y from `inout`: the host's expressions for every type that has them ... */
#define UMPI__KOP_GENERIC(OP)                                                                     \
    template <class T> UMPI_HD T umpi_k_##OP(T x, T y) { return (T) UMPI_OP_EXPR_##OP(x, y); }
UMPI__KOP_GENERIC(MAX)
UMPI__KOP_GENERIC(MIN)
UMPI__KOP_GENERIC(SUM)
UMPI__KOP_GENERIC(PROD)
UMPI__KOP_GENERIC(LAND)
UMPI__KOP_GENERIC(LOR)
UMPI__KOP_GENERIC(LXOR)
UMPI__KOP_GENERIC(BAND)
UMPI__KOP_GENERIC(BOR)
UMPI__KOP_GENERIC(BXOR)

/* ... and for the types that C's operators do not cover here. */
UMPI_HD umpi_f80 umpi_k_MAX(umpi_f80 x, umpi_f80 y) { return umpi_f80_cmp(x, y) == 1 ? x : y; }
UMPI_HD umpi_f80 umpi_k_MIN(umpi_f80 x, umpi_f80 y) { return umpi_f80_cmp(x, y) == -1 ? x : y; }
UMPI_HD umpi_f80 umpi_k_SUM(umpi_f80 x, umpi_f80 y) { return umpi_f80_add(x, y); }
UMPI_HD umpi_f80 umpi_k_PROD(umpi_f80 x, umpi_f80 y) { return umpi_f80_mul(x, y); }

UMPI_HD umpi_c32 umpi_k_SUM(umpi_c32 x, umpi_c32 y)
{
    umpi_c32 r = {umpi_rf::add(x.re, y.re), umpi_rf::add(x.im, y.im)};
    return r;
}
UMPI_HD umpi_c64 umpi_k_SUM(umpi_c64 x, umpi_c64 y)
{
    umpi_c64 r = {umpi_rd::add(x.re, y.re), umpi_rd::add(x.im, y.im)};
    return r;
}
UMPI_HD umpi_c80 umpi_k_SUM(umpi_c80 x, umpi_c80 y)
{
    umpi_c80 r;
    r.re = umpi_f80_add(x.re, y.re);
    r.im = umpi_f80_add(x.im, y.im);
    return r;
}
UMPI_HD umpi_c32 umpi_k_PROD(umpi_c32 x, umpi_c32 y)
{
    umpi_c32 r;
    umpi_cmul<umpi_rf>(x.re, x.im, y.re, y.im, r.re, r.im);
    return r;
}
UMPI_HD umpi_c64 umpi_k_PROD(umpi_c64 x, umpi_c64 y)
{
    umpi_c64 r;
    umpi_cmul<umpi_rd>(x.re, x.im, y.re, y.im, r.re, r.im);
    return r;
}
UMPI_HD umpi_c80 umpi_k_PROD(umpi_c80 x, umpi_c80 y)
{
    umpi_c80 r;
    umpi_cmul<umpi_rx>(x.re, x.im, y.re, y.im, r.re, r.im);
    return r;
}

/* The ops as types, for the kernel templates. */
#define UMPI__KOP_FUNCTOR(OP)                                                                     \
    struct umpi_kf_##OP {                                                                         \
        template <class T> UMPI_HD static T ap(T x, T y) { return umpi_k_##OP(x, y); }            \
    };
UMPI__KOP_FUNCTOR(MAX)
UMPI__KOP_FUNCTOR(MIN)
UMPI__KOP_FUNCTOR(SUM)
UMPI__KOP_FUNCTOR(PROD)
UMPI__KOP_FUNCTOR(LAND)
UMPI__KOP_FUNCTOR(LOR)
UMPI__KOP_FUNCTOR(LXOR)
UMPI__KOP_FUNCTOR(BAND)
UMPI__KOP_FUNCTOR(BOR)
UMPI__KOP_FUNCTOR(BXOR)

/* Comparisons of MINLOC/MAXLOC values and indices. */
template <class T> UMPI_HD bool umpi_kgt(T a, T b) { return a > b; }
template <class T> UMPI_HD bool umpi_klt(T a, T b) { return a < b; }
template <class T> UMPI_HD bool umpi_keq(T a, T b) { return a == b; }
UMPI_HD bool umpi_kgt(umpi_f80 a, umpi_f80 b) { return umpi_f80_cmp(a, b) == 1; }
UMPI_HD bool umpi_klt(umpi_f80 a, umpi_f80 b) { return umpi_f80_cmp(a, b) == -1; }
UMPI_HD bool umpi_keq(umpi_f80 a, umpi_f80 b) { return umpi_f80_cmp(a, b) == 0; }

/* ---- reduction bodies --------------------------------------------------------------------------------- */

/*
 * inout[i] = in[i] op inout[i] on scalars. Three paths, chosen once per launch from the two
 * addresses: whole 16-byte vectors when both are 16-byte aligned (one 128-bit load per operand
 * per thread), the element's own alignment, or bytes.
 */
template <class D, class F>
UMPI_HD void umpi_kred_scalar(const umpi_kred_args &a, uint64_t tid, uint64_t nth)
{
    const char *in = (const char *) (uintptr_t) a.in;
    char *io = (char *) (uintptr_t) a.inout;
    const uint64_t n = a.n;
    const uintptr_t any = (uintptr_t) in | (uintptr_t) io;
    uint64_t i = tid;
    const unsigned V = umpi_kvec<D>::n ? umpi_kvec<D>::n : 1;
    if (umpi_kvec<D>::n != 0 && (any & 15) == 0) {
        typedef umpi_kv<D, V> vec;
        const uint64_t nv = n / V;
        for (uint64_t v = tid; v < nv; v += nth) {
            vec x = umpi_ld<vec>(in + 16 * v), y = umpi_ld<vec>(io + 16 * v);
            for (unsigned j = 0; j < V; j++)
                y.e[j] = F::ap(x.e[j], y.e[j]);
            umpi_st<vec>(io + 16 * v, y);
        }
        i = nv * V + tid;
    }
    if (any % umpi_kmem<D>::align == 0) {
        for (; i < n; i += nth) {
            D x = umpi_kmem<D>::ld(in + i * sizeof(D)), y = umpi_kmem<D>::ld(io + i * sizeof(D));
            umpi_kmem<D>::st(io + i * sizeof(D), F::ap(x, y));
        }
    } else {
        for (; i < n; i += nth) {
            D x = umpi_kld_u<D>(in + i * sizeof(D)), y = umpi_kld_u<D>(io + i * sizeof(D));
            umpi_kst_u<D>(io + i * sizeof(D), F::ap(x, y));
        }
    }
}

/*
 * MINLOC (MAX false) / MAXLOC on (value, index) pairs `stride` bytes apart, the index `ioff`
 * bytes after the value: the better value wins with its index; on a tie the smaller index (MPI
 * 4.1 sec. 6.9.4), exactly the host kernel's rule.
 */
template <class V, class I, bool MAX>
UMPI_HD void umpi_kred_pair(const umpi_kred_args &a, uint64_t tid, uint64_t nth)
{
    const char *in = (const char *) (uintptr_t) a.in;
    char *io = (char *) (uintptr_t) a.inout;
    const uint64_t n = a.n, st = a.stride, ioff = a.ioff;
    const bool aligned = (((uintptr_t) in | (uintptr_t) io | st) % umpi_kmem<V>::align) == 0 &&
                         (((uintptr_t) in | (uintptr_t) io | st | ioff) % umpi_kmem<I>::align) == 0;
    for (uint64_t k = tid; k < n; k += nth) {
        const char *p = in + k * st;
        char *q = io + k * st;
        V x, y;
        I ix, iy;
        if (aligned) {
            x = umpi_kmem<V>::ld(p);
            y = umpi_kmem<V>::ld(q);
            ix = umpi_kmem<I>::ld(p + ioff);
            iy = umpi_kmem<I>::ld(q + ioff);
        } else {
            x = umpi_kld_u<V>(p);
            y = umpi_kld_u<V>(q);
            ix = umpi_kld_u<I>(p + ioff);
            iy = umpi_kld_u<I>(q + ioff);
        }
        bool better = MAX ? umpi_kgt(x, y) : umpi_klt(x, y);
        bool index = better || (umpi_keq(x, y) && umpi_klt(ix, iy));
        if (better) {
            if (aligned)
                umpi_kmem<V>::copy(q, p);
            else
                umpi_bytes(q, p, sizeof(V));
        }
        if (index) {
            if (aligned)
                umpi_kmem<I>::st(q + ioff, ix);
            else
                umpi_bytes(q + ioff, p + ioff, sizeof(I));
        }
    }
}

/* ---- pack bodies ----------------------------------------------------------------------------------- */

/* Fixed shape (struct umpi_kpack_vec), one W-byte word per thread and step. */
template <unsigned W>
UMPI_HD void umpi_kpack_vec_body(const umpi_kpack_vec &a, uint64_t tid, uint64_t nth)
{
    char *typed = (char *) (uintptr_t) a.typed, *packed = (char *) (uintptr_t) a.packed;
    const uint64_t wpb = a.blen / W, nblk = a.nblk, total = a.nelem * nblk * wpb;
    for (uint64_t g = tid; g < total; g += nth) {
        uint64_t blk = g / wpb, w = g - blk * wpb;   /* blk counts blocks over all elements */
        uint64_t e = blk / nblk, b = blk - e * nblk;
        char *t = typed + (int64_t) e * a.estride + (int64_t) b * a.bstride + w * W;
        char *p = packed + blk * a.blen + w * W;
        if (a.unpack)
            umpi_move<W>(t, p);
        else
            umpi_move<W>(p, t);
    }
}

/* len bytes from s to d, by `lanes` threads of which this is `lane`, in the widest words the
 * addresses and the length allow. */
UMPI_HD void umpi_kcopy_lanes(char *d, const char *s, uint64_t len, uint64_t lane, uint64_t lanes)
{
    uintptr_t al = (uintptr_t) d | (uintptr_t) s | (uintptr_t) len;
    if ((al & 15) == 0) {
        for (uint64_t o = lane * 16; o < len; o += lanes * 16)
            umpi_move<16>(d + o, s + o);
    } else if ((al & 7) == 0) {
        for (uint64_t o = lane * 8; o < len; o += lanes * 8)
            umpi_move<8>(d + o, s + o);
    } else if ((al & 3) == 0) {
        for (uint64_t o = lane * 4; o < len; o += lanes * 4)
            umpi_move<4>(d + o, s + o);
    } else if ((al & 1) == 0) {
        for (uint64_t o = lane * 2; o < len; o += lanes * 2)
            umpi_move<2>(d + o, s + o);
    } else {
        for (uint64_t o = lane; o < len; o += lanes)
            d[o] = s[o];
    }
}

/* Any datatype (struct umpi_kpack_gen): `lanes` threads per block of the type map. */
UMPI_HD void umpi_kpack_gen_body(const umpi_kpack_gen &a, uint64_t tid, uint64_t nth)
{
    const umpi_kpack_op *ops = (const umpi_kpack_op *) (uintptr_t) a.ops;
    char *typed = (char *) (uintptr_t) a.typed, *packed = (char *) (uintptr_t) a.packed;
    const uint64_t lanes = a.lanes, nb = a.nblocks, total = a.nsub * nb * lanes;
    for (uint64_t g = tid; g < total; g += nth) {
        uint64_t bg = g / lanes, lane = g - bg * lanes;
        uint64_t sub = bg / nb, b = bg - sub * nb;
        uint64_t e = sub / a.loop, s = sub - e * a.loop;
        int64_t disp;
        uint64_t len, poff;
        if (a.uniform_len != 0) {
            len = a.uniform_len;
            disp = ops[b].disp;
            poff = b * len;
        } else {
            uint64_t lo = 0, hi = a.nops - 1;   /* the last op with bfirst <= b */
            while (lo < hi) {
                uint64_t mid = (lo + hi + 1) / 2;
                if (ops[mid].bfirst <= b)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            const umpi_kpack_op &o = ops[lo];
            uint64_t j = b - o.bfirst;
            len = (uint64_t) o.len;
            disp = o.disp + (int64_t) j * o.stride;
            poff = o.poff + j * len;
        }
        char *t = typed + (int64_t) e * a.ext + (int64_t) s * a.lstride + disp;
        char *p = packed + sub * a.subsize + poff;
        if (a.unpack)
            umpi_kcopy_lanes(t, p, len, lane, lanes);
        else
            umpi_kcopy_lanes(p, t, len, lane, lanes);
    }
}

/* ---- the kernel list ----------------------------------------------------------------------------------- */

/*
 * UMPI_KERN_REDUCTIONS(S, P) expands S(OP, ktype, D) for every scalar kernel and
 * P(OP, ktype, V, I, MAX) for every pair kernel, from the enumerations of umpi_op_enum.h: the
 * device kernels (kernels.cu) and the CPU emulation of the unit tests are both this list.
 */
#define UMPI__KS_OP(OP, ktype, unused) UMPI_KERN_SCALAR(OP, ktype, UMPI_KDEV_##ktype)
#define UMPI__KS_ROW(ktype, ctype, CLASS) UMPI_OPS_##CLASS(UMPI__KS_OP, ktype, ~)
#define UMPI__KP_ROW(ktype, CV, CI)                                                               \
    UMPI_KERN_PAIR(MINLOC, ktype, umpi_kpair_##ktype::V, umpi_kpair_##ktype::I, false, CV, CI)    \
    UMPI_KERN_PAIR(MAXLOC, ktype, umpi_kpair_##ktype::V, umpi_kpair_##ktype::I, true, CV, CI)
/* Before expanding, define UMPI_KERN_SCALAR(OP, ktype, D) and
 * UMPI_KERN_PAIR(OP, ktype, V, I, MAX, CV, CI); CV and CI are the host's C types (for checks in
 * host code only). */
#define UMPI_KERN_REDUCTIONS UMPI_OP_CTYPES(UMPI__KS_ROW) UMPI_OP_PAIRS(UMPI__KP_ROW)

#endif /* UMPI_CUDA_KERN_BODY_H */
