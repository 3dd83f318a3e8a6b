/*
 * Graph topologies (MPI_Graph_*): a ring with both neighbours plus extra edges at node 0 (a self
 * loop and a repeated edge), checked through MPI_Graphdims_get / Graph_get / Graph_neighbors(_count)
 * for every node and by sending along every edge; graphs smaller than the communicator and empty
 * ones, MPI_Graph_map, MPI_Comm_dup keeping the topology, and the errors.
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

/* The graph over n nodes: node i -> i+1, i-1 (mod n); node 0 also -> 0 and -> 1 again. */
static int build(int n, int *index, int *edges)
{
    int e = 0;
    for (int i = 0; i < n; i++) {
        edges[e++] = (i + 1) % n;
        edges[e++] = (i + n - 1) % n;
        if (i == 0) {
            edges[e++] = 0;
            edges[e++] = 1 % n;
        }
        index[i] = e;
    }
    return e;
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, st, nn, ne, x;
    int index[8], edges[40], gi[8], ge[40], nb[8];
    MPI_Comm g, dup;
    mt_init(&argc, &argv);
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int n = mt_size, nedges = build(n, index, edges);
    int err = MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &g);
    MT_CHECK(err == MPI_SUCCESS && g != MPI_COMM_NULL, "Graph_create: %s", mt_errstr(err));
    int rank, size;
    MPI_Comm_rank(g, &rank);
    MPI_Comm_size(g, &size);
    MT_CHECK(rank == mt_rank && size == n, "graph rank %d size %d", rank, size);
    MPI_Topo_test(g, &st);
    MPI_Graphdims_get(g, &nn, &ne);
    MT_CHECK(st == MPI_GRAPH && nn == n && ne == nedges, "topo %d nnodes %d nedges %d", st, nn, ne);
    MPI_Graph_get(g, 8, 40, gi, ge);
    for (int i = 0; i < n; i++)
        MT_CHECK(gi[i] == index[i], "Graph_get index[%d] = %d", i, gi[i]);
    for (int i = 0; i < nedges; i++)
        MT_CHECK(ge[i] == edges[i], "Graph_get edges[%d] = %d", i, ge[i]);
    for (int r = 0; r < n; r++) {
        int first = r ? index[r - 1] : 0, cnt;
        MPI_Graph_neighbors_count(g, r, &cnt);
        MT_CHECK(cnt == index[r] - first, "node %d: %d neighbours", r, cnt);
        MPI_Graph_neighbors(g, r, 8, nb);
        for (int i = 0; i < cnt; i++)
            MT_CHECK(nb[i] == edges[first + i], "node %d neighbour %d = %d", r, i, nb[i]);
    }

    /* data along every edge: each node sends its rank to its neighbours and hears from the nodes
     * that have it as a neighbour */
    int cnt, expect = 0;
    MPI_Graph_neighbors_count(g, rank, &cnt);
    MPI_Graph_neighbors(g, rank, 8, nb);
    for (int e = 0; e < nedges; e++)
        expect += edges[e] == rank;
    MPI_Request rq[48];
    int got[40], sum = 0, want_sum = 0;
    for (int i = 0; i < expect; i++)
        MPI_Irecv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, 9, g, &rq[i]);
    for (int i = 0; i < cnt; i++)
        MPI_Isend(&rank, 1, MPI_INT, nb[i], 9, g, &rq[expect + i]);
    MPI_Waitall(expect + cnt, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < expect; i++)
        sum += got[i];
    for (int r = 0; r < n; r++)
        for (int e = r ? index[r - 1] : 0; e < index[r]; e++)
            want_sum += edges[e] == rank ? r : 0;
    MT_CHECK(sum == want_sum, "data along the edges: sum %d, want %d", sum, want_sum);

    MPI_Comm_dup(g, &dup);
    MPI_Topo_test(dup, &st);
    MPI_Graphdims_get(dup, &nn, &ne);
    MT_CHECK(st == MPI_GRAPH && nn == n && ne == nedges, "dup: topo %d nnodes %d nedges %d", st, nn, ne);
    MPI_Comm_free(&dup);

    /* errors */
    check_err(MPI_Graph_neighbors_count(g, n, &x), MPI_ERR_RANK, MPI_ERR_ARG, "rank", "neighbours of node n");
    check_err(MPI_Cartdim_get(g, &x), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "graph Cartesian", "Cartdim_get on a graph");
    check_err(MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 8, nb), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "no topology",
              "Graph_neighbors(world)");
    check_err(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY, MPI_ERR_TOPOLOGY, "graph",
              "Graphdims_get(world)");
    int bad_index[1] = {1}, bad_edges[1] = {1};
    if (is_umpi) /* MPICH 4.0 does not check the edges */
        check_err(MPI_Graph_create(MPI_COMM_WORLD, 1, bad_index, bad_edges, 0, &dup), MPI_ERR_RANK, MPI_ERR_ARG,
                  "edges[0]", "edge to a node that does not exist");
    check_err(MPI_Graph_map(MPI_COMM_WORLD, n + 1, index, edges, &x), MPI_ERR_ARG, MPI_ERR_ARG, "nnodes",
              "Graph_map of too many nodes");
    MPI_Comm_free(&g);

    /* topologies are for intracommunicators: halves joined by an intercommunicator */
    if (n > 1) {
        MPI_Comm half, inter, out;
        int one = 1, per = 0, idx = 0;
        MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - mt_rank % 2, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        check_err(MPI_Cart_create(inter, 1, &one, &per, 0, &out), MPI_ERR_COMM, MPI_ERR_COMM, "intercommunicator",
                  "Cart_create on an intercommunicator");
        check_err(MPI_Graph_create(inter, 1, &idx, NULL, 0, &out), MPI_ERR_COMM, MPI_ERR_COMM, "intercommunicator",
                  "Graph_create on an intercommunicator");
        check_err(MPI_Dist_graph_create_adjacent(inter, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                                 MPI_INFO_NULL, 0, &out), MPI_ERR_COMM, MPI_ERR_COMM,
                  "intercommunicator", "Dist_graph_create_adjacent on an intercommunicator");
        MPI_Topo_test(inter, &st);
        MT_CHECK(st == MPI_UNDEFINED, "Topo_test(intercommunicator) = %d", st);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* an empty graph: nobody is a node */
    err = MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &g);
    MT_CHECK(err == MPI_SUCCESS && g == MPI_COMM_NULL, "empty graph: %s, comm %x", mt_errstr(err), (unsigned) g);

    /* a graph smaller than the communicator: the last rank is left out */
    if (n > 1) {
        int m = n - 1, newrank;
        int e = build(m, index, edges);
        (void) e;
        MPI_Graph_create(MPI_COMM_WORLD, m, index, edges, 0, &g);
        MT_CHECK((g == MPI_COMM_NULL) == (mt_rank == m), "smaller graph: comm %x at rank %d", (unsigned) g, mt_rank);
        MPI_Graph_map(MPI_COMM_WORLD, m, index, edges, &newrank);
        MT_CHECK(newrank == (mt_rank < m ? mt_rank : MPI_UNDEFINED), "Graph_map: %d", newrank);
        if (g != MPI_COMM_NULL) {
            MPI_Graphdims_get(g, &nn, &ne);
            MT_CHECK(nn == m, "smaller graph: nnodes %d", nn);
            MPI_Comm_free(&g);
        }
    }
    return mt_finish();
}
