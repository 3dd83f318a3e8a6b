/*
 * Bad input to one-sided calls: each returns its error class through the window's error handler
 * (MPI_ERRORS_RETURN set on the window, and a user handler that must be called), with a message
 * naming the call and the argument; the window stays usable afterwards.
 */
#include "mtest.h"

static void expect(int rc, int cls, const char *words, const char *what, int line)
{
    if (rc == MPI_SUCCESS || mt_class(rc) != cls) {
        mt_errs++;
        fprintf(stderr, "[%d] rma_err.c:%d: %s returned %d (class %d), want class %d\n", mt_rank, line, what, rc,
                rc == MPI_SUCCESS ? 0 : mt_class(rc), cls);
        return;
    }
    if (!mt_msg_has(rc, words)) {
        mt_errs++;
        fprintf(stderr, "[%d] rma_err.c:%d: %s: message does not name `%s`: %s\n", mt_rank, line, what, words,
                mt_errstr(rc));
    }
}
#define EXPECT(call, cls, words) expect((call), (cls), (words), #call, __LINE__)

static int handler_calls, handler_class;
static MPI_Win handler_win;

static void on_error(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_win = *win;
    MPI_Error_class(*code, &handler_class);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int *mem, buf[4] = { 0 };
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Errhandler eh;
    MPI_Win_get_errhandler(win, &eh);
    MT_CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window's handler is 0x%x, want MPI_ERRORS_ARE_FATAL", eh);
    MPI_Errhandler_free(&eh);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* an invalid window: MPI_ERR_WIN (to MPI_COMM_SELF's handler, there is no window) */
    EXPECT(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_fence win");
    EXPECT(MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Put win");

    /* operations outside an epoch, unlock without lock, flush without lock */
    EXPECT(MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put target_rank");
    EXPECT(MPI_Get(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Get epoch");
    EXPECT(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock rank");
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all lock_all");
    EXPECT(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush passive-target rank 0 'rank'");
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "MPI_Win_complete MPI_Win_start");
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "MPI_Win_wait MPI_Win_post");
    EXPECT(MPI_Win_sync(win), MPI_ERR_RMA_SYNC, "MPI_Win_sync passive-target");
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Win_fence(0, win);
    /* a fence epoch is no passive-target epoch: request-based calls need a lock */
    EXPECT(MPI_Rput(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC, "MPI_Rput passive-target");
    MT_CHECK(rq == MPI_REQUEST_NULL, "a failed MPI_Rput set its request");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* lock type, assert, rank */
    EXPECT(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE, "MPI_Win_lock lock_type 12345");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0x7, win), MPI_ERR_ASSERT, "MPI_Win_lock assert");
    EXPECT(MPI_Win_fence(MPI_MODE_NOCHECK, win), MPI_ERR_ASSERT, "MPI_Win_fence assert");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, mt_size, 0, win), MPI_ERR_RANK, "MPI_Win_lock rank");

    /* inside an epoch: range, displacement, rank, double lock */
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    EXPECT(MPI_Put(buf, 4, MPI_INT, 0, 1, 4, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put outside 16");
    EXPECT(MPI_Get(buf, 2, MPI_INT, 0, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Get outside");
    EXPECT(MPI_Put(buf, 1, MPI_INT, 0, -1, 1, MPI_INT, win), MPI_ERR_DISP, "MPI_Put target_disp -1");
    EXPECT(MPI_Put(buf, 1, MPI_INT, mt_size, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Put target_rank");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock locked already");
    EXPECT(MPI_Accumulate(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP, "MPI_Accumulate op");
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC, "MPI_Win_free epoch");
    /* still usable: a put inside the range works */
    buf[0] = 42 + mt_rank;
    MT_CHECK(MPI_Put(buf, 1, MPI_INT, 0, mt_rank % 4, 1, MPI_INT, win) == MPI_SUCCESS, "valid put failed");
    MPI_Win_unlock(0, win);

    /* flavors: attach to a non-dynamic window, shared_query of a non-shared one */
    EXPECT(MPI_Win_attach(win, buf, sizeof(buf)), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach dynamic");
    int *p;
    MPI_Aint sz;
    int du;
    EXPECT(MPI_Win_shared_query(win, 0, &sz, &du, &p), MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query shared");

    /* a user handler gets the window and the code */
    MPI_Errhandler mine;
    MPI_Win_create_errhandler(on_error, &mine);
    MPI_Win_set_errhandler(win, mine);
    MPI_Errhandler_free(&mine);
    int rc = MPI_Win_unlock(0, win);
    MT_CHECK(handler_calls == 1 && handler_win == win && handler_class == MPI_ERR_RMA_SYNC,
             "user handler: %d calls, window 0x%x (want 0x%x), class %d", handler_calls, handler_win, win,
             handler_class);
    MT_CHECK(mt_class(rc) == MPI_ERR_RMA_SYNC, "after a user handler the call returns class %d", mt_class(rc));
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    MT_CHECK(handler_calls == 2 && handler_class == MPI_ERR_OTHER, "MPI_Win_call_errhandler: %d calls, class %d",
             handler_calls, handler_class);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* dynamic windows: detach of memory never attached */
    MPI_Win dyn;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    EXPECT(MPI_Win_detach(dyn, buf), MPI_ERR_RMA_ATTACH, "MPI_Win_detach base");
    MPI_Win_attach(dyn, buf, sizeof(buf));
    EXPECT(MPI_Win_attach(dyn, buf + 1, sizeof(int)), MPI_ERR_RMA_ATTACH, "MPI_Win_attach overlaps");
    /* access past the right neighbour's attached memory: the target checks, and the origin hears of
     * it in a get's answer or at the next flush (unlock, fence); nothing is touched there */
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size, v = 5, got = -1;
        MPI_Aint mine, *addrs = malloc(mt_size * sizeof(MPI_Aint));
        MPI_Get_address(buf, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
        MPI_Aint past = addrs[right] + (MPI_Aint) sizeof(buf);
        buf[0] = buf[1] = buf[2] = buf[3] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, dyn);
        EXPECT(MPI_Get(&got, 1, MPI_INT, right, past, 1, MPI_INT, dyn), MPI_ERR_RMA_RANGE, "not in memory attached");
        MT_CHECK(MPI_Put(&v, 1, MPI_INT, right, past - 2, 1, MPI_INT, dyn) == MPI_SUCCESS,
                 "MPI_Put: error before the flush");
        EXPECT(MPI_Win_unlock(right, dyn), MPI_ERR_RMA_RANGE, "since the last flush");
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, dyn); /* the window is usable afterwards */
        MT_CHECK(MPI_Put(&v, 1, MPI_INT, right, addrs[right] + 3 * (MPI_Aint) sizeof(int), 1, MPI_INT, dyn) ==
                     MPI_SUCCESS, "MPI_Put inside attached memory after a range error");
        MT_CHECK(MPI_Win_unlock(right, dyn) == MPI_SUCCESS, "MPI_Win_unlock after a range error");
        MPI_Win_fence(0, dyn);
        int one = 1;
        MT_CHECK(MPI_Accumulate(&one, 1, MPI_INT, right, past, 1, MPI_INT, MPI_SUM, dyn) == MPI_SUCCESS,
                 "MPI_Accumulate: error before the fence");
        EXPECT(MPI_Win_fence(0, dyn), MPI_ERR_RMA_RANGE, "not in memory attached");
        MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, dyn) == MPI_SUCCESS, "MPI_Win_fence after a range error");
        MT_CHECK(buf[0] == 0 && buf[1] == 0 && buf[2] == 0 && buf[3] == 5,
                 "attached memory from rank %d: %d %d %d %d, want 0 0 0 5", left, buf[0], buf[1], buf[2], buf[3]);
        free(addrs);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(dyn, buf);
    MPI_Win_free(&dyn);

    /* window creation: bad disp_unit and size go to the communicator's handler */
    MPI_Win bad;
    EXPECT(MPI_Win_create(buf, sizeof(buf), 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad), MPI_ERR_DISP,
           "MPI_Win_create disp_unit");
    EXPECT(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &bad), MPI_ERR_SIZE, "MPI_Win_allocate size");

    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        for (int r = 0; r < mt_size && r < 4; r++)
            MT_CHECK(mem[r] == 42 + r, "put after errors: mem[%d] = %d", r, mem[r]);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    return mt_finish();
}
