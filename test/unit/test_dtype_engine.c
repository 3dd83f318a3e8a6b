/*
 * Unit test of the pack engine (src/core/datatype_engine.c): thousands of random type trees,
 * each packed and unpacked by the engine (whole, and in random byte ranges) and by a naive
 * reference that expands the type map entry by entry from the constructor arguments. Also basic
 * element counts against the reference, and the time of packing a regular vector against memcpy
 * (printed, not checked: timing on a shared machine).
 */
#include "core/umpi_knobs.h"
#include "core/umpi_obj.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reference: the type map, one basic block per entry -------------------------------------- */

struct tmap {
    MPI_Aint *disp, *len;
    long n, cap;
};

static void tm_add(struct tmap *m, MPI_Aint disp, MPI_Aint len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->disp = realloc(m->disp, m->cap * sizeof(MPI_Aint));
        m->len = realloc(m->len, m->cap * sizeof(MPI_Aint));
    }
    m->disp[m->n] = disp;
    m->len[m->n++] = len;
}

static void ref_map(const umpi_dtype_t *t, MPI_Aint base, struct tmap *m)
{
    const MPI_Count *c = t->counts;
    umpi_dtype_t *old = t->n_types ? t->types[0] : NULL;
    if (t->builtin) {
        for (int b = 0; b < t->nblocks; b++)
            if (t->blocks[b].len)
                tm_add(m, base + t->blocks[b].disp, t->blocks[b].len);
        return;
    }
    switch (t->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        ref_map(old, base, m);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        for (MPI_Count i = 0; i < c[0]; i++)
            ref_map(old, base + i * old->extent, m);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = t->combiner == MPI_COMBINER_VECTOR ? c[2] * old->extent : c[2];
        for (MPI_Count i = 0; i < c[0]; i++)
            for (MPI_Count j = 0; j < c[1]; j++)
                ref_map(old, base + i * stride + j * old->extent, m);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (MPI_Count i = 0; i < c[0]; i++)
            for (MPI_Count j = 0; j < c[1 + i]; j++)
                ref_map(old, base + c[1 + c[0] + i] * (t->combiner == MPI_COMBINER_INDEXED ? old->extent : 1) +
                                 j * old->extent, m);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (MPI_Count i = 0; i < c[0]; i++)
            for (MPI_Count j = 0; j < c[1]; j++)
                ref_map(old, base + c[2 + i] * (t->combiner == MPI_COMBINER_INDEXED_BLOCK ? old->extent : 1) +
                                 j * old->extent, m);
        break;
    case MPI_COMBINER_STRUCT:
        for (MPI_Count i = 0; i < c[0]; i++)
            for (MPI_Count j = 0; j < c[1 + i]; j++)
                ref_map(t->types[i], base + c[1 + c[0] + i] + j * t->types[i]->extent, m);
        break;
    case MPI_COMBINER_SUBARRAY: { /* 2-D and 3-D, C or Fortran order, by explicit loops */
        int nd = t->ints[0], fortran = t->ints[1] == MPI_ORDER_FORTRAN;
        MPI_Count idx[3] = {0, 0, 0}, total = 1;
        for (int d = 0; d < nd; d++)
            total *= c[nd + d];
        for (MPI_Count k = 0; k < total; k++) {
            MPI_Count rest = k, off = 0, mult = 1;
            for (int i = 0; i < nd; i++) { /* fastest dimension first */
                int d = fortran ? i : nd - 1 - i;
                idx[d] = rest % c[nd + d];
                rest /= c[nd + d];
            }
            for (int i = 0; i < nd; i++) {
                int d = fortran ? i : nd - 1 - i;
                off += (idx[d] + c[2 * nd + d]) * mult;
                mult *= c[d];
            }
            ref_map(old, base + off * old->extent, m);
        }
        break;
    }
    }
}

/* ---- random types ------------------------------------------------------------------------------ */

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned) (rng % n);
}

static umpi_dtype_t *leaf(void)
{
    static const MPI_Datatype leaves[] = {MPI_BYTE, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT,
                                          MPI_SHORT_INT, MPI_C_DOUBLE_COMPLEX};
    return umpi_dtype_get(leaves[rnd(UMPI_ARRAY_SIZE(leaves))]);
}

static umpi_dtype_t *make(int comb, MPI_Count *c, MPI_Count n, int *ints, int ni, umpi_dtype_t **t, int nt)
{
    umpi_dtype_t *dt = NULL;
    if (umpi_dtype_create(comb, c, n, ints, ni, t, nt, &dt) != UMPI_OK)
        abort();
    return dt;
}

static umpi_dtype_t *random_type(int depth)
{
    if (depth == 0 || rnd(5) == 0)
        return leaf();
    umpi_dtype_t *old = random_type(depth - 1), *dt, *types[3];
    MPI_Count c[16];
    int n = 1 + rnd(3), ints[2];
    switch (rnd(10)) {
    case 0:
        c[0] = rnd(4);
        dt = make(MPI_COMBINER_CONTIGUOUS, c, 1, NULL, 0, &old, 1);
        break;
    case 1:
        c[0] = rnd(5), c[1] = rnd(3), c[2] = (MPI_Count) rnd(7) - 1;
        dt = make(MPI_COMBINER_VECTOR, c, 3, NULL, 0, &old, 1);
        break;
    case 2:
        c[0] = rnd(5), c[1] = 1 + rnd(3), c[2] = (MPI_Count) rnd(64) - 8;
        dt = make(MPI_COMBINER_HVECTOR, c, 3, NULL, 0, &old, 1);
        break;
    case 3:
    case 4:
    {
        int comb = rnd(2) ? MPI_COMBINER_INDEXED : MPI_COMBINER_HINDEXED;
        c[0] = n;
        for (int i = 0; i < n; i++)
            c[1 + i] = rnd(3), c[1 + n + i] = rnd(comb == MPI_COMBINER_HINDEXED ? 40 : 6);
        dt = make(comb, c, 1 + 2 * n, NULL, 0, &old, 1);
    }
        break;
    case 5:
        c[0] = n, c[1] = rnd(3);
        for (int i = 0; i < n; i++)
            c[2 + i] = rnd(6);
        dt = make(rnd(2) ? MPI_COMBINER_INDEXED_BLOCK : MPI_COMBINER_HINDEXED_BLOCK, c, 2 + n, NULL, 0, &old, 1);
        break;
    case 6: {
        c[0] = n;
        MPI_Aint at = 0;
        for (int i = 0; i < n; i++) {
            types[i] = i == 0 ? old : random_type(depth - 1);
            c[1 + i] = rnd(3);
            c[1 + n + i] = at + rnd(9) - types[i]->lb;
            at = c[1 + n + i] + types[i]->lb + c[1 + i] * types[i]->extent;
        }
        dt = make(MPI_COMBINER_STRUCT, c, 1 + 2 * n, NULL, 0, types, n);
        for (int i = 1; i < n; i++)
            umpi_dtype_release(types[i]);
        break;
    }
    case 7: {
        int nd = 2 + rnd(2);
        ints[0] = nd, ints[1] = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < nd; d++) {
            c[d] = 1 + rnd(5);
            c[nd + d] = 1 + rnd((unsigned) c[d]);
            c[2 * nd + d] = rnd((unsigned) (c[d] - c[nd + d] + 1));
        }
        dt = make(MPI_COMBINER_SUBARRAY, c, 3 * nd, ints, 2, &old, 1);
        break;
    }
    case 8:
        c[0] = (MPI_Count) rnd(8) - 4, c[1] = old->extent + rnd(16);
        dt = make(MPI_COMBINER_RESIZED, c, 2, NULL, 0, &old, 1);
        break;
    default:
        dt = make(MPI_COMBINER_DUP, NULL, 0, NULL, 0, &old, 1);
        break;
    }
    umpi_dtype_release(old);
    return dt;
}

/* ---- one comparison ---------------------------------------------------------------------------- */

static int check_type(umpi_dtype_t *dt, int count)
{
    struct tmap m = {0};
    int bad = 0;
    for (int i = 0; i < count; i++)
        ref_map(dt, i * dt->extent, &m);
    MPI_Count bytes = 0;
    MPI_Aint lo = 0, hi = 0;
    for (long k = 0; k < m.n; k++) {
        bytes += m.len[k];
        if (m.disp[k] < lo)
            lo = m.disp[k];
        if (m.disp[k] + m.len[k] > hi)
            hi = m.disp[k] + m.len[k];
    }
    if (bytes != count * dt->size) {
        printf("size %ld vs reference %ld\n", (long) (count * dt->size), (long) bytes);
        bad = 1;
        goto out;
    }
    if (umpi_dtype_compile(dt) != UMPI_OK) {
        bad = 1;
        goto out;
    }
    size_t span = (size_t) (hi - lo) + 1;
    unsigned char *src = malloc(span), *a = malloc(bytes + 1), *b = malloc(bytes + 1);
    unsigned char *u1 = malloc(span), *u2 = malloc(span);
    for (size_t i = 0; i < span; i++)
        src[i] = (unsigned char) rnd(256);
    unsigned char *base = src - lo;
    MPI_Count p = 0;
    for (long k = 0; k < m.n; k++, p += m.len[k - 1])
        memcpy(b + p, base + m.disp[k], (size_t) m.len[k]);
    umpi_dtype_pack(dt, base, count, a);
    if (memcmp(a, b, (size_t) bytes) != 0)
        bad = 1;
    /* random ranges of the packed stream */
    for (int r = 0; r < 4 && !bad && bytes > 0; r++) {
        MPI_Count off = rnd((unsigned) bytes), len = rnd((unsigned) (bytes - off + 1));
        memset(a, 0, (size_t) bytes);
        umpi_dtype_pack_range(dt, base, count, off, a, len);
        if (memcmp(a, b + off, (size_t) len) != 0)
            bad = 2;
        /* unpack the same range in two pieces: the reference does it entry by entry */
        memset(u1, 0, span);
        memset(u2, 0, span);
        MPI_Count cut = len ? rnd((unsigned) len + 1) : 0;
        umpi_dtype_unpack_range(dt, u1 - lo, count, off, b + off, cut);
        umpi_dtype_unpack_range(dt, u1 - lo, count, off + cut, b + off + cut, len - cut);
        MPI_Count q = 0;
        for (long k = 0; k < m.n; k++) {
            MPI_Count s0 = q > off ? q : off, s1 = q + m.len[k] < off + len ? q + m.len[k] : off + len;
            if (s0 < s1)
                memcpy(u2 - lo + m.disp[k] + (s0 - q), b + s0, (size_t) (s1 - s0));
            q += m.len[k];
        }
        if (memcmp(u1, u2, span) != 0)
            bad = 3;
    }
    /* basic elements of every prefix that ends on an element boundary of the reference */
    if (!bad && count > 0) {
        MPI_Count q = 0, nb = 0;
        for (long k = 0; k < m.n && !bad; k++) {
            q += m.len[k];
            nb++;
            /* every leaf's blocks are its basic elements */
            if (umpi_dtype_elements(dt, q) != nb || umpi_dtype_elements_bytes(dt, nb) != q)
                bad = 4;
        }
    }
    free(src), free(a), free(b), free(u1), free(u2);
out:
    free(m.disp), free(m.len);
    return bad;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    SECTION("random type trees vs the reference packer") {
        int failures = 0;
        for (int i = 0; i < 3000; i++) {
            umpi_dtype_t *dt = random_type(3);
            int count = rnd(4);
            int bad = check_type(dt, count);
            if (bad && failures++ < 5)
                printf("type %d (combiner %d, size %ld, extent %ld, count %d, %ld ops): failure %d\n", i,
                       dt->combiner, (long) dt->size, (long) dt->extent, count, (long) dt->nops, bad);
            CHECK(!bad, "random type %d", i);
            umpi_dtype_release(dt);
        }
    }

    SECTION("regular vector compiles to one op, contiguous types to one run") {
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *v, *c;
        MPI_Count vc[3] = {1000, 1, 2}, cc[1] = {10};
        umpi_dtype_create(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1, &v);
        umpi_dtype_create(MPI_COMBINER_CONTIGUOUS, cc, 1, NULL, 0, &dbl, 1, &c);
        umpi_dtype_compile(v);
        umpi_dtype_compile(c);
        CHECK(v->nops == 1 && v->ops[0].count == 1000 && v->ops[0].len == 8 && v->ops[0].stride == 16,
              "vector: %ld ops", (long) v->nops);
        CHECK(c->contig && c->nops == 1, "contiguous of double not contiguous");
        /* 1000 structs of three members (the char touches the double: two runs): a loop, not 2000 ops */
        umpi_dtype_t *st, *many, *types[3] = {umpi_dtype_get(MPI_INT), dbl, umpi_dtype_get(MPI_CHAR)};
        MPI_Count sc[7] = {3, 1, 1, 1, 0, 8, 16}, mc[1] = {1000};
        umpi_dtype_create(MPI_COMBINER_STRUCT, sc, 7, NULL, 0, types, 3, &st);
        umpi_dtype_create(MPI_COMBINER_CONTIGUOUS, mc, 1, NULL, 0, &st, 1, &many);
        umpi_dtype_compile(many);
        CHECK(many->nops == 2 && many->loop_count == 1000 && many->loop_stride == 24, "contiguous of struct: %ld ops, "
              "loop %ld", (long) many->nops, (long) many->loop_count);
        CHECK(check_type(many, 2) == 0, "contiguous of struct packs wrong");
        umpi_dtype_release(many);
        umpi_dtype_release(st);
        umpi_dtype_release(v);
        umpi_dtype_release(c);
    }

    /* every variant of the loops: the best the CPU has, AVX2 at most, scalar (UMPI_DTYPE_SIMD) */
    for (int simd = 2; simd >= 0; simd--)
    SECTION("8-byte blocks at stride 16 (the vector loops): counts, alignments, ranges, holes") {
        umpi_config.dtype_simd = simd;
        /* blocks of MPI_BYTE x 8 so that any alignment is legal; buffers shifted by 0..15 bytes */
        umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE), *v;
        enum { MAXN = 300 };
        unsigned char *src = malloc(16 * MAXN + 64), *pk = malloc(8 * MAXN + 64), *ref = malloc(8 * MAXN);
        unsigned char *u = malloc(16 * MAXN + 64), *uref = malloc(16 * MAXN + 64);
        int bad = 0;
        for (int i = 0; i < 16 * MAXN + 64; i++)
            src[i] = (unsigned char) rnd(256);
        for (int n = 0; n <= MAXN && !bad; n += n < 40 ? 1 : 37) {
            MPI_Count vc[3] = {n, 8, 16};
            umpi_dtype_create(MPI_COMBINER_HVECTOR, vc, 3, NULL, 0, &byte, 1, &v);
            umpi_dtype_compile(v);
            for (int sa = 0; sa < 16 && !bad; sa += 1 + (n > 40) * 4) {
                for (int da = 0; da < 16 && !bad; da += 3) {
                    for (int i = 0; i < n; i++)
                        memcpy(ref + 8 * i, src + sa + 16 * i, 8);
                    memset(pk, 0, 8 * MAXN + 64);
                    umpi_dtype_pack(v, src + sa, 1, pk + da);
                    if (memcmp(pk + da, ref, 8 * (size_t) n) != 0 || pk[da + 8 * n] != 0)
                        bad = 1;
                    /* a range that starts and ends inside blocks */
                    MPI_Count off = n ? rnd(8 * n) : 0, len = rnd((unsigned) (8 * n - off + 1));
                    umpi_dtype_pack_range(v, src + sa, 1, off, pk + da, len);
                    if (memcmp(pk + da, ref + off, (size_t) len) != 0)
                        bad = 2;
                    /* unpack: the blocks land, the holes keep what they had */
                    memset(u, 0x5a, 16 * MAXN + 64);
                    memset(uref, 0x5a, 16 * MAXN + 64);
                    for (int i = 0; i < n; i++)
                        memcpy(uref + sa + 16 * i, ref + 8 * i, 8);
                    umpi_dtype_unpack(v, ref, 8 * n, u + sa);
                    if (memcmp(u, uref, 16 * MAXN + 64) != 0)
                        bad = 3;
                }
            }
            CHECK(!bad, "8-byte blocks at stride 16, count %d, simd %d: failure %d", n, simd, bad);
            umpi_dtype_release(v);
        }
        free(src), free(pk), free(ref), free(u), free(uref);
        umpi_config.dtype_simd = 2;
    }

    for (int simd = 2; simd >= 0; simd--)
    SECTION("pack time of a vector (8-byte blocks, stride 16, 1 MiB) vs memcpy") {
        umpi_config.dtype_simd = simd;
        enum { N = 131072, REPS = 200 };
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *v;
        MPI_Count vc[3] = {N, 1, 2};
        umpi_dtype_create(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1, &v);
        umpi_dtype_compile(v);
        double *src = calloc(2 * N, sizeof(double)), *dst = calloc(N, sizeof(double));
        double *flat = calloc(N, sizeof(double));
        for (int i = 0; i < 2 * N; i++)
            src[i] = i;
        double tp = 1e9, tm = 1e9;
        for (int r = 0; r < REPS; r++) {
            double t0 = now();
            umpi_dtype_pack(v, src, 1, dst);
            double t1 = now();
            memcpy(flat, src + (r & 1), N * sizeof(double));
            double t2 = now();
            if (t1 - t0 < tp)
                tp = t1 - t0;
            if (t2 - t1 < tm)
                tm = t2 - t1;
        }
        CHECK(dst[N - 1] == 2.0 * (N - 1), "packed data wrong");
        printf("UMPI_DTYPE_SIMD=%d: pack vector 1 MiB: %.1f us, memcpy 1 MiB: %.1f us, ratio %.2f (best of %d)\n",
               simd, tp * 1e6, tm * 1e6, tp / tm, REPS);
        double tu = 1e9;
        for (int r = 0; r < REPS; r++) {
            double t0 = now();
            umpi_dtype_unpack(v, dst, N * sizeof(double), src);
            double t1 = now();
            if (t1 - t0 < tu)
                tu = t1 - t0;
        }
        CHECK(src[2 * N - 2] == 2.0 * (N - 1) && src[2 * N - 1] == 2 * N - 1, "unpacked data wrong");
        printf("UMPI_DTYPE_SIMD=%d: unpack vector 1 MiB: %.1f us, ratio %.2f to the memcpy above\n", simd,
               tu * 1e6, tu / tm);
        umpi_config.dtype_simd = 2;
        free(src), free(dst), free(flat);
        umpi_dtype_release(v);
    }
    return unit_done("test_dtype_engine");
}
