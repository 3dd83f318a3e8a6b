/*
 * MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED and MPI_COMM_TYPE_HW_UNGUIDED. What a given
 * machine yields depends on its hardware and the binding of the processes, so the checks are the
 * properties the standard promises:
 * - guided, "mpi_shared_memory": the same groups as MPI_COMM_TYPE_SHARED;
 * - guided without the key, or with a type no MPI knows: MPI_COMM_NULL;
 * - guided "Machine" / "Package" / "Core" / "PU": each result is inside the SHARED one, and its
 *   members agree on who belongs (checked by a ring of messages and by its size seen by all);
 * - unguided: MPI_COMM_NULL or a strict subset of the parent; applied again, strictly smaller.
 * Mixed split types in one call (MPI_UNDEFINED on some processes) are allowed, and checked.
 */
#include "mtest.h"

static void ring(MPI_Comm c, const char *what)
{
    int r, n, in = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 3, &in, 1, MPI_INT, (r + n - 1) % n, 3, c, MPI_STATUS_IGNORE);
    MT_CHECK(in == (r + n - 1) % n, "%s: ring got %d", what, in);
}

/* Every member of sub is a member of super. */
static void check_inside(MPI_Comm sub, MPI_Comm super, const char *what)
{
    MPI_Group gs, gp;
    int n, *ranks, *out;
    MPI_Comm_group(sub, &gs);
    MPI_Comm_group(super, &gp);
    MPI_Group_size(gs, &n);
    ranks = malloc(n * sizeof(int));
    out = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(gs, n, ranks, gp, out);
    for (int i = 0; i < n; i++)
        MT_CHECK(out[i] != MPI_UNDEFINED, "%s: member %d is outside", what, i);
    free(ranks);
    free(out);
    MPI_Group_free(&gs);
    MPI_Group_free(&gp);
}

static MPI_Comm guided(MPI_Comm parent, const char *type)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_Info_create(&info);
    if (type != NULL)
        MPI_Info_set(info, "mpi_hw_resource_type", type);
    MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c);
    MPI_Info_free(&info);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Comm shared, c, d;
    int res, n, n2;
    mt_init(&argc, &argv);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);

    c = guided(MPI_COMM_WORLD, "mpi_shared_memory");
    MT_CHECK(c != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MPI_Comm_compare(c, shared, &res);
        MT_CHECK(res == MPI_CONGRUENT, "mpi_shared_memory vs SHARED: %d", res);
        MPI_Comm_free(&c);
    }
    c = guided(MPI_COMM_WORLD, NULL);
    MT_CHECK(c == MPI_COMM_NULL, "no mpi_hw_resource_type key: not MPI_COMM_NULL");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    c = guided(MPI_COMM_WORLD, "no_such_resource_type");
    MT_CHECK(c == MPI_COMM_NULL, "unknown resource type: not MPI_COMM_NULL");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);

    const char *types[] = {"Machine", "Package", "NUMANode", "L3Cache", "Core", "PU"};
    for (int t = 0; t < 6; t++) {
        c = guided(MPI_COMM_WORLD, types[t]);
        if (c == MPI_COMM_NULL)
            continue; /* not held by a single one (e.g. unbound), or an MPI that does not know it */
        check_inside(c, shared, types[t]);
        ring(c, types[t]);
        MPI_Comm_free(&c);
    }

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, mt_rank, MPI_INFO_NULL, &c);
    if (c != MPI_COMM_NULL) {
        MPI_Comm_size(c, &n);
        MT_CHECK(n < mt_size, "unguided: size %d is not below the parent's %d", n, mt_size);
        check_inside(c, MPI_COMM_WORLD, "unguided");
        ring(c, "unguided");
        MPI_Comm_split_type(c, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &d);
        if (d != MPI_COMM_NULL) {
            MPI_Comm_size(d, &n2);
            MT_CHECK(n2 < n, "unguided twice: size %d is not below %d", n2, n);
            check_inside(d, c, "unguided twice");
            MPI_Comm_free(&d);
        }
        MPI_Comm_free(&c);
    }
    if (mt_size > 1) {
        /* rank 0 opts out */
        MPI_Comm_split_type(MPI_COMM_WORLD, mt_rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED, 0,
                            MPI_INFO_NULL, &c);
        if (mt_rank == 0)
            MT_CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED split type gave a communicator");
        if (c != MPI_COMM_NULL) {
            check_inside(c, MPI_COMM_WORLD, "unguided without rank 0");
            ring(c, "unguided without rank 0");
            MPI_Comm_free(&c);
        }
    }
    MPI_Comm_free(&shared);
    return mt_finish();
}
