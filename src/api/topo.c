/*
 * Process topologies, common part and Cartesian grids (MPI 4.1 sec. 8.5): MPI_Topo_test,
 * MPI_Dims_create and the MPI_Cart_* functions. Graphs are in topo_graph.c, the record's life
 * (new, copy, free) in topo_record.c.
 *
 * umpi does not reorder: reorder is accepted and ignored, so a process keeps its rank of the old
 * communicator (MPI_Cart_map and MPI_Graph_map say the same). Grid coordinates are row-major: the
 * last dimension varies fastest.
 */
#include "api/umpi_comm.h"
#include "api/umpi_topo_internal.h"
#include "core/umpi_topo.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *umpi__topo_name(int kind)
{
    switch (kind) {
    case MPI_CART: return "a Cartesian topology";
    case MPI_GRAPH: return "a graph topology";
    case MPI_DIST_GRAPH: return "a distributed graph topology";
    default: return "no topology";
    }
}

int umpi_topo_of(const umpi_comm_t *c, int kind, const umpi_topo_t **t)
{
    *t = c->topo;
    if (c->topo != NULL && c->topo->kind == kind)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_TOPOLOGY, "communicator %s%s0x%x in argument 'comm' has %s, not %s",
                           c->name, c->name[0] ? " " : "", (unsigned) c->handle,
                           umpi__topo_name(c->topo ? c->topo->kind : MPI_UNDEFINED), umpi__topo_name(kind));
}

int umpi_topo_need_intra(const umpi_comm_t *c, const char *arg)
{
    if (!c->is_inter)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_COMM, "intercommunicator 0x%x in argument '%s': topologies are built on "
                           "intracommunicators", (unsigned) c->handle, arg);
}

/* The processes of c with rank < members, in their order, as a new communicator (MPI_COMM_NULL for
 * the others), carrying topology t (taken over; freed when no communicator gets it). Collective. */
int umpi_topo_attach(umpi_comm_t *c, int members, umpi_topo_t *t, MPI_Comm *newcomm)
{
    int err = umpi_impl_comm_split(c, c->rank < members ? 0 : MPI_UNDEFINED, c->rank, newcomm);
    if (err == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
        umpi_comm_get(*newcomm)->topo = t;
    else
        umpi_topo_free(t);
    return err;
}

int umpi_impl_topo_test(umpi_comm_t *comm_ptr, int *status)
{
    *status = comm_ptr->topo ? comm_ptr->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- MPI_Dims_create ------------------------------------------------------------------------------ */

/* The best split found so far of a number into k factors, kept in non-increasing order: the
 * smallest spread max - min, then the largest smallest factor (360 in 3: 10 6 6 rather than
 * 9 8 5, as MPICH answers too). */
struct umpi__dims_search {
    int k;
    int *cur, *best;
    long best_spread, best_min;
    const long *div; /* the divisors of the number, smallest first: every factor is one */
    int ndiv;
};

/* The smallest r with r^e >= q (q >= 1, e >= 1). */
static long umpi__root_up(long q, int e)
{
    long lo = 1, hi = q;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2, p = 1;
        for (int j = 0; j < e && p < q; j++)
            p *= mid;
        if (p >= q)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/*
 * Factor i of rest (factors i.. multiply to rest, none above cap). Factors go up from the
 * smallest that can still reach rest; the last factor is at most root_up(rest / f, factors
 * left), so the spread is at least first - that, a bound that grows with f: once it passes the
 * best spread found, larger f cannot do better.
 */
static void umpi__dims_try(struct umpi__dims_search *s, int i, long rest, long cap)
{
    if (i == s->k - 1) {
        if (rest > cap)
            return;
        s->cur[i] = (int) rest;
        long spread = s->cur[0] - rest;
        if (s->best_spread < 0 || spread < s->best_spread || (spread == s->best_spread && rest > s->best_min)) {
            s->best_spread = spread;
            s->best_min = rest;
            memcpy(s->best, s->cur, (size_t) s->k * sizeof(int));
        }
        return;
    }
    long lo = umpi__root_up(rest, s->k - i);
    for (int d = 0; d < s->ndiv; d++) {
        long f = s->div[d];
        if (f < lo || rest % f)
            continue;
        if (f > cap)
            break;
        long first = i ? s->cur[0] : f;
        if (s->best_spread >= 0 && first - umpi__root_up(rest / f, s->k - i - 1) > s->best_spread)
            break;
        s->cur[i] = (int) f;
        umpi__dims_try(s, i + 1, rest / f, f);
    }
}

/* The divisors of m (at most 1536 for an int), smallest first; their number, -1 when out of memory. */
static int umpi__divisors(long m, long **out)
{
    int n = 0, cap = 64;
    long *d = malloc((size_t) cap * sizeof(long));
    for (long f = 1; d != NULL && f * f <= m; f++) {
        if (m % f)
            continue;
        if (n + 2 > cap) {
            long *g = realloc(d, (size_t) (cap *= 2) * sizeof(long));
            if (g == NULL) {
                free(d);
                d = NULL;
                break;
            }
            d = g;
        }
        d[n++] = f;
        if (f != m / f)
            d[n++] = m / f;
    }
    if (d == NULL)
        return -1;
    for (int i = 1; i < n; i++) /* insertion sort: n is small */
        for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
            long t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    *out = d;
    return n;
}

int umpi_impl_dims_create(int nnodes, int ndims, int dims[])
{
    if (ndims < 0)
        return umpi_err_create(MPI_ERR_DIMS, "negative number of dimensions %d in argument 'ndims'", ndims);
    if (nnodes < 1)
        return umpi_err_create(MPI_ERR_ARG, "invalid number of nodes %d in argument 'nnodes' (must be > 0)",
                               nnodes);
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return umpi_err_create(MPI_ERR_DIMS, "negative extent %d in argument 'dims[%d]'", dims[i], i);
        if (dims[i] == 0)
            nfree++;
        else if ((fixed *= dims[i]) > nnodes)
            break;
    }
    if (fixed > nnodes || nnodes % fixed != 0)
        return umpi_err_create(MPI_ERR_DIMS, "the extents given in argument 'dims' multiply to %s%ld, which does "
                               "not divide nnodes %d", fixed > nnodes ? "more than " : "", fixed, nnodes);
    long rest = nnodes / fixed;
    if (nfree == 0) {
        if (rest != 1)
            return umpi_err_create(MPI_ERR_DIMS, "argument 'dims' fixes every extent, and they multiply to %ld, "
                                   "not nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *buf = malloc(2 * (size_t) nfree * sizeof(int));
    long *div = NULL;
    int ndiv = buf ? umpi__divisors(rest, &div) : -1;
    if (ndiv < 0) {
        free(buf);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory in MPI_Dims_create");
    }
    struct umpi__dims_search s = {nfree, buf, buf + nfree, -1, 0, div, ndiv};
    umpi__dims_try(&s, 0, rest, rest);
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[j++];
    free(buf);
    free(div);
    return MPI_SUCCESS;
}

/* ---- Cartesian grids ------------------------------------------------------------------------------ */

/* Checks a grid description; *size gets the number of processes it has (capped above INT_MAX). */
static int umpi__cart_check(const umpi_comm_t *c, int ndims, const int dims[], const int periods[], long *size)
{
    if (ndims < 0)
        return umpi_err_create(MPI_ERR_DIMS, "negative number of dimensions %d in argument 'ndims'", ndims);
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return umpi_err_create(MPI_ERR_DIMS, "extent %d in argument 'dims[%d]' is not positive", dims[i], i);
        if (n <= c->size)
            n *= dims[i];
    }
    (void) periods;
    if (n > c->size)
        return umpi_err_create(MPI_ERR_DIMS, "the grid in argument 'dims' has %s%ld processes, more than the %d "
                               "of the communicator", n > INT_MAX ? "over " : "", n > INT_MAX ? (long) INT_MAX : n,
                               c->size);
    *size = n;
    return MPI_SUCCESS;
}

static void umpi__cart_coords(const umpi_topo_t *t, int rank, int *coords, int n)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        if (i < n)
            coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

int umpi_impl_cart_create(umpi_comm_t *comm_old_ptr, int ndims, const int dims[], const int periods[], int reorder,
                          MPI_Comm *comm_cart)
{
    long size;
    (void) reorder;
    int err = umpi_topo_need_intra(comm_old_ptr, "comm_old");
    if (err == MPI_SUCCESS)
        err = umpi__cart_check(comm_old_ptr, ndims, dims, periods, &size);
    if (err != MPI_SUCCESS)
        return err;
    umpi_topo_t *t = umpi_topo_new(MPI_CART, ndims, 0, 0, 0, 0);
    if (t == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a Cartesian topology");
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    umpi__cart_coords(t, comm_old_ptr->rank, t->coords, ndims);
    return umpi_topo_attach(comm_old_ptr, (int) size, t, comm_cart);
}

int umpi_impl_cart_map(umpi_comm_t *comm_ptr, int ndims, const int dims[], const int periods[], int *newrank)
{
    long size;
    int err = umpi_topo_need_intra(comm_ptr, "comm");
    if (err == MPI_SUCCESS)
        err = umpi__cart_check(comm_ptr, ndims, dims, periods, &size);
    if (err != MPI_SUCCESS)
        return err;
    *newrank = comm_ptr->rank < size ? comm_ptr->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int umpi_impl_cartdim_get(umpi_comm_t *comm_ptr, int *ndims)
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_CART, &t);
    if (err == MPI_SUCCESS)
        *ndims = t->ndims;
    return err;
}

int umpi_impl_cart_get(umpi_comm_t *comm_ptr, int maxdims, int dims[], int periods[], int coords[])
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_CART, &t);
    if (err != MPI_SUCCESS)
        return err;
    for (int i = 0; i < t->ndims && i < maxdims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}

int umpi_impl_cart_rank(umpi_comm_t *comm_ptr, const int coords[], int *rank)
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_CART, &t);
    if (err != MPI_SUCCESS)
        return err;
    if (coords == NULL && t->ndims > 0)
        return umpi_err_create(MPI_ERR_ARG, "argument 'coords' is NULL with %d dimensions", t->ndims);
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return umpi_err_create(MPI_ERR_ARG, "coordinate %d in argument 'coords[%d]' is outside the "
                                       "non-periodic dimension of extent %d", x, i, d);
            x = ((x % d) + d) % d;
        }
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int umpi_impl_cart_coords(umpi_comm_t *comm_ptr, int rank, int maxdims, int coords[])
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_CART, &t);
    if (err != MPI_SUCCESS)
        return err;
    if (rank < 0 || rank >= comm_ptr->size)
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'rank' (communicator size %d)", rank,
                               comm_ptr->size);
    umpi__cart_coords(t, rank, coords, maxdims);
    return MPI_SUCCESS;
}

int umpi_impl_cart_shift(umpi_comm_t *comm_ptr, int direction, int disp, int *rank_source, int *rank_dest)
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_CART, &t);
    if (err != MPI_SUCCESS)
        return err;
    if (direction < 0 || direction >= t->ndims)
        return umpi_err_create(MPI_ERR_ARG, "invalid direction %d in argument 'direction' (the grid has %d "
                               "dimensions)", direction, t->ndims);
    int d = t->dims[direction], me = t->coords[direction];
    long stride = 1;
    for (int i = t->ndims - 1; i > direction; i--)
        stride *= t->dims[i];
    long base = comm_ptr->rank - (long) me * stride;
    long ends[2] = {(long) me - disp, (long) me + disp};
    int *out[2] = {rank_source, rank_dest};
    for (int k = 0; k < 2; k++) {
        long x = ends[k];
        if (x < 0 || x >= d) {
            if (!t->periods[direction]) {
                *out[k] = MPI_PROC_NULL;
                continue;
            }
            x = ((x % d) + d) % d;
        }
        *out[k] = (int) (base + x * stride);
    }
    return MPI_SUCCESS;
}

int umpi_impl_cart_sub(umpi_comm_t *comm_ptr, const int remain_dims[], MPI_Comm *newcomm)
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_CART, &t);
    if (err != MPI_SUCCESS)
        return err;
    if (remain_dims == NULL && t->ndims > 0)
        return umpi_err_create(MPI_ERR_ARG, "argument 'remain_dims' is NULL with %d dimensions", t->ndims);
    int nd = 0, color = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i])
            nd++;
        else
            color = color * t->dims[i] + t->coords[i]; /* which slice of the grid I am in */
    }
    umpi_topo_t *s = umpi_topo_new(MPI_CART, nd, 0, 0, 0, 0);
    if (s == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a Cartesian topology");
    for (int i = 0, j = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            s->dims[j] = t->dims[i];
            s->periods[j] = t->periods[i];
            s->coords[j++] = t->coords[i];
        }
    }
    /* The old rank as key keeps the row-major order of the remaining coordinates. */
    err = umpi_impl_comm_split(comm_ptr, color, comm_ptr->rank, newcomm);
    if (err == MPI_SUCCESS)
        umpi_comm_get(*newcomm)->topo = s;
    else
        umpi_topo_free(s);
    return err;
}
