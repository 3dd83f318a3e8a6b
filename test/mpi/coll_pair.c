/*
 * Blocking collectives on communicators of two processes (umpi runs those without a schedule:
 * src/coll/pair.c). The processes pair up by MPI_Comm_split, once in world order and once
 * reversed (the pair's rank 0 is the higher world rank), so the member -> process mapping is not
 * the identity; with an odd number of processes the last one is alone (a communicator of one).
 * Allreduce and Reduce (every root) over every class of predefined op and type, a commutative
 * and a non-commutative user op on a derived contiguous type, separate buffers and MPI_IN_PLACE,
 * counts 0, 1, 5 and 700 (over 2 KiB); Allgather and Alltoall with different send and receive
 * types, non-contiguous types, in place; Bcast from either root; the two members passing
 * different datatypes with the same type signature (contiguous at one, a vector at the other);
 * a Bcast whose receiver expects less than the root sends (MPI_ERR_TRUNCATE there, the pair still
 * usable). Results are checked against references computed locally (MPI_Reduce_local for the
 * predefined ops, by hand for the user ops).
 */
#include "mtest.h"

#define MOD 1000003

/* ---- the values each member contributes ------------------------------------------------------- */

typedef struct {
    double v;
    int i;
} dint_t;

typedef struct {
    MPI_Datatype dt;
    MPI_Op op;
    size_t size; /* bytes per element as laid out in an array */
    const char *name;
} red_case_t;

/* Element i of member m's data for case c, written at p (values kept small: PROD stays exact). */
static void value(const red_case_t *c, int m, int i, void *p)
{
    int x = (m * 7 + i * 3) % 5 + 1;
    if (c->dt == MPI_INT) {
        *(int *) p = c->op == MPI_LAND || c->op == MPI_LOR ? (i + m) % 3 == 0 : x * (m ? -1 : 1);
    } else if (c->dt == MPI_FLOAT) {
        *(float *) p = (float) x * 0.5f;
    } else if (c->dt == MPI_DOUBLE) {
        *(double *) p = (double) x - 2.25 * m;
    } else if (c->dt == MPI_LONG_LONG) {
        *(long long *) p = (long long) x * 1000000007LL * (m + 1);
    } else if (c->dt == MPI_UNSIGNED_CHAR) {
        *(unsigned char *) p = (unsigned char) (x * 37 + m * 101 + i);
    } else if (c->dt == MPI_UNSIGNED_SHORT) {
        *(unsigned short *) p = (unsigned short) (x * 4099 + m * 77 + i);
    } else if (c->dt == MPI_2INT) {
        ((int *) p)[0] = (i + m) % 2;
        ((int *) p)[1] = m * 10 + i;
    } else if (c->dt == MPI_DOUBLE_INT) {
        ((dint_t *) p)->v = (double) ((i + m) % 2);
        ((dint_t *) p)->i = m * 10 + i;
    }
}

static void fill(const red_case_t *c, int m, void *buf, int n)
{
    for (int i = 0; i < n; i++)
        value(c, m, i, (char *) buf + (size_t) i * c->size);
}

/* The reference: member 0's data op member 1's, in that order. */
static void *reference(const red_case_t *c, int n, int size)
{
    void *acc = calloc((size_t) n + 1, c->size), *in = calloc((size_t) n + 1, c->size);
    fill(c, size - 1, acc, n);
    for (int m = size - 2; m >= 0; m--) {
        fill(c, m, in, n);
        MPI_Reduce_local(in, acc, n, c->dt, c->op); /* acc = in op acc */
    }
    free(in);
    return acc;
}

static int same(const red_case_t *c, const void *got, const void *want, int n)
{
    if (c->dt == MPI_DOUBLE_INT) { /* padding bytes are not data */
        for (int i = 0; i < n; i++)
            if (((const dint_t *) got)[i].v != ((const dint_t *) want)[i].v ||
                ((const dint_t *) got)[i].i != ((const dint_t *) want)[i].i)
                return 0;
        return 1;
    }
    return memcmp(got, want, (size_t) n * c->size) == 0;
}

/* ---- user ops ------------------------------------------------------------------------------------ */

/* 2x2 integer matrices (a contiguous type of 4 ints), multiplied: in * inout, not commutative */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long long r0 = ((long long) a[0] * b[0] + (long long) a[1] * b[2]) % MOD;
        long long r1 = ((long long) a[0] * b[1] + (long long) a[1] * b[3]) % MOD;
        long long r2 = ((long long) a[2] * b[0] + (long long) a[3] * b[2]) % MOD;
        long long r3 = ((long long) a[2] * b[1] + (long long) a[3] * b[3]) % MOD;
        b[0] = (int) r0, b[1] = (int) r1, b[2] = (int) r2, b[3] = (int) r3;
    }
}

/* commutative: (in + inout) mod MOD on the same type */
static void addmod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    int *a = in, *b = inout;
    for (int k = 0; k < 4 * *len; k++)
        b[k] = (a[k] + b[k]) % MOD;
}

static void mat_input(int m, int i, int *x)
{
    x[0] = m + 1 + i % 3, x[1] = 1, x[2] = 1 + m, x[3] = 0;
}

/* ---- the checks ---------------------------------------------------------------------------------- */

static const int counts[] = {0, 1, 5, 700};
#define NCOUNTS ((int) (sizeof(counts) / sizeof(counts[0])))

static void check_reductions(MPI_Comm c, const char *cname, const red_case_t *cases, int ncases)
{
    int me, size;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    for (int k = 0; k < ncases; k++) {
        const red_case_t *rc = &cases[k];
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int n = counts[ci];
            size_t bytes = (size_t) n * rc->size + 1;
            char *sbuf = calloc(bytes, 1), *rbuf = calloc(bytes, 1);
            void *want = reference(rc, n, size);
            /* allreduce, separate buffers and in place */
            for (int inplace = 0; inplace < 2; inplace++) {
                fill(rc, me, inplace ? rbuf : sbuf, n);
                if (!inplace)
                    memset(rbuf, 0xee, bytes);
                int err = MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, n, rc->dt, rc->op, c);
                MT_CHECK(err == MPI_SUCCESS && same(rc, rbuf, want, n), "%s: allreduce %s count %d%s", cname,
                         rc->name, n, inplace ? " in place" : "");
            }
            /* reduce to each root, separate buffers and in place at the root */
            for (int root = 0; root < size; root++) {
                for (int inplace = 0; inplace < 2; inplace++) {
                    int ip = inplace && me == root;
                    fill(rc, me, ip ? rbuf : sbuf, n);
                    if (!ip)
                        memset(rbuf, 0xee, bytes);
                    int err = MPI_Reduce(ip ? MPI_IN_PLACE : sbuf, rbuf, n, rc->dt, rc->op, root, c);
                    MT_CHECK(err == MPI_SUCCESS && (me != root || same(rc, rbuf, want, n)),
                             "%s: reduce %s count %d root %d%s", cname, rc->name, n, root, ip ? " in place" : "");
                }
            }
            free(want);
            free(sbuf);
            free(rbuf);
        }
    }
}

static void check_user_ops(MPI_Comm c, const char *cname)
{
    int me, size;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op ops[2];
    MPI_Op_create(matmul, 0, &ops[0]);
    MPI_Op_create(addmod, 1, &ops[1]);
    for (int o = 0; o < 2; o++) {
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int n = counts[ci];
            int *sbuf = calloc((size_t) n * 4 + 1, sizeof(int)), *rbuf = calloc((size_t) n * 4 + 1, sizeof(int));
            int *want = calloc((size_t) n * 4 + 1, sizeof(int));
            for (int i = 0; i < n; i++) {
                mat_input(size - 1, i, &want[4 * i]);
                for (int m = size - 2; m >= 0; m--) {
                    int x[4], len = 1;
                    mat_input(m, i, x);
                    (o == 0 ? matmul : addmod)(x, &want[4 * i], &len, &mat);
                }
            }
            for (int mode = 0; mode < 2 + size; mode++) {
                /* 0: allreduce, 1: allreduce in place, 2..: reduce to root mode - 2 (in place there) */
                int root = mode - 2, ip = mode == 1 || (mode >= 2 && me == root);
                for (int i = 0; i < n; i++)
                    mat_input(me, i, ip ? &rbuf[4 * i] : &sbuf[4 * i]);
                if (!ip)
                    memset(rbuf, 0, (size_t) n * 4 * sizeof(int));
                int err = mode < 2 ? MPI_Allreduce(ip ? MPI_IN_PLACE : sbuf, rbuf, n, mat, ops[o], c)
                                   : MPI_Reduce(ip ? MPI_IN_PLACE : sbuf, rbuf, n, mat, ops[o], root, c);
                MT_CHECK(err == MPI_SUCCESS && ((mode >= 2 && me != root) ||
                                                 memcmp(rbuf, want, (size_t) n * 4 * sizeof(int)) == 0),
                         "%s: %s %s count %d%s", cname, mode < 2 ? "allreduce" : "reduce",
                         o == 0 ? "non-commutative matmul" : "commutative addmod", n, ip ? " in place" : "");
            }
            free(sbuf);
            free(rbuf);
            free(want);
        }
    }
    MPI_Op_free(&ops[0]);
    MPI_Op_free(&ops[1]);
    MPI_Type_free(&mat);
}

/* Allgather and Alltoall of n ints per member: sent as n MPI_INT, received as one contiguous type
 * of n ints (the same signature), or as a vector of n ints with stride 2 (not contiguous) at
 * member `vec_at` only (-1: nobody). */
static void check_gather_alltoall(MPI_Comm c, const char *cname, int vec_at)
{
    int me, size;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    for (int ci = 0; ci < NCOUNTS; ci++) {
        int n = counts[ci], stride = 2;
        MPI_Datatype block, vec, rtype;
        MPI_Type_contiguous(n, MPI_INT, &block);
        MPI_Type_commit(&block);
        MPI_Type_vector(n, 1, stride, MPI_INT, &vec);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(vec, &lb, &ext);
        MPI_Datatype vecr;
        MPI_Type_create_resized(vec, 0, (MPI_Aint) n * stride * (MPI_Aint) sizeof(int), &vecr);
        MPI_Type_commit(&vecr);
        int usevec = me == vec_at;
        rtype = usevec ? vecr : block;
        int step = usevec ? stride : 1; /* ints between elements in the receive buffer */
        size_t rints = (size_t) size * n * stride + 1;
        int *sbuf = malloc(((size_t) size * n + 1) * sizeof(int)), *rbuf = malloc(rints * sizeof(int));
        for (int inplace = 0; inplace < 2; inplace++) {
            /* allgather: member m's block is m * 1000 + i */
            for (size_t i = 0; i < rints; i++)
                rbuf[i] = -1;
            for (int i = 0; i < n; i++) {
                sbuf[i] = me * 1000 + i;
                if (inplace)
                    rbuf[((size_t) me * n + i) * step] = me * 1000 + i;
            }
            int err = MPI_Allgather(inplace ? MPI_IN_PLACE : sbuf, n, MPI_INT, rbuf, 1, rtype, c);
            int ok = err == MPI_SUCCESS;
            for (int m = 0; m < size; m++)
                for (int i = 0; i < n; i++)
                    ok = ok && rbuf[((size_t) m * n + i) * step] == m * 1000 + i;
            MT_CHECK(ok, "%s: allgather count %d%s%s", cname, n, inplace ? " in place" : "",
                     usevec ? " into a vector type" : "");
            /* alltoall: the block from member m to member t is m * 1000 + t * 100 + i */
            for (size_t i = 0; i < rints; i++)
                rbuf[i] = -1;
            for (int t = 0; t < size; t++)
                for (int i = 0; i < n; i++) {
                    sbuf[t * n + i] = me * 1000 + t * 100 + i;
                    if (inplace)
                        rbuf[((size_t) t * n + i) * step] = me * 1000 + t * 100 + i;
                }
            err = MPI_Alltoall(inplace ? MPI_IN_PLACE : sbuf, n, MPI_INT, rbuf, 1, rtype, c);
            ok = err == MPI_SUCCESS;
            for (int m = 0; m < size; m++)
                for (int i = 0; i < n; i++)
                    ok = ok && rbuf[((size_t) m * n + i) * step] == m * 1000 + me * 100 + i;
            MT_CHECK(ok, "%s: alltoall count %d%s%s", cname, n, inplace ? " in place" : "",
                     usevec ? " into a vector type" : "");
        }
        /* bcast from each root: n ints as MPI_INT at the root, as the block or vector type elsewhere
         * (count 0: MPI_INT everywhere; Open MPI 4.1 returns at once at a root with count 0 but
         * waits at a member with one element of an empty type) */
        for (int root = 0; root < size; root++) {
            for (size_t i = 0; i < rints; i++)
                rbuf[i] = -1;
            if (me == root)
                for (int i = 0; i < n; i++)
                    rbuf[i] = root * 1000 + i + 7;
            int err = me == root || n == 0 ? MPI_Bcast(rbuf, n, MPI_INT, root, c) : MPI_Bcast(rbuf, 1, rtype, root, c);
            int ok = err == MPI_SUCCESS;
            for (int i = 0; i < n; i++)
                ok = ok && rbuf[(size_t) i * (me == root ? 1 : step)] == root * 1000 + i + 7;
            MT_CHECK(ok, "%s: bcast count %d root %d%s", cname, n, root, usevec ? " into a vector type" : "");
        }
        MPI_Barrier(c);
        free(sbuf);
        free(rbuf);
        MPI_Type_free(&block);
        MPI_Type_free(&vec);
        MPI_Type_free(&vecr);
    }
}

/* A receiver that expects fewer bytes than the root sends: MPI_ERR_TRUNCATE there, nothing left
 * behind (the next collectives on the pair work). */
static void check_truncate(MPI_Comm c, const char *cname)
{
    int me, size;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    if (size != 2)
        return;
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int err = MPI_Bcast(buf, me == 0 ? 8 : 4, MPI_INT, 0, c), cls = MPI_SUCCESS;
    MPI_Error_class(err, &cls);
    MT_CHECK(me == 0 ? err == MPI_SUCCESS : cls == MPI_ERR_TRUNCATE, "%s: truncated bcast gave class %d at %d",
             cname, cls, me);
    int x = me + 1, sum = 0;
    err = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
    MT_CHECK(err == MPI_SUCCESS && sum == 3, "%s: allreduce after a truncated bcast: %d", cname, sum);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    static const red_case_t cases[] = {
        {MPI_INT, MPI_SUM, sizeof(int), "MPI_SUM on MPI_INT"},
        {MPI_FLOAT, MPI_PROD, sizeof(float), "MPI_PROD on MPI_FLOAT"},
        {MPI_DOUBLE, MPI_MAX, sizeof(double), "MPI_MAX on MPI_DOUBLE"},
        {MPI_LONG_LONG, MPI_MIN, sizeof(long long), "MPI_MIN on MPI_LONG_LONG"},
        {MPI_INT, MPI_LAND, sizeof(int), "MPI_LAND on MPI_INT"},
        {MPI_INT, MPI_LOR, sizeof(int), "MPI_LOR on MPI_INT"},
        {MPI_UNSIGNED_CHAR, MPI_BAND, 1, "MPI_BAND on MPI_UNSIGNED_CHAR"},
        {MPI_UNSIGNED_SHORT, MPI_BXOR, sizeof(unsigned short), "MPI_BXOR on MPI_UNSIGNED_SHORT"},
        {MPI_2INT, MPI_MAXLOC, 2 * sizeof(int), "MPI_MAXLOC on MPI_2INT"},
        {MPI_DOUBLE_INT, MPI_MINLOC, sizeof(dint_t), "MPI_MINLOC on MPI_DOUBLE_INT"},
    };
    int ncases = (int) (sizeof(cases) / sizeof(cases[0]));
    for (int order = 0; order < 2; order++) {
        MPI_Comm pair;
        const char *cname = order ? "reversed pair" : "pair";
        MPI_Comm_split(MPI_COMM_WORLD, mt_rank / 2, order ? -mt_rank : mt_rank, &pair);
        check_reductions(pair, cname, cases, ncases);
        check_user_ops(pair, cname);
        for (int vec_at = -1; vec_at < 2; vec_at++)
            check_gather_alltoall(pair, cname, vec_at);
        check_truncate(pair, cname);
        MPI_Comm_free(&pair);
    }
    mt_finish();
    return 0;
}
