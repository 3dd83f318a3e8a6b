/*
 * The pack engine: compiles a datatype into strided runs (umpi_obj.h, umpi_dt_op_t) and packs or
 * unpacks any byte range of the packed stream with them.
 *
 *   type tree (contents)  --umpi_dtype_compile-->  ops of one element, in type-map order
 *                                                  [disp, len, count, stride] ...
 *   pack_range(offset, len): element = offset / size, op by binary search of op_off[],
 *                            block = rest / len; then whole blocks in a tight loop per op.
 *
 * Repetition is folded while compiling: a run repeated with a stride becomes one op, an op
 * repeated where its own pattern continues becomes a longer op, and runs that touch merge. A
 * vector of any count is therefore one op, and its packing one loop with fixed-size copies for
 * the usual block sizes (the compiler turns memcpy of a constant 8 into one load and store).
 */
#include "core/umpi_obj.h"
#include "core/umpi_knobs.h"

#include <stdlib.h>
#include <string.h>

/* ---- compiling ------------------------------------------------------------------------------- */

struct umpi__oplist {
    umpi_dt_op_t *v;
    MPI_Count n, cap;
};

static umpi_status_t umpi__push(struct umpi__oplist *l, umpi_dt_op_t o)
{
    if (o.len == 0 || o.count == 0)
        return UMPI_OK;
    if (o.count > 1 && o.stride == o.len) {
        o.len *= o.count;
        o.count = 1;
    }
    if (l->n > 0) {
        umpi_dt_op_t *p = &l->v[l->n - 1];
        if (p->count == 1 && o.count == 1 && p->disp + p->len == o.disp) {
            p->len += o.len;
            return UMPI_OK;
        }
        if (o.count == 1 && o.len == p->len && p->count == 1) {
            p->stride = o.disp - p->disp;
            p->count = 2;
            return UMPI_OK;
        }
        if (o.len == p->len && p->count > 1 && (o.count == 1 || o.stride == p->stride) &&
            o.disp == p->disp + p->count * p->stride) {
            p->count += o.count;
            return UMPI_OK;
        }
    }
    if (l->n == l->cap) {
        MPI_Count cap = l->cap ? 2 * l->cap : 8;
        umpi_dt_op_t *v = realloc(l->v, (size_t) cap * sizeof(*v));
        if (v == NULL)
            return UMPI_ERR_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    if (o.count == 1)
        o.stride = 0;
    l->v[l->n++] = o;
    return UMPI_OK;
}

/* Appends reps copies of the ops src[0..n) at base, base + stride, ... */
static umpi_status_t umpi__rep(struct umpi__oplist *dst, const umpi_dt_op_t *src, MPI_Count n,
                               MPI_Aint base, MPI_Count reps, MPI_Aint stride)
{
    if (reps <= 0 || n == 0)
        return UMPI_OK;
    if (n == 1) {
        umpi_dt_op_t o = src[0];
        o.disp += base;
        if (reps == 1)
            return umpi__push(dst, o);
        if (o.count == 1)
            return umpi__push(dst, (umpi_dt_op_t) {o.disp, o.len, reps, stride});
        if (o.count * o.stride == stride)
            return umpi__push(dst, (umpi_dt_op_t) {o.disp, o.len, o.count * reps, o.stride});
    }
    for (MPI_Count r = 0; r < reps; r++) {
        for (MPI_Count k = 0; k < n; k++) {
            umpi_dt_op_t o = src[k];
            o.disp += base + r * stride;
            umpi_status_t st = umpi__push(dst, o);
            if (st != UMPI_OK)
                return st;
        }
    }
    return UMPI_OK;
}

/* Ops of one element of t (compiled on demand; builtins from their blocks). */
static umpi_status_t umpi__ops_of(umpi_dtype_t *t, const umpi_dt_op_t **ops, MPI_Count *n,
                                  umpi_dt_op_t tmp[2])
{
    if (t->builtin) {
        int k = 0;
        for (int b = 0; b < t->nblocks; b++)
            if (t->blocks[b].len > 0)
                tmp[k++] = (umpi_dt_op_t) {t->blocks[b].disp, t->blocks[b].len, 1, 0};
        *ops = tmp;
        *n = k;
        return UMPI_OK;
    }
    umpi_status_t st = umpi_dtype_compile(t);
    *ops = t->ops;
    *n = t->nops;
    return st;
}

/* Appends reps elements of t at base, base + stride, ... */
static umpi_status_t umpi__rep_type(struct umpi__oplist *dst, umpi_dtype_t *t, MPI_Aint base,
                                    MPI_Count reps, MPI_Aint stride)
{
    umpi_dt_op_t tmp[2];
    const umpi_dt_op_t *ops;
    MPI_Count n;
    umpi_status_t st = umpi__ops_of(t, &ops, &n, tmp);
    if (st != UMPI_OK || t->builtin || t->loop_count <= 1)
        return st != UMPI_OK ? st : umpi__rep(dst, ops, n, base, reps, stride);
    /* a looped type inside another: its element written out first */
    struct umpi__oplist one = {0};
    st = umpi__rep(&one, ops, n, 0, t->loop_count, t->loop_stride);
    if (st == UMPI_OK)
        st = umpi__rep(dst, one.v, one.n, base, reps, stride);
    free(one.v);
    return st;
}

/* Above this many ops, a repetition of several ops becomes the outer loop of the type. */
#define UMPI__FLAT_MAX 16

/* count repetitions by stride of the ops of `block` as the whole element: flat, or the loop. */
static umpi_status_t umpi__rep_top(umpi_dtype_t *dt, struct umpi__oplist *dst, struct umpi__oplist *block,
                                   MPI_Count count, MPI_Aint stride)
{
    if (block->n > 1 && count > 1 && block->n * count > UMPI__FLAT_MAX) {
        *dst = *block;
        *block = (struct umpi__oplist) {0};
        dt->loop_count = count;
        dt->loop_stride = stride;
        return UMPI_OK;
    }
    return umpi__rep(dst, block->v, block->n, 0, count, stride);
}

/* Subarray: dims from the slowest to the fastest, each a repetition of the next. */
static umpi_status_t umpi__subarray(struct umpi__oplist *dst, umpi_dtype_t *dt)
{
    int nd = dt->ints[0], order = dt->ints[1];
    const MPI_Count *sizes = dt->counts, *subs = dt->counts + nd, *starts = dt->counts + 2 * nd;
    umpi_dtype_t *old = dt->types[0];
    struct umpi__oplist cur = {0}, next = {0};
    MPI_Aint stride = old->extent;
    umpi_status_t st = UMPI_OK;
    for (int i = 0; i < nd && st == UMPI_OK; i++) {
        int d = order == MPI_ORDER_C ? nd - 1 - i : i; /* fastest dimension first */
        if (i == 0)
            st = umpi__rep_type(&next, old, starts[d] * stride, subs[d], stride);
        else
            st = umpi__rep(&next, cur.v, cur.n, starts[d] * stride, subs[d], stride);
        stride *= sizes[d];
        free(cur.v);
        cur = next;
        next = (struct umpi__oplist) {0};
    }
    *dst = cur;
    return st;
}

umpi_status_t umpi_dtype_compile(umpi_dtype_t *dt)
{
    if (dt->builtin || dt->ops != NULL || dt->size == 0)
        return UMPI_OK;
    struct umpi__oplist l = {0};
    const MPI_Count *c = dt->counts;
    umpi_dtype_t *old = dt->n_types ? dt->types[0] : NULL;
    umpi_status_t st = UMPI_OK;
    MPI_Count n;

    switch (dt->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        st = umpi__rep_type(&l, old, 0, 1, 0);
        break;
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        /* a block of bl (1 for contiguous) elements, repeated */
        struct umpi__oplist block = {0};
        MPI_Count bl = dt->combiner == MPI_COMBINER_CONTIGUOUS ? 1 : c[1];
        MPI_Count count = c[0];
        MPI_Aint stride = dt->combiner == MPI_COMBINER_CONTIGUOUS ? old->extent
                          : dt->combiner == MPI_COMBINER_VECTOR   ? c[2] * old->extent
                                                                  : c[2];
        st = umpi__rep_type(&block, old, 0, bl, old->extent);
        if (st == UMPI_OK)
            st = umpi__rep_top(dt, &l, &block, count, stride);
        free(block.v);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        n = c[0];
        for (MPI_Count i = 0; i < n && st == UMPI_OK; i++) {
            MPI_Aint disp = c[1 + n + i] * (dt->combiner == MPI_COMBINER_INDEXED ? old->extent : 1);
            st = umpi__rep_type(&l, old, disp, c[1 + i], old->extent);
        }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        n = c[0];
        for (MPI_Count i = 0; i < n && st == UMPI_OK; i++) {
            MPI_Aint disp = c[2 + i] * (dt->combiner == MPI_COMBINER_INDEXED_BLOCK ? old->extent : 1);
            st = umpi__rep_type(&l, old, disp, c[1], old->extent);
        }
        break;
    case MPI_COMBINER_STRUCT:
        n = c[0];
        for (MPI_Count i = 0; i < n && st == UMPI_OK; i++)
            st = umpi__rep_type(&l, dt->types[i], c[1 + n + i], c[1 + i], dt->types[i]->extent);
        break;
    case MPI_COMBINER_SUBARRAY:
        st = umpi__subarray(&l, dt);
        break;
    case MPI_COMBINER_DARRAY:
        st = umpi__rep_type(&l, dt->shadow, 0, 1, 0);
        break;
    default:
        st = UMPI_ERR_INTERN;
        umpi_status_msg("cannot compile datatype combiner %d", dt->combiner);
    }
    MPI_Count *off = st == UMPI_OK ? malloc((size_t) (l.n + 1) * sizeof(*off)) : NULL;
    if (off == NULL) {
        free(l.v);
        return st == UMPI_OK ? UMPI_ERR_NOMEM : st;
    }
    off[0] = 0;
    for (MPI_Count k = 0; k < l.n; k++)
        off[k + 1] = off[k] + l.v[k].len * l.v[k].count;
    dt->ops = l.v;
    dt->nops = l.n;
    dt->op_off = off;
    if (dt->loop_count < 1)
        dt->loop_count = 1;
    /* count elements are one run when one element is one run that the next one continues */
    dt->contig = l.n == 1 && dt->loop_count == 1 && l.v[0].count == 1 && dt->extent == dt->size &&
                 l.v[0].disp == dt->true_lb;
    return UMPI_OK;
}

/* ---- packing --------------------------------------------------------------------------------- */

/* n blocks of len bytes, stride apart on the type side, packed back to back on the other. Fixed
 * sizes go four blocks at a time, all loads before the stores, so that the loads of the strided
 * side overlap (measured: 1.5-1.7x memcpy time for 8-byte blocks at stride 16, against 2.0x one
 * block at a time). */
#define UMPI__BLOCKS4(LEN, UNPACK)                                                                \
    for (; n >= 4; n -= 4, t += 4 * stride, p += 4 * (LEN)) {                                     \
        struct { char b[LEN]; } x0, x1, x2, x3;                                                   \
        if (UNPACK) {                                                                             \
            memcpy(&x0, p, LEN), memcpy(&x1, p + (LEN), LEN);                                     \
            memcpy(&x2, p + 2 * (LEN), LEN), memcpy(&x3, p + 3 * (LEN), LEN);                     \
            memcpy(t, &x0, LEN), memcpy(t + stride, &x1, LEN);                                    \
            memcpy(t + 2 * stride, &x2, LEN), memcpy(t + 3 * stride, &x3, LEN);                   \
        } else {                                                                                  \
            memcpy(&x0, t, LEN), memcpy(&x1, t + stride, LEN);                                    \
            memcpy(&x2, t + 2 * stride, LEN), memcpy(&x3, t + 3 * stride, LEN);                   \
            memcpy(p, &x0, LEN), memcpy(p + (LEN), &x1, LEN);                                     \
            memcpy(p + 2 * (LEN), &x2, LEN), memcpy(p + 3 * (LEN), &x3, LEN);                     \
        }                                                                                         \
    }                                                                                             \
    UMPI__BLOCKS(LEN, UNPACK)

#define UMPI__BLOCKS(LEN, UNPACK)                                                                 \
    for (MPI_Count i = 0; i < n; i++, t += stride, p += (LEN)) {                                  \
        if (UNPACK)                                                                               \
            memcpy(t, p, (LEN));                                                                  \
        else                                                                                      \
            memcpy(p, t, (LEN));                                                                  \
    }

/*
 * 8-byte blocks at a 16-byte stride (every other double: a halo column, the real parts of a
 * complex array) have their own loops. Packing reads every byte of the strided side anyway, so
 * it loads whole vectors (AVX-512: two cache lines), keeps the even 8-byte lanes and stores
 * whole packed vectors; unpacking spreads packed vectors out and writes them with masked
 * stores. At 1 MiB that is about 1.45x memcpy time against 1.6x for the scalar loops (bench/
 * NOTES.md); the rest is memory traffic, the strided side being twice the payload. The CPU is
 * asked at run time (the build needs no -m flags); the scalar loop, with the stride a
 * constant, is the fallback (and what UMPI_DTYPE_SIMD=0 asks for).
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UMPI__HAVE_AVX2_PATH 1

/* Blocks one at a time until the strided side is at a cache line (when it can get there: at
 * most 3 blocks), so that no vector access there straddles two lines (AVX-512 packing went
 * from 1.55x to 1.47x memcpy time with it). */
static inline void umpi__align8s16(char **t, char **p, MPI_Count *n, int unpack)
{
    for (int k = 0; k < 3 && *n > 0 && ((uintptr_t) *t & 63) != 0; k++, (*n)--, *t += 16, *p += 8)
        memcpy(unpack ? *t : *p, unpack ? *p : *t, 8);
}

__attribute__((target("avx2"))) static void umpi__pack8s16_avx2(char *t, char *p, MPI_Count n)
{
    umpi__align8s16(&t, &p, &n, 0);
    for (; n >= 8; n -= 8, t += 128, p += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *) t), b = _mm256_loadu_si256((const __m256i *) (t + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *) (t + 64)), d = _mm256_loadu_si256((const __m256i *) (t + 96));
        /* unpacklo: a0 b0 a2 b2 (64-bit lanes); the permute puts them in order a0 a2 b0 b2 */
        _mm256_storeu_si256((__m256i *) p, _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(a, b), 0xd8));
        _mm256_storeu_si256((__m256i *) (p + 32), _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(c, d), 0xd8));
    }
    for (; n > 0; n--, t += 16, p += 8)
        memcpy(p, t, 8);
}

/* The same with 64-byte vectors: two cache lines in, one out, a two-source lane permute. */
__attribute__((target("avx512f"))) static void umpi__pack8s16_avx512(char *t, char *p, MPI_Count n)
{
    const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    umpi__align8s16(&t, &p, &n, 0);
    for (; n >= 16; n -= 16, t += 256, p += 128) {
        __m512i a = _mm512_loadu_si512(t), b = _mm512_loadu_si512(t + 64);
        __m512i c = _mm512_loadu_si512(t + 128), d = _mm512_loadu_si512(t + 192);
        _mm512_storeu_si512(p, _mm512_permutex2var_epi64(a, even, b));
        _mm512_storeu_si512(p + 64, _mm512_permutex2var_epi64(c, even, d));
    }
    umpi__pack8s16_avx2(t, p, n);
}

/* Unpacking spreads 32 packed bytes over two 32-byte vectors (block i to lane 2i) and writes
 * them with masked stores, which leave the odd lanes (the holes) untouched in memory: another
 * thread may own them. Measured 1.43x memcpy time against 1.51x for the scalar loop. */
__attribute__((target("avx2"))) static void umpi__unpack8s16_avx2(char *t, char *p, MPI_Count n)
{
    const __m256i even = _mm256_set_epi64x(0, -1, 0, -1);
    umpi__align8s16(&t, &p, &n, 1);
    for (; n >= 4; n -= 4, t += 64, p += 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *) p);
        _mm256_maskstore_epi64((long long *) t, even, _mm256_permute4x64_epi64(x, 0x50));
        _mm256_maskstore_epi64((long long *) (t + 32), even, _mm256_permute4x64_epi64(x, 0xfa));
    }
    for (; n > 0; n--, t += 16, p += 8)
        memcpy(t, p, 8);
}

__attribute__((target("avx512f"))) static void umpi__unpack8s16_avx512(char *t, char *p, MPI_Count n)
{
    const __m512i lo = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0), hi = _mm512_set_epi64(7, 7, 6, 6, 5, 5, 4, 4);
    umpi__align8s16(&t, &p, &n, 1);
    for (; n >= 8; n -= 8, t += 128, p += 64) {
        __m512i x = _mm512_loadu_si512(p);
        _mm512_mask_storeu_epi64(t, 0x55, _mm512_permutexvar_epi64(lo, x));
        _mm512_mask_storeu_epi64(t + 64, 0x55, _mm512_permutexvar_epi64(hi, x));
    }
    umpi__unpack8s16_avx2(t, p, n);
}
#endif

static inline __attribute__((always_inline)) void umpi__blocks8s16(char *t, char *p, MPI_Count n, int unpack)
{
    const MPI_Aint stride = 16;
#ifdef UMPI__HAVE_AVX2_PATH
    int simd = umpi_config.dtype_simd;
    if (simd >= 2 && __builtin_cpu_supports("avx512f")) {
        if (unpack)
            umpi__unpack8s16_avx512(t, p, n);
        else
            umpi__pack8s16_avx512(t, p, n);
        return;
    }
    if (simd >= 1 && __builtin_cpu_supports("avx2")) {
        if (unpack)
            umpi__unpack8s16_avx2(t, p, n);
        else
            umpi__pack8s16_avx2(t, p, n);
        return;
    }
#endif
    UMPI__BLOCKS4(8, unpack)
}

static inline __attribute__((always_inline)) void
umpi__blocks(char *t, char *p, MPI_Aint len, MPI_Count n, MPI_Aint stride, int unpack)
{
    switch (len) {
    case 1: UMPI__BLOCKS4(1, unpack) break;
    case 2: UMPI__BLOCKS4(2, unpack) break;
    case 4: UMPI__BLOCKS4(4, unpack) break;
    case 8:
        if (stride == 16) {
            umpi__blocks8s16(t, p, n, unpack);
            break;
        }
        UMPI__BLOCKS4(8, unpack)
        break;
    case 16: UMPI__BLOCKS4(16, unpack) break;
    default: UMPI__BLOCKS((size_t) len, unpack) break;
    }
}

#define UMPI__GATHER_MAX 8

static inline int umpi__single_blocks(const umpi_dt_op_t *ops, MPI_Count nops)
{
    for (MPI_Count j = 0; j < nops; j++)
        if (ops[j].count != 1)
            return 0;
    return 1;
}

/* One block: fixed sizes become single moves. */
static inline __attribute__((always_inline)) void umpi__copy_small(char *d, const char *s, MPI_Aint len)
{
    switch (len) {
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, (size_t) len); break;
    }
}

static inline __attribute__((always_inline)) void
umpi__range(const umpi_dtype_t *dt, char *buf, MPI_Count count, MPI_Count offset, char *p,
            MPI_Count left, int unpack)
{
    if (left <= 0)
        return;
    if (dt->contig) {
        if (unpack)
            memcpy(buf + dt->true_lb + offset, p, (size_t) left);
        else
            memcpy(p, buf + dt->true_lb + offset, (size_t) left);
        return;
    }
    umpi_dt_op_t tmp[2], fused;
    const umpi_dt_op_t *ops = dt->ops;
    MPI_Count nops = dt->nops, esize = dt->size, local_off[3];
    const MPI_Count *op_off = dt->op_off;
    MPI_Aint ext = dt->extent;
    /* a looped type: its sub-elements (one pass over the ops) are what the loop below walks */
    MPI_Count loop = dt->builtin ? 1 : dt->loop_count;
    MPI_Aint lstride = dt->builtin ? 0 : dt->loop_stride;
    esize /= loop;
    if (dt->builtin) {
        /* a pair type with a hole: its two blocks */
        umpi__ops_of((umpi_dtype_t *) dt, &ops, &nops, tmp);
        local_off[0] = 0;
        for (MPI_Count k = 0; k < nops; k++)
            local_off[k + 1] = local_off[k] + tmp[k].len;
        op_off = local_off;
    }
    /* One op per element: all count elements together are one op (no per-element loop). */
    if (loop == 1 && nops == 1 && (ops[0].count == 1 || ops[0].count * ops[0].stride == ext)) {
        fused = ops[0].count == 1 ? (umpi_dt_op_t) {ops[0].disp, ops[0].len, count, ext}
                                  : (umpi_dt_op_t) {ops[0].disp, ops[0].len, count * ops[0].count,
                                                    ops[0].stride};
        ops = &fused;
        esize = fused.len * fused.count;
        local_off[0] = 0;
        local_off[1] = esize;
        op_off = local_off;
    }

    MPI_Count e = offset / esize, rem = offset % esize;
    MPI_Count lo = 0, hi = nops - 1; /* last op with op_off[k] <= rem */
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (op_off[mid] <= rem)
            lo = mid;
        else
            hi = mid - 1;
    }
    MPI_Count k = lo;
    rem -= op_off[k];
    MPI_Count blk = rem / ops[k].len;
    MPI_Aint in = rem % ops[k].len;
    MPI_Count sub = e % loop; /* e counts sub-elements */
    e /= loop;
    char *base = buf + e * ext + sub * lstride;

    /* Whole elements made of a few single blocks (an array of structs) go through one tight loop
     * per element instead of the general walk below, which pays its bookkeeping per block. The
     * walk handles what is not whole elements (a range may start and end inside one). */
    int gather = loop == 1 && nops <= UMPI__GATHER_MAX && umpi__single_blocks(ops, nops);

    while (left > 0) {
        if (gather && k == 0 && blk == 0 && in == 0 && left >= esize) {
            for (; left >= esize; left -= esize, e++, base += ext) {
                for (MPI_Count j = 0; j < nops; j++) {
                    umpi__copy_small(unpack ? base + ops[j].disp : p, unpack ? p : base + ops[j].disp, ops[j].len);
                    p += ops[j].len;
                }
            }
            if (left == 0)
                break;
        }
        const umpi_dt_op_t *o = &ops[k];
        char *t = base + o->disp + blk * o->stride;
        if (in > 0 || left < o->len) {
            /* a piece of a block: where the range starts or ends inside one */
            MPI_Aint n = o->len - in < left ? o->len - in : (MPI_Aint) left;
            if (unpack)
                memcpy(t + in, p, (size_t) n);
            else
                memcpy(p, t + in, (size_t) n);
            p += n;
            left -= n;
            in += n;
            if (in < o->len)
                break;
            in = 0;
            blk++;
            t += o->stride;
        }
        MPI_Count n = o->count - blk;
        if (left / o->len < n)
            n = left / o->len;
        umpi__blocks(t, p, o->len, n, o->stride, unpack);
        p += n * o->len;
        left -= n * o->len;
        blk += n;
        if (blk == o->count) {
            blk = 0;
            if (++k == nops) {
                k = 0;
                if (++sub == loop) {
                    sub = 0;
                    e++;
                }
                base = buf + e * ext + sub * lstride;
            }
        }
    }
}

void umpi_dtype_pack_range(const umpi_dtype_t *dt, const void *buf, MPI_Count count, MPI_Count offset,
                           void *dst, MPI_Count len)
{
    umpi__range(dt, (char *) buf, count, offset, dst, len, 0);
}

void umpi_dtype_unpack_range(const umpi_dtype_t *dt, void *buf, MPI_Count count, MPI_Count offset,
                             const void *src, MPI_Count len)
{
    umpi__range(dt, buf, count, offset, (char *) src, len, 1);
}

void umpi_dtype_pack(const umpi_dtype_t *dt, const void *src, MPI_Count count, void *dst)
{
    umpi_dtype_pack_range(dt, src, count, 0, dst, count * dt->size);
}

void umpi_dtype_unpack(const umpi_dtype_t *dt, const void *src, MPI_Count bytes, void *dst)
{
    MPI_Count count = dt->size ? (bytes + dt->size - 1) / dt->size : 0;
    umpi_dtype_unpack_range(dt, dst, count, 0, src, bytes);
}

/* ---- basic elements (MPI_Get_elements, MPI_Status_set_elements) ------------------------------ */

MPI_Count umpi_dtype_elements(const umpi_dtype_t *dt, MPI_Count bytes)
{
    if (dt->size == 0)
        return 0;
    MPI_Count whole = bytes / dt->size, rest = bytes % dt->size, total = whole * dt->n_basic;
    if (rest == 0)
        return total;
    if (dt->builtin) {
        /* pair types: the value arrived whole, the index not at all */
        MPI_Count first = dt->nblocks == 2 ? dt->blocks[0].len : dt->size / 2;
        return dt->n_basic == 2 && rest == first ? total + 1 : -1;
    }
    for (int i = 0; i < dt->nkids; i++) {
        const umpi_dt_kid_t *kid = &dt->kids[i];
        MPI_Count kb = kid->type->size * kid->reps;
        if (rest >= kb) {
            total += kid->reps * kid->type->n_basic;
            rest -= kb;
            continue;
        }
        MPI_Count e = umpi_dtype_elements(kid->type, rest);
        return e < 0 ? -1 : total + e;
    }
    return -1; /* not reached: rest < size */
}

MPI_Count umpi_dtype_elements_bytes(const umpi_dtype_t *dt, MPI_Count elements)
{
    if (dt->n_basic == 0)
        return elements == 0 ? 0 : -1;
    MPI_Count whole = elements / dt->n_basic, rest = elements % dt->n_basic, bytes = whole * dt->size;
    if (rest == 0)
        return bytes;
    if (dt->builtin)
        return bytes + (dt->nblocks == 2 ? dt->blocks[0].len : dt->size / 2);
    for (int i = 0; i < dt->nkids; i++) {
        const umpi_dt_kid_t *kid = &dt->kids[i];
        MPI_Count kn = kid->type->n_basic * kid->reps;
        if (rest >= kn) {
            bytes += kid->type->size * kid->reps;
            rest -= kn;
            continue;
        }
        MPI_Count b = umpi_dtype_elements_bytes(kid->type, rest);
        return b < 0 ? -1 : bytes + b;
    }
    return -1;
}
