/*
 * Every predefined reduction op on representative types of every class it is defined for, in
 * Reduce (two roots), Allreduce (blocking and nonblocking), Reduce_scatter_block, Scan and
 * Exscan: C integers (signed, unsigned, char-sized, fixed-width), MPI_AINT (multi-language),
 * floating (long double included), logical (MPI_C_BOOL), complex, byte (bitwise ops); MINLOC / MAXLOC on every pair
 * type with ties between ranks; user ops (commutative and not) on derived datatypes; a predefined
 * op on a derived datatype (a vector of doubles). Each result is compared with a reference the
 * program computes itself, folding the ranks' inputs in rank order. The testlist forces each
 * reduction algorithm in turn (UMPI_<COLL>_ALGORITHM).
 */
#include "mtest.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#define N 7 /* elements per process (odd) */

static int is_umpi;

/* rank r's input element i for op: small values, so that products stay exact and in range */
static long input(MPI_Op op, int r, int i)
{
    if (op == MPI_PROD)
        return (r + i) % 2 + 1;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return (r + i) % 3 == 0;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return (r * 37 + i * 11 + 5) & 0x7f;
    return (r * 5 + i * 3) % 11 + 1;
}

/* x op y for a C scalar type (the ops that apply to it) */
#define APPLY_ARITH(op, x, y)                                                                          \
    ((op) == MPI_SUM ? (x) + (y) : (op) == MPI_PROD ? (x) * (y) : (op) == MPI_MAX ? ((x) > (y) ? (x) : (y)) \
                                                                                     : ((x) < (y) ? (x) : (y)))
#define APPLY_INT(op, x, y)                                                                            \
    ((op) == MPI_LAND ? ((x) && (y)) : (op) == MPI_LOR ? ((x) || (y)) : (op) == MPI_LXOR ? (!(x) != !(y)) \
     : (op) == MPI_BAND ? ((x) & (y)) : (op) == MPI_BOR ? ((x) | (y)) : (op) == MPI_BXOR ? ((x) ^ (y))  \
                                                                                     : APPLY_ARITH(op, x, y))

/*
 * For each C type: fill a buffer with rank r's inputs, fold rank r's inputs into a reference,
 * compare element i of a buffer with the reference.
 */
#define DEFTYPE(name, ctype, APPLY)                                                                    \
    static void name##_fill(MPI_Op op, void *b, int n, int r, int off)                                 \
    {                                                                                                  \
        for (int i = 0; i < n; i++)                                                                    \
            ((ctype *) b)[i] = (ctype) input(op, r, off + i);                                          \
    }                                                                                                  \
    static void name##_fold(MPI_Op op, void *acc, int n, int r, int off)                               \
    {                                                                                                  \
        for (int i = 0; i < n; i++) {                                                                  \
            ctype x = ((ctype *) acc)[i], y = (ctype) input(op, r, off + i);                           \
            ((ctype *) acc)[i] = r == 0 ? y : (ctype) APPLY(op, x, y);                                 \
        }                                                                                              \
    }                                                                                                  \
    static int name##_eq(const void *a, const void *b, int i)                                          \
    {                                                                                                  \
        return ((const ctype *) a)[i] == ((const ctype *) b)[i];                                       \
    }

#define APPLY_CPLX(op, x, y) ((op) == MPI_SUM ? (x) + (y) : (x) * (y))
#define APPLY_BOOL(op, x, y) ((op) == MPI_LAND ? ((x) && (y)) : (op) == MPI_LOR ? ((x) || (y)) : ((x) != (y)))

DEFTYPE(int, int, APPLY_INT)
DEFTYPE(unsigned, unsigned, APPLY_INT)
DEFTYPE(short, short, APPLY_INT)
DEFTYPE(ulong, unsigned long, APPLY_INT)
DEFTYPE(llong, long long, APPLY_INT)
DEFTYPE(schar, signed char, APPLY_INT)
DEFTYPE(uchar, unsigned char, APPLY_INT)
DEFTYPE(i8, int8_t, APPLY_INT)
DEFTYPE(u64, uint64_t, APPLY_INT)
DEFTYPE(aint, MPI_Aint, APPLY_INT)
DEFTYPE(flt, float, APPLY_ARITH)
DEFTYPE(dbl, double, APPLY_ARITH)
DEFTYPE(ldbl, long double, APPLY_ARITH)
DEFTYPE(cbool, bool, APPLY_BOOL)
DEFTYPE(fcplx, float _Complex, APPLY_CPLX)
DEFTYPE(dcplx, double _Complex, APPLY_CPLX)
DEFTYPE(byte, unsigned char, APPLY_INT)

enum { C_INT = 1, C_FLOAT = 2, C_LOGICAL = 4, C_COMPLEX = 8, C_BYTE = 16, C_MULTI = 32 /* MPI_AINT, ... */ };

typedef struct {
    MPI_Datatype t;
    const char *name;
    size_t size;
    int cls;
    void (*fill)(MPI_Op, void *, int, int, int);
    void (*fold)(MPI_Op, void *, int, int, int);
    int (*eq)(const void *, const void *, int);
} type_row_t;

#define ROW(T, name, ctype, cls) {T, #T, sizeof(ctype), cls, name##_fill, name##_fold, name##_eq}
static type_row_t types[17];
static int ntypes;

static const struct {
    MPI_Op op;
    const char *name;
    int classes; /* the type classes it is defined for */
} ops[] = {
    {MPI_SUM, "MPI_SUM", C_INT | C_FLOAT | C_COMPLEX | C_MULTI},
    {MPI_PROD, "MPI_PROD", C_INT | C_FLOAT | C_COMPLEX | C_MULTI},
    {MPI_MAX, "MPI_MAX", C_INT | C_FLOAT | C_MULTI},
    {MPI_MIN, "MPI_MIN", C_INT | C_FLOAT | C_MULTI},
    {MPI_LAND, "MPI_LAND", C_INT | C_LOGICAL},
    {MPI_LOR, "MPI_LOR", C_INT | C_LOGICAL},
    {MPI_LXOR, "MPI_LXOR", C_INT | C_LOGICAL},
    {MPI_BAND, "MPI_BAND", C_INT | C_BYTE | C_MULTI},
    {MPI_BOR, "MPI_BOR", C_INT | C_BYTE | C_MULTI},
    {MPI_BXOR, "MPI_BXOR", C_INT | C_BYTE | C_MULTI},
};

/* ---- the five collectives on one (type, op), each checked against the reference ------------- */

static void check(const type_row_t *tr, const char *opname, const char *coll, const void *got, const void *want,
                  int n)
{
    for (int i = 0; i < n; i++)
        if (!tr->eq(got, want, i)) {
            MT_CHECK(tr->eq(got, want, i), "%s %s %s: element %d differs from the reference", coll, tr->name, opname,
                     i);
            return;
        }
}

/* reference: the inputs of ranks 0..last folded in order (elements from off) */
static void *reference(const type_row_t *tr, MPI_Op op, int last, int n, int off)
{
    void *ref = calloc((size_t) n + 1, tr->size);
    for (int r = 0; r <= last; r++)
        tr->fold(op, ref, n, r, off);
    return ref;
}

static void run_matrix_cell(const type_row_t *tr, MPI_Op op, const char *opname)
{
    int p = mt_size, me = mt_rank;
    char *in = calloc((size_t) (N * p), tr->size), *out = calloc((size_t) (N * p), tr->size);
    tr->fill(op, in, N * p, me, 0);
    void *all = reference(tr, op, p - 1, N, 0);

    for (int root = 0; root < p; root += p > 1 ? p - 1 : 1) {
        memset(out, 0, tr->size * N);
        MPI_Reduce(in, me == root ? out : NULL, N, tr->t, op, root, MPI_COMM_WORLD);
        if (me == root)
            check(tr, opname, "reduce", out, all, N);
    }
    memset(out, 0, tr->size * N);
    MPI_Allreduce(in, out, N, tr->t, op, MPI_COMM_WORLD);
    check(tr, opname, "allreduce", out, all, N);
    MPI_Request req;
    memset(out, 0, tr->size * N);
    MPI_Iallreduce(in, out, N, tr->t, op, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(tr, opname, "iallreduce", out, all, N);

    /* reduce_scatter_block: my block is elements me*N .. of the whole vector */
    memset(out, 0, tr->size * N);
    MPI_Reduce_scatter_block(in, out, N, tr->t, op, MPI_COMM_WORLD);
    void *mine = reference(tr, op, p - 1, N, me * N);
    check(tr, opname, "reduce_scatter_block", out, mine, N);
    free(mine);

    memset(out, 0, tr->size * N);
    MPI_Scan(in, out, N, tr->t, op, MPI_COMM_WORLD);
    void *pre = reference(tr, op, me, N, 0);
    check(tr, opname, "scan", out, pre, N);
    free(pre);
    memset(out, 0, tr->size * N);
    MPI_Exscan(in, out, N, tr->t, op, MPI_COMM_WORLD);
    if (me > 0) {
        pre = reference(tr, op, me - 1, N, 0);
        check(tr, opname, "exscan", out, pre, N);
        free(pre);
    }
    free(all), free(in), free(out);
}

/* ---- MINLOC / MAXLOC on the pair types, ties between ranks ------------------------------------ */

#define DEFPAIR(name, vtype)                                                                           \
    typedef struct {                                                                                   \
        vtype v;                                                                                       \
        int i;                                                                                         \
    } name##_t;                                                                                        \
    static void name##_run(MPI_Datatype t, const char *tname)                                          \
    {                                                                                                  \
        name##_t in[N], out[N], want[N];                                                               \
        for (int loc = 0; loc < 2; loc++) {                                                            \
            MPI_Op op = loc ? MPI_MAXLOC : MPI_MINLOC;                                                 \
            for (int k = 0; k < N; k++) {                                                              \
                in[k].v = (vtype) ((mt_rank + k) % 3); /* ties: ranks r and r + 3 */                 \
                in[k].i = mt_rank;                                                                     \
            }                                                                                          \
            for (int pass = 0; pass < 3; pass++) { /* allreduce, scan, reduce at the last rank */     \
                int last = pass == 1 ? mt_rank : mt_size - 1, root = mt_size - 1;                      \
                for (int k = 0; k < N; k++) {                                                          \
                    want[k].v = (vtype) (k % 3);                                                       \
                    want[k].i = 0;                                                                     \
                    for (int r = 1; r <= last; r++) {                                                  \
                        vtype x = (vtype) ((r + k) % 3);                                               \
                        if (loc ? x > want[k].v : x < want[k].v)                                       \
                            want[k].v = x, want[k].i = r;                                              \
                    }                                                                                  \
                    out[k].v = (vtype) -1;                                                             \
                    out[k].i = -1;                                                                     \
                }                                                                                      \
                if (pass == 0)                                                                         \
                    MPI_Allreduce(in, out, N, t, op, MPI_COMM_WORLD);                                  \
                else if (pass == 1)                                                                    \
                    MPI_Scan(in, out, N, t, op, MPI_COMM_WORLD);                                       \
                else                                                                                   \
                    MPI_Reduce(in, out, N, t, op, root, MPI_COMM_WORLD);                               \
                if (pass == 2 && mt_rank != root)                                                      \
                    continue;                                                                          \
                for (int k = 0; k < N; k++)                                                            \
                    MT_CHECK(out[k].v == want[k].v && out[k].i == want[k].i,                           \
                             "%s %s pass %d [%d]: (%g,%d) want (%g,%d)", tname, loc ? "maxloc" : "minloc",  \
                             pass, k, (double) out[k].v, out[k].i, (double) want[k].v, want[k].i);     \
            }                                                                                          \
        }                                                                                              \
    }

DEFPAIR(p2int, int)
DEFPAIR(pdbl, double)
DEFPAIR(pflt, float)
DEFPAIR(plong, long)
DEFPAIR(pshort, short)
DEFPAIR(pldbl, long double)

/* ---- user ops and predefined ops on derived datatypes ----------------------------------------- */

/* commutative: elementwise sum of the doubles of a vector element (2 doubles every 3, resized) */
static void vsum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    double *a = in, *b = inout;
    for (int k = 0; k < *len; k++) {
        b[3 * k] += a[3 * k];
        b[3 * k + 2] += a[3 * k + 2];
    }
    (void) dt;
}

/* non-commutative: (digits, length) pairs; a op b = the digits of a followed by those of b (base 8) */
static void concat_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 2, b += 2) {
        int sh = 1;
        for (int j = 0; j < b[1]; j++)
            sh *= 8;
        b[0] = a[0] * sh + b[0];
        b[1] += a[1];
    }
    (void) dt;
}

static void test_derived(void)
{
    int p = mt_size, me = mt_rank;
    /* vec: doubles 0 and 2 of every 3 (a vector), resized to 3 doubles */
    MPI_Datatype v, vec, pair;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_create_resized(v, 0, 3 * sizeof(double), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&v);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op vsum, concat;
    MPI_Op_create(vsum_fn, 1, &vsum);
    MPI_Op_create(concat_fn, 0, &concat);

    double in[3 * N * 8], out[3 * N * 8];
    for (int round = 0; round < 2; round++) { /* the user op, then MPI_SUM (umpi only) */
        if (round == 1 && !is_umpi)
            break; /* MPICH 4.0.2 takes predefined ops on predefined types only */
        MPI_Op op = round ? MPI_SUM : vsum;
        const char *name = round ? "MPI_SUM on a vector of doubles" : "commutative user op on a vector";
        for (int k = 0; k < 3 * N * p; k++) {
            in[k] = k % 3 == 1 ? -5 : me * 10 + k;
            out[k] = -5;
        }
        /* element k's doubles (3k and 3k+2) sum to sum_r (10 r + 3k (+2)); the gap stays */
        MPI_Allreduce(in, out, N, vec, op, MPI_COMM_WORLD);
        for (int k = 0; k < 3 * N; k++) {
            double want = k % 3 == 1 ? -5 : 10.0 * p * (p - 1) / 2 + (double) p * k;
            MT_CHECK(out[k] == want, "allreduce %s: [%d]=%g want %g", name, k, out[k], want);
        }
        for (int k = 0; k < 3 * N; k++)
            out[k] = -5;
        MPI_Reduce(in, out, N, vec, op, p - 1, MPI_COMM_WORLD);
        if (me == p - 1)
            for (int k = 0; k < 3 * N; k++) {
                double want = k % 3 == 1 ? -5 : 10.0 * p * (p - 1) / 2 + (double) p * k;
                MT_CHECK(out[k] == want, "reduce %s: [%d]=%g want %g", name, k, out[k], want);
            }
        for (int k = 0; k < 3 * N; k++)
            out[k] = -5;
        MPI_Reduce_scatter_block(in, out, N, vec, op, MPI_COMM_WORLD);
        for (int k = 0; k < 3 * N; k++) {
            int g = 3 * N * me + k;
            double want = k % 3 == 1 ? -5 : 10.0 * p * (p - 1) / 2 + (double) p * g;
            MT_CHECK(out[k] == want, "reduce_scatter_block %s: [%d]=%g want %g", name, k, out[k], want);
        }
        for (int k = 0; k < 3 * N; k++)
            out[k] = -5;
        MPI_Scan(in, out, N, vec, op, MPI_COMM_WORLD);
        for (int k = 0; k < 3 * N; k++) {
            double want = k % 3 == 1 ? -5 : 10.0 * me * (me + 1) / 2 + (double) (me + 1) * k;
            MT_CHECK(out[k] == want, "scan %s: [%d]=%g want %g", name, k, out[k], want);
        }
    }

    /* non-commutative: every collective must keep rank order */
    int pi[2 * N * 8], po[2 * N * 8];
    for (int k = 0; k < N * p; k++)
        pi[2 * k] = me + 1, pi[2 * k + 1] = 1;
    int all = 0, pre = 0, ex = 0;
    for (int r = 0; r < p; r++) {
        all = all * 8 + r + 1;
        if (r <= me)
            pre = pre * 8 + r + 1;
        if (r < me)
            ex = ex * 8 + r + 1;
    }
    MPI_Allreduce(pi, po, N, pair, concat, MPI_COMM_WORLD);
    MT_CHECK(po[0] == all && po[2 * N - 1] == p, "allreduce non-commutative: %o want %o", po[0], all);
    po[0] = -1;
    MPI_Reduce(pi, po, N, pair, concat, 0, MPI_COMM_WORLD);
    if (me == 0)
        MT_CHECK(po[0] == all && po[2 * N - 2] == all, "reduce non-commutative: %o want %o", po[0], all);
    MPI_Reduce_scatter_block(pi, po, N, pair, concat, MPI_COMM_WORLD);
    MT_CHECK(po[0] == all && po[2 * N - 2] == all, "reduce_scatter_block non-commutative: %o want %o", po[0], all);
    MPI_Scan(pi, po, N, pair, concat, MPI_COMM_WORLD);
    MT_CHECK(po[0] == pre && po[2 * N - 2] == pre, "scan non-commutative: %o want %o", po[0], pre);
    MPI_Exscan(pi, po, N, pair, concat, MPI_COMM_WORLD);
    if (me > 0)
        MT_CHECK(po[0] == ex && po[2 * N - 2] == ex, "exscan non-commutative: %o want %o", po[0], ex);

    MPI_Op_free(&vsum);
    MPI_Op_free(&concat);
    MPI_Type_free(&vec);
    MPI_Type_free(&pair);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;
    const type_row_t rows[] = {
        ROW(MPI_INT, int, int, C_INT),
        ROW(MPI_UNSIGNED, unsigned, unsigned, C_INT),
        ROW(MPI_SHORT, short, short, C_INT),
        ROW(MPI_UNSIGNED_LONG, ulong, unsigned long, C_INT),
        ROW(MPI_LONG_LONG, llong, long long, C_INT),
        ROW(MPI_SIGNED_CHAR, schar, signed char, C_INT),
        ROW(MPI_UNSIGNED_CHAR, uchar, unsigned char, C_INT),
        ROW(MPI_INT8_T, i8, int8_t, C_INT),
        ROW(MPI_UINT64_T, u64, uint64_t, C_INT),
        ROW(MPI_AINT, aint, MPI_Aint, C_MULTI),
        ROW(MPI_FLOAT, flt, float, C_FLOAT),
        ROW(MPI_DOUBLE, dbl, double, C_FLOAT),
        ROW(MPI_LONG_DOUBLE, ldbl, long double, C_FLOAT),
        ROW(MPI_C_BOOL, cbool, bool, C_LOGICAL),
        ROW(MPI_C_FLOAT_COMPLEX, fcplx, float _Complex, C_COMPLEX),
        ROW(MPI_C_DOUBLE_COMPLEX, dcplx, double _Complex, C_COMPLEX),
        ROW(MPI_BYTE, byte, unsigned char, C_BYTE),
    };
    ntypes = (int) (sizeof(rows) / sizeof(rows[0]));
    memcpy(types, rows, sizeof(rows));
    int cells = 0;
    for (int t = 0; t < ntypes; t++)
        for (unsigned o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
            if (ops[o].classes & types[t].cls) {
                run_matrix_cell(&types[t], ops[o].op, ops[o].name);
                cells++;
            }
    p2int_run(MPI_2INT, "MPI_2INT");
    pdbl_run(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    pflt_run(MPI_FLOAT_INT, "MPI_FLOAT_INT");
    plong_run(MPI_LONG_INT, "MPI_LONG_INT");
    pshort_run(MPI_SHORT_INT, "MPI_SHORT_INT");
    pldbl_run(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
    test_derived();
    MT_CHECK(cells == 119, "%d (type, op) cells run", cells);
    return mt_finish();
}
