/*
 * Distributed graph topologies: MPI_Dist_graph_create_adjacent (a weighted ring, the same ring
 * unweighted, a star where MPI_WEIGHTS_EMPTY stands for the empty side) and MPI_Dist_graph_create
 * (edges given by processes other than their sources, some processes giving none), checked through
 * MPI_Dist_graph_neighbors(_count) with weights and by sending along every edge; MPI_Comm_dup
 * keeping the topology; the errors.
 */
#include "mtest.h"

static int is_umpi;

static void check_err(int err, int cls1, int cls2, const char *words, const char *what)
{
    int cls = mt_class(err);
    MT_CHECK(err != MPI_SUCCESS && (cls == cls1 || cls == cls2), "%s: class %d (%s)", what, cls,
             err != MPI_SUCCESS ? mt_errstr(err) : "success");
    if (is_umpi && err != MPI_SUCCESS)
        MT_CHECK(mt_msg_has(err, words), "%s: message '%s' lacks '%s'", what, mt_errstr(err), words);
}

static int pair_cmp(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

/* Same multiset of (rank, weight) pairs (weights ignored when w is NULL)? */
static int same_edges(int n, const int *r, const int *w, const int *wr, const int *ww)
{
    int a[16][2], b[16][2];
    for (int i = 0; i < n; i++) {
        a[i][0] = r[i], a[i][1] = w ? w[i] : 0;
        b[i][0] = wr[i], b[i][1] = w ? ww[i] : 0;
    }
    qsort(a, (size_t) n, sizeof(a[0]), pair_cmp);
    qsort(b, (size_t) n, sizeof(b[0]), pair_cmp);
    return memcmp(a, b, (size_t) n * sizeof(a[0])) == 0;
}

/* Each process sends its rank to every destination and receives from every source. */
static void traffic(MPI_Comm c, const char *what)
{
    int in, out, w, src[16], dst[16], got[16], me;
    MPI_Request rq[32];
    MPI_Comm_rank(c, &me);
    MPI_Dist_graph_neighbors_count(c, &in, &out, &w);
    MPI_Dist_graph_neighbors(c, in, src, MPI_UNWEIGHTED, out, dst, MPI_UNWEIGHTED);
    for (int i = 0; i < in; i++)
        MPI_Irecv(&got[i], 1, MPI_INT, src[i], 3, c, &rq[i]);
    for (int i = 0; i < out; i++)
        MPI_Isend(&me, 1, MPI_INT, dst[i], 3, c, &rq[in + i]);
    MPI_Waitall(in + out, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < in; i++)
        MT_CHECK(got[i] == src[i], "%s: got %d from source %d", what, got[i], src[i]);
}

/* The neighbours and weights of c are exactly these (in order when ordered is set). */
static void expect(MPI_Comm c, int in, const int *src, const int *sw, int out, const int *dst, const int *dw,
                   int weighted, int ordered, const char *what)
{
    int gin, gout, gw, s[16], w1[16], d[16], w2[16], st;
    MPI_Topo_test(c, &st);
    MPI_Dist_graph_neighbors_count(c, &gin, &gout, &gw);
    MT_CHECK(st == MPI_DIST_GRAPH && gin == in && gout == out && !gw == !weighted,
             "%s: topo %d in %d out %d weighted %d", what, st, gin, gout, gw);
    if (gin != in || gout != out)
        return;
    MPI_Dist_graph_neighbors(c, 16, s, weighted ? w1 : MPI_UNWEIGHTED, 16, d, weighted ? w2 : MPI_UNWEIGHTED);
    if (ordered) {
        for (int i = 0; i < in; i++)
            MT_CHECK(s[i] == src[i] && (!weighted || w1[i] == sw[i]), "%s: source %d: %d (%d)", what, i, s[i], w1[i]);
        for (int i = 0; i < out; i++)
            MT_CHECK(d[i] == dst[i] && (!weighted || w2[i] == dw[i]), "%s: dest %d: %d (%d)", what, i, d[i], w2[i]);
    } else {
        MT_CHECK(same_edges(in, s, weighted ? w1 : NULL, src, sw), "%s: wrong sources", what);
        MT_CHECK(same_edges(out, d, weighted ? w2 : NULL, dst, dw), "%s: wrong destinations", what);
    }
    traffic(c, what);
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, n, me, x;
    MPI_Comm c, dup;
    mt_init(&argc, &argv);
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    n = mt_size, me = mt_rank;
    int left = (me + n - 1) % n, right = (me + 1) % n;

    /* weighted ring, given adjacently: from left and right, to right and left */
    int src[2] = {left, right}, sw[2] = {100 + left, 200 + right};
    int dst[2] = {right, left}, dw[2] = {200 + me, 100 + me};
    int err = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &c);
    MT_CHECK(err == MPI_SUCCESS, "create_adjacent: %s", mt_errstr(err));
    expect(c, 2, src, sw, 2, dst, dw, 1, 1, "adjacent weighted ring");
    MPI_Comm_dup(c, &dup);
    expect(dup, 2, src, sw, 2, dst, dw, 1, 1, "dup of the weighted ring");
    MPI_Comm_free(&dup);
    check_err(MPI_Cart_shift(c, 0, 1, &x, &x), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "distributed Cartesian",
              "Cart_shift on a distributed graph");
    MPI_Comm_free(&c);

    /* the same ring without weights */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 1,
                                   &c);
    expect(c, 2, src, NULL, 2, dst, NULL, 0, 1, "adjacent unweighted ring");
    MPI_Comm_free(&c);

    /* a star into rank 0: the empty sides are MPI_WEIGHTS_EMPTY, and the graph is weighted */
    int ssrc[16], ssw[16], sdst[1] = {0}, sdw[1] = {me + 10};
    for (int i = 0; i < n - 1; i++)
        ssrc[i] = i + 1, ssw[i] = i + 11;
    /* (MPICH 4.0 crashes in MPI_Dist_graph_neighbors after MPI_WEIGHTS_EMPTY) */
    if (!is_umpi)
        ;
    else if (me == 0)
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n - 1, ssrc, n > 1 ? ssw : MPI_WEIGHTS_EMPTY, 0, NULL,
                                       MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c);
    else
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 1, sdst, sdw, MPI_INFO_NULL, 0,
                                       &c);
    if (is_umpi) {
        if (me == 0)
            expect(c, n - 1, ssrc, ssw, 0, NULL, NULL, 1, 1, "star centre");
        else
            expect(c, 0, NULL, NULL, 1, sdst, sdw, 1, 1, "star point");
        MPI_Comm_free(&c);
    }

    /* MPI_Dist_graph_create: node s has edges s -> s+1 (weight 10 s + 1) and s -> s-1 (10 s + 2).
     * Rank 0 gives the edges of the even nodes, rank 1 those of the odd ones (listing node 1 twice,
     * once with no edges), the others give none. */
    int gs[8], gd[8], gdst[16], gw[16], k = 0, e = 0;
    for (int s = 0; s < n; s++) {
        if ((n == 1 ? 0 : s % 2) != me)
            continue;
        gs[k] = s, gd[k++] = 2;
        gdst[e] = (s + 1) % n, gw[e++] = 10 * s + 1;
        gdst[e] = (s + n - 1) % n, gw[e++] = 10 * s + 2;
        if (s == 1)
            gs[k] = 1, gd[k++] = 0;
    }
    err = MPI_Dist_graph_create(MPI_COMM_WORLD, k, gs, gd, gdst, k ? gw : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c);
    MT_CHECK(err == MPI_SUCCESS, "Dist_graph_create: %s", mt_errstr(err));
    int isrc[2] = {left, right}, iw[2] = {10 * left + 1, 10 * right + 2};
    int odst[2] = {right, left}, ow[2] = {10 * me + 1, 10 * me + 2};
    expect(c, 2, isrc, iw, 2, odst, ow, 1, 0, "Dist_graph_create weighted");
    MPI_Comm_free(&c);

    err = MPI_Dist_graph_create(MPI_COMM_WORLD, k, gs, gd, gdst, MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &c);
    MT_CHECK(err == MPI_SUCCESS, "Dist_graph_create unweighted: %s", mt_errstr(err));
    expect(c, 2, isrc, NULL, 2, odst, NULL, 0, 0, "Dist_graph_create unweighted");
    MPI_Comm_free(&c);

    /* errors (local checks, before any communication) */
    int bad = n, neg = -1;
    check_err(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x, &x, &x), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY,
              "distributed graph", "neighbours_count(world)");
    if (is_umpi) { /* MPICH 4.0 does not check these */
        check_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                                 MPI_INFO_NULL, 0, &c), MPI_ERR_RANK, MPI_ERR_ARG, "sources[0]",
                  "source out of range");
        check_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &me, &neg, 0, NULL, MPI_WEIGHTS_EMPTY,
                                                 MPI_INFO_NULL, 0, &c), MPI_ERR_ARG, MPI_ERR_ARG, "weight sourceweights",
                  "negative weight");
        check_err(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &me, MPI_WEIGHTS_EMPTY, 0, NULL,
                                                 MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c), MPI_ERR_ARG, MPI_ERR_ARG,
                  "MPI_WEIGHTS_EMPTY", "MPI_WEIGHTS_EMPTY with an edge");
        check_err(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &neg, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
                  MPI_ERR_ARG, MPI_ERR_ARG, "degree", "negative degree");
    }
    return mt_finish();
}
