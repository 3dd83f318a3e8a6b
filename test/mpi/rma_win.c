/*
 * Windows of every flavor: creation, attributes (base, size, disp_unit, flavor, model), group,
 * name, hints, and data moved by MPI_Put / MPI_Get between fences into each of them; a shared
 * window on each node's ranks read and written with plain loads and stores through
 * MPI_Win_shared_query, and one on MPI_COMM_WORLD, which fails with MPI_ERR_RMA_SHARED when the job
 * spans nodes (test/slurm/rma.sh runs this across two).
 */
#include "mtest.h"

#include <unistd.h>

#define N 16

static int deleted;
static int count_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    deleted += *(int *) val;
    return MPI_SUCCESS;
}

/* Each rank puts its rank-stamped values into its right neighbour's window at disp `slot`, then
 * gets them back from its left neighbour's; win holds 2 * N ints per rank (disp_unit 4). */
static void ring_put_get(MPI_Win win, int *mem, const char *flavor, MPI_Aint disp0)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int src[N], back[N];
    for (int i = 0; i < N; i++)
        src[i] = mt_rank * 1000 + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, disp0 + N, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        MT_CHECK(mem[N + i] == left * 1000 + i, "%s: put from %d: mem[%d] = %d, want %d", flavor, left, N + i,
                 mem[N + i], left * 1000 + i);
    memset(back, 0, sizeof(back));
    MPI_Get(back, N, MPI_INT, left, disp0 + N, N, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    /* left's slot holds what left's own left neighbour put */
    int ll = (left + mt_size - 1) % mt_size;
    for (int i = 0; i < N; i++)
        MT_CHECK(back[i] == ll * 1000 + i, "%s: get from %d: back[%d] = %d, want %d", flavor, left, i, back[i],
                 ll * 1000 + i);
}

static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor, const char *what)
{
    void *b;
    MPI_Aint *sz;
    int *du, *fl, *model, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag);
    MT_CHECK(flag && b == base, "%s: MPI_WIN_BASE %p, want %p", what, b, base);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
    MT_CHECK(flag && *sz == size, "%s: MPI_WIN_SIZE %ld, want %ld", what, (long) *sz, (long) size);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag);
    MT_CHECK(flag && *du == disp_unit, "%s: MPI_WIN_DISP_UNIT %d, want %d", what, *du, disp_unit);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag);
    MT_CHECK(flag && *fl == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, want %d", what, *fl, flavor);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    MT_CHECK(flag && *model == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL %d, want MPI_WIN_UNIFIED", what, *model);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Aint bytes = 2 * N * sizeof(int);

    /* MPI_Win_create on user memory, with hints, name and group */
    int *mem = calloc(2 * N, sizeof(int));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "false");
    MPI_Win win;
    MPI_Win_create(mem, bytes, sizeof(int), info, MPI_COMM_WORLD, &win);
    MPI_Info_free(&info);
    check_attrs(win, mem, bytes, sizeof(int), MPI_WIN_FLAVOR_CREATE, "create");
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, val, &flag);
    MT_CHECK(flag && strcmp(val, "false") == 0, "MPI_Win_get_info: no_locks %s", flag ? val : "absent");
    MPI_Info_free(&used);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_set_name(win, "ring window");
    MPI_Win_get_name(win, name, &len);
    MT_CHECK(len == 11 && strcmp(name, "ring window") == 0, "MPI_Win_get_name: '%s' (%d)", name, len);
    MPI_Group g, wg;
    int cmp;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    MT_CHECK(cmp == MPI_IDENT, "MPI_Win_get_group: compare %d with MPI_COMM_WORLD's", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    ring_put_get(win, mem, "create", 0);
    /* a user attribute: set, read, replaced (old value deleted), deleted again by MPI_Win_free */
    int kv, v1 = 1, v2 = 10, *got;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &kv, NULL);
    MPI_Win_get_attr(win, kv, &got, &flag);
    MT_CHECK(!flag, "MPI_Win_get_attr: an unset keyval has a value");
    MPI_Win_set_attr(win, kv, &v1);
    MPI_Win_get_attr(win, kv, &got, &flag);
    MT_CHECK(flag && got == &v1, "MPI_Win_get_attr: flag %d, %p want %p", flag, (void *) got, (void *) &v1);
    MPI_Win_set_attr(win, kv, &v2);
    MT_CHECK(deleted == 1, "replacing an attribute: delete callback sum %d, want 1", deleted);
    MPI_Win_delete_attr(win, kv);
    MT_CHECK(deleted == 11, "MPI_Win_delete_attr: delete callback sum %d, want 11", deleted);
    MPI_Win_get_attr(win, kv, &got, &flag);
    MT_CHECK(!flag, "MPI_Win_get_attr: a deleted attribute is still there");
    MPI_Win_set_attr(win, kv, &v2);
    deleted = 1;
    /* hints set after creation join those given at creation */
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL, val, &flag);
    MT_CHECK(flag && strcmp(val, "none") == 0, "MPI_Win_set_info: accumulate_ordering %s", flag ? val : "absent");
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, val, &flag);
    MT_CHECK(flag, "MPI_Win_set_info dropped the hint given at creation");
    MPI_Info_free(&used);
    MPI_Win_free(&win);
    MT_CHECK(deleted == 11, "MPI_Win_free: delete callback sum %d, want 11", deleted);
    MPI_Win_free_keyval(&kv);
    MT_CHECK(kv == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left the keyval");
    MT_CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
    free(mem);

    /* MPI_Win_allocate, disp_unit 1 (byte displacements) */
    int *amem;
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &amem, &win);
    check_attrs(win, amem, bytes, 1, MPI_WIN_FLAVOR_ALLOCATE, "allocate");
    memset(amem, 0, bytes);
    /* displacements count bytes here: put N ints at byte 0 of the second half through disp_unit 1 */
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size, src[N];
        for (int i = 0; i < N; i++)
            src[i] = 7 * mt_rank + i;
        MPI_Win_fence(0, win);
        MPI_Put(src, N, MPI_INT, right, N * sizeof(int), N, MPI_INT, win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < N; i++)
            MT_CHECK(amem[N + i] == 7 * left + i, "allocate: amem[%d] = %d, want %d", N + i, amem[N + i],
                     7 * left + i);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }
    MPI_Win_free(&win);

    /* MPI_Win_create_dynamic + attach: displacements are addresses, exchanged by the program */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    check_attrs(win, NULL, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "dynamic");
    int *dmem = calloc(2 * N, sizeof(int));
    MPI_Win_attach(win, dmem, bytes);
    MPI_Aint addr, *addrs = malloc(mt_size * sizeof(MPI_Aint));
    MPI_Get_address(dmem, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size, src[N], back[N];
        for (int i = 0; i < N; i++)
            src[i] = 100 * mt_rank + i;
        MPI_Win_fence(0, win);
        MPI_Put(src, N, MPI_INT, right, addrs[right] + N * sizeof(int), N, MPI_INT, win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < N; i++)
            MT_CHECK(dmem[N + i] == 100 * left + i, "dynamic: dmem[%d] = %d, want %d", N + i, dmem[N + i],
                     100 * left + i);
        MPI_Get(back, N, MPI_INT, right, addrs[right] + N * sizeof(int), N, MPI_INT, win);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        for (int i = 0; i < N; i++)
            MT_CHECK(back[i] == 100 * mt_rank + i, "dynamic get: back[%d] = %d, want %d", i, back[i],
                     100 * mt_rank + i);
    }
    MPI_Win_detach(win, dmem);
    MPI_Win_free(&win);
    free(dmem);
    free(addrs);

    /* MPI_Win_allocate_shared on the node: contiguous segments, loads and stores, then RMA */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int *smem;
    /* on MPI_COMM_WORLD: a shared window when the job is on one node; across nodes every rank gets
     * MPI_ERR_RMA_SHARED (each checks where all are, no rank waits for another) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &smem, &win), cls;
    MPI_Error_class(err, &cls);
    if (nsize == mt_size) {
        MT_CHECK(err == MPI_SUCCESS, "MPI_Win_allocate_shared on MPI_COMM_WORLD, one node: error class %d", cls);
        if (err == MPI_SUCCESS)
            MPI_Win_free(&win);
    } else {
        MT_CHECK(cls == MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared on MPI_COMM_WORLD across nodes: error class "
                 "%d, want MPI_ERR_RMA_SHARED (%d)", cls, MPI_ERR_RMA_SHARED);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Aint mysize = (nrank + 1) * sizeof(int); /* unequal sizes: rank r holds r + 1 ints */
    MPI_Win_allocate_shared(mysize, sizeof(int), MPI_INFO_NULL, node, &smem, &win);
    check_attrs(win, smem, mysize, sizeof(int), MPI_WIN_FLAVOR_SHARED, "shared");
    for (int i = 0; i <= nrank; i++)
        smem[i] = nrank * 10 + i;
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int *prev = NULL;
    for (int r = 0; r < nsize; r++) {
        MPI_Aint sz;
        int du, *p;
        MPI_Win_shared_query(win, r, &sz, &du, &p);
        MT_CHECK(sz == (MPI_Aint) ((r + 1) * sizeof(int)) && du == (int) sizeof(int),
                 "shared_query(%d): size %ld disp_unit %d", r, (long) sz, du);
        MT_CHECK(prev == NULL || p == prev + r, "shared_query(%d): %p not right after rank %d's %p", r,
                 (void *) p, r - 1, (void *) prev);
        prev = p;
        for (int i = 0; i <= r; i++)
            MT_CHECK(p[i] == r * 10 + i, "shared load of rank %d's [%d]: %d, want %d", r, i, p[i], r * 10 + i);
    }
    MPI_Aint sz;
    int du, *p0;
    MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p0);
    MT_CHECK(sz == sizeof(int), "shared_query(MPI_PROC_NULL): size %ld, want rank 0's", (long) sz);
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    /* every rank adds one to rank 0's int through MPI_Accumulate: the sum is exact */
    int one = 1;
    MPI_Win_fence(0, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (nrank == 0)
        MT_CHECK(smem[0] == nsize, "shared accumulate: %d, want %d", smem[0], nsize);
    MPI_Win_free(&win);

    /* the large-count constructors: disp_unit is an MPI_Aint */
    MPI_Win_allocate_shared_c(sizeof(long), (MPI_Aint) sizeof(long), MPI_INFO_NULL, node, &smem, &win);
    MPI_Win_lock_all(0, win);
    *(long *) smem = 5 + nrank;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int r = 0; r < nsize; r++) {
        MPI_Aint csz, cdu;
        long *q;
        MPI_Win_shared_query_c(win, r, &csz, &cdu, &q);
        MT_CHECK(csz == sizeof(long) && cdu == sizeof(long) && *q == 5 + r,
                 "MPI_Win_shared_query_c(%d): size %ld disp_unit %ld value %ld", r, (long) csz, (long) cdu, *q);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_free(&win);

    /* alloc_shared_noncontig: each rank's part on pages of its own, still shared by all */
    MPI_Info nc;
    MPI_Info_create(&nc);
    MPI_Info_set(nc, "alloc_shared_noncontig", "true");
    long pagesz = sysconf(_SC_PAGESIZE);
    MPI_Win_allocate_shared(3 * sizeof(int), sizeof(int), nc, node, &smem, &win);
    MPI_Info_free(&nc);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 3; i++)
        smem[i] = 100 * nrank + i;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int r = 0; r < nsize; r++) {
        MPI_Aint nsz;
        int ndu, *q;
        MPI_Win_shared_query(win, r, &nsz, &ndu, &q);
        MT_CHECK((uintptr_t) q % (uintptr_t) pagesz == 0, "alloc_shared_noncontig: rank %d's part at %p is not on a "
                 "page boundary", r, (void *) q);
        MT_CHECK(nsz == 3 * sizeof(int) && q[0] == 100 * r && q[2] == 100 * r + 2,
                 "alloc_shared_noncontig: rank %d's part: size %ld, [0] %d [2] %d", r, (long) nsz, q[0], q[2]);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_free(&win);
    long cbuf[2] = { 0, 0 }, *cmem;
    MPI_Win_create_c(cbuf, sizeof(cbuf), (MPI_Aint) sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    check_attrs(win, cbuf, sizeof(cbuf), sizeof(long), MPI_WIN_FLAVOR_CREATE, "create_c");
    MPI_Win_free(&win);
    MPI_Win_allocate_c(sizeof(cbuf), (MPI_Aint) 2, MPI_INFO_NULL, MPI_COMM_WORLD, &cmem, &win);
    check_attrs(win, cmem, sizeof(cbuf), 2, MPI_WIN_FLAVOR_ALLOCATE, "allocate_c");
    MPI_Win_free(&win);
    MPI_Comm_free(&node);

    return mt_finish();
}
