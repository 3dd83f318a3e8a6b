/*
 * The staged-transfer scheduler (src/cuda/pipeline.c) without a GPU: a sending and a receiving
 * pipeline joined by a fake ordered network, their copies run by fake streams, every event
 * (a stream's next copy finishing, a chunk crossing the network, each side's completion) fired
 * in a random order chosen by a seeded generator. Checked: the data arrive intact for odd sizes,
 * one chunk and zero bytes; no staging buffer is used by two operations at once (so a buffer is
 * reused only after both copies and the network finished with it); chunks go on the network in
 * order; copies and network overlap; errors stop new work, wait for the work in flight, and come
 * back with their cause; the pinned-buffer pool is reused and freed at finalize.
 */
#include "cuda/umpi_cuda_pipe.h"
#include "fake_cuda.h"
#include "unit.h"

/* ---- the fake network: sends and receives matched in order, like one UCX tag ------------------ */

#define NET_MAX 64
struct net_op {
    struct umpi_cuda_pipe *p;
    unsigned chunk;
    void *host;
    size_t len;
};

static struct {
    struct net_op send[NET_MAX], recv[NET_MAX];
    unsigned nsend, nrecv, matched;     /* queued sends and receives; pairs matched so far */
    struct net_op done[2 * NET_MAX];    /* matched operations whose completion is not yet reported */
    unsigned ndone;
    int order_errors, start_fail_at, nstarted, fail_completion_at;
    unsigned long overlap_send, overlap_recv; /* a network op started while a copy was in flight */
} net;

static umpi_status_t net_start(void *ctx, struct umpi_cuda_pipe *p, unsigned chunk, void *host, size_t len)
{
    (void) ctx;
    if (net.nstarted++ == net.start_fail_at) {
        umpi_status_msg("fake network refused");
        return UMPI_ERR_TRANSPORT;
    }
    fake_pinned_acquire(host);
    struct net_op op = { p, chunk, host, len };
    if (fake_copies_pending() > 0) {
        if (p->dir == UMPI_CUDA_PIPE_SEND)
            net.overlap_send++;
        else
            net.overlap_recv++;
    }
    if (p->dir == UMPI_CUDA_PIPE_SEND) {
        if (net.nsend > 0 && net.send[net.nsend - 1].chunk + 1 != chunk)
            net.order_errors++;
        net.send[net.nsend++ % NET_MAX] = op;
    } else {
        if (net.nrecv > 0 && net.recv[net.nrecv - 1].chunk + 1 != chunk)
            net.order_errors++;
        net.recv[net.nrecv++ % NET_MAX] = op;
    }
    return UMPI_OK;
}

static const struct umpi_cuda_pipe_net fake_net = { net_start };

/* Moves the oldest unmatched send into the oldest unmatched receive. */
static int net_match(void)
{
    if (net.matched >= net.nsend || net.matched >= net.nrecv)
        return 0;
    struct net_op *s = &net.send[net.matched % NET_MAX], *r = &net.recv[net.matched % NET_MAX];
    if (s->len != r->len)
        net.order_errors++;
    memcpy(r->host, s->host, s->len < r->len ? s->len : r->len);
    net.done[net.ndone++] = *s;
    net.done[net.ndone++] = *r;
    net.matched++;
    return 1;
}

/* Reports the completion of a random matched operation. */
static int net_complete(unsigned pick)
{
    if (net.ndone == 0)
        return 0;
    unsigned i = pick % net.ndone;
    struct net_op op = net.done[i];
    net.done[i] = net.done[--net.ndone];
    fake_pinned_release(op.host);
    umpi_status_t st = UMPI_OK;
    if (net.fail_completion_at >= 0 && net.fail_completion_at-- == 0)
        st = UMPI_ERR_TRANSPORT;
    umpi_cuda_pipe_net_done(op.p, op.chunk, st);
    return 1;
}

static void net_reset(void)
{
    memset(&net, 0, sizeof(net));
    net.start_fail_at = -1;
    net.fail_completion_at = -1;
}

/* ---- the simulation --------------------------------------------------------------------------- */

static unsigned long rng;
static unsigned next_rand(void)
{
    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned) (rng >> 33);
}

/* Fires random events until both sides have finished or nothing can happen; returns the steps. */
static int simulate(struct umpi_cuda_pipe *s, struct umpi_cuda_pipe *r, int *s_done, int *r_done)
{
    int steps = 0;
    *s_done = umpi_cuda_pipe_progress(s);
    *r_done = umpi_cuda_pipe_progress(r);
    while (!(*s_done && *r_done) && steps < 100000) {
        int fired = 0;
        for (int tries = 0; tries < 8 && !fired; tries++) {
            unsigned k = next_rand();
            switch (k % 3) {
            case 0: fired = fake_stream_step((int) (k / 3 % FAKE_STREAMS)); break;
            case 1: fired = net_match(); break;
            default: fired = net_complete(k / 3); break;
            }
        }
        if (!fired) {
            /* anything at all */
            fired = net_match() || net_complete(0);
            for (int i = 0; i < FAKE_STREAMS && !fired; i++)
                fired = fake_stream_step(i);
        }
        steps++;
        *s_done = umpi_cuda_pipe_progress(s);
        *r_done = umpi_cuda_pipe_progress(r);
        if (!fired && !(*s_done && *r_done))
            break; /* stuck */
    }
    return steps;
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char) (i * 31 + seed);
}

/* One transfer of n bytes; returns 1 when it arrived intact with no violation. */
static int transfer(size_t n, int k, int streams, unsigned long seed)
{
    struct umpi_cuda_pipe s, r;
    unsigned char *src = malloc(n + 1), *dst = malloc(n + 1);
    int sd, rd, ok = 1;
    fill(src, n, (unsigned) seed);
    memset(dst, 0xee, n + 1);
    umpi_config.cuda_pipeline_buffers = k;
    umpi_config.cuda_pipeline_streams = streams;
    net_reset();
    rng = seed;
    if (umpi_cuda_pipe_start(&s, UMPI_CUDA_PIPE_SEND, (CUdeviceptr) (uintptr_t) src, n, &fake_net, NULL) != UMPI_OK ||
        umpi_cuda_pipe_start(&r, UMPI_CUDA_PIPE_RECV, (CUdeviceptr) (uintptr_t) dst, n, &fake_net, NULL) != UMPI_OK)
        return 0;
    simulate(&s, &r, &sd, &rd);
    if (!sd || !rd || s.status != UMPI_OK || r.status != UMPI_OK) {
        printf("  n=%zu k=%d s=%d seed=%lu: done %d/%d status %d/%d (%s%s)\n", n, k, streams, seed, sd, rd,
               s.status, r.status, s.why, r.why);
        ok = 0;
    } else if (memcmp(src, dst, n) != 0 || dst[n] != 0xee) {
        printf("  n=%zu k=%d s=%d seed=%lu: data differ\n", n, k, streams, seed);
        ok = 0;
    }
    if (fake_violations || net.order_errors) {
        printf("  n=%zu k=%d s=%d seed=%lu: %d buffer violations, %d order errors\n", n, k, streams, seed,
               fake_violations, net.order_errors);
        ok = 0;
    }
    if (sd && rd && (s.nchunks != (n + s.chunk - 1) / s.chunk || s.nbufs > (unsigned) k))
        ok = 0;
    free(src);
    free(dst);
    return ok;
}

static void test_transfers(void)
{
    SECTION("pipeline: sizes x buffers x streams x event orders")
    {
        const size_t C = 64;
        size_t sizes[] = { 1, 7, C - 1, C, C + 1, 2 * C, 5 * C + 3, 37 * C / 2, 40 * C };
        int ks[] = { 1, 2, 3, 4, 16 }, ss[] = { 1, 2, 3 };
        int failures = 0, runs = 0;
        fake_start();
        umpi_config.cuda_pipeline_chunk = C;
        unsigned long ov_s = 0, ov_r = 0;
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(sizes); i++)
            for (size_t j = 0; j < UMPI_ARRAY_SIZE(ks); j++)
                for (size_t l = 0; l < UMPI_ARRAY_SIZE(ss); l++)
                    for (unsigned long seed = 1; seed <= 12; seed++) {
                        runs++;
                        failures += !transfer(sizes[i], ks[j], ss[l], seed * 7919 + i);
                        if (sizes[i] >= 5 * C && ks[j] >= 3) {
                            ov_s += net.overlap_send;
                            ov_r += net.overlap_recv;
                        }
                    }
        CHECK(failures == 0, "%d of %d transfers failed", failures, runs);
        CHECK(ov_s > 0 && ov_r > 0, "copies overlapped the network: %lu sender, %lu receiver", ov_s, ov_r);
        size_t out, pooled;
        umpi_cuda_stage_counts(&out, &pooled);
        CHECK(out == 0 && pooled == 32, "every staging buffer back in the pool: %zu out, %zu pooled", out, pooled);
        CHECK(fake_host_allocs == 32, "the pool is reused (16 buffers per side): %d cuMemHostAlloc for %d transfers", fake_host_allocs,
              2 * runs);
    }

    SECTION("pipeline: zero bytes and a single chunk")
    {
        struct umpi_cuda_pipe s;
        fake_start();
        umpi_config.cuda_pipeline_chunk = 524288;
        int allocs = fake_host_allocs;
        CHECK(umpi_cuda_pipe_start(&s, UMPI_CUDA_PIPE_SEND, 0, 0, &fake_net, NULL) == UMPI_OK &&
              umpi_cuda_pipe_progress(&s) == 1 && s.status == UMPI_OK && s.nchunks == 0, "zero bytes: done at once");
        CHECK(fake_host_allocs == allocs, "zero bytes: no buffer");
        umpi_config.cuda_pipeline_chunk = 4096;
        CHECK(transfer(4096, 4, 2, 5) && transfer(100, 4, 2, 6), "one chunk, whole and partial");
        CHECK(fake_host_allocs == allocs + 2, "one staging buffer per side: %d", fake_host_allocs - allocs);
    }

    SECTION("pipeline: in-order sends even when copies finish out of order")
    {
        struct umpi_cuda_pipe s;
        unsigned char src[256];
        fake_start();
        net_reset();
        umpi_config.cuda_pipeline_chunk = 64;
        umpi_config.cuda_pipeline_buffers = 4;
        umpi_config.cuda_pipeline_streams = 4;
        umpi_cuda_pipe_start(&s, UMPI_CUDA_PIPE_SEND, (CUdeviceptr) (uintptr_t) src, sizeof(src), &fake_net, NULL);
        CHECK(umpi_cuda_pipe_progress(&s) == 0 && fake_copies_pending() == 4, "4 copies on 4 streams");
        fake_stream_step(3);
        fake_stream_step(2);
        umpi_cuda_pipe_progress(&s);
        CHECK(net.nsend == 0, "chunks 2 and 3 copied: nothing sent before chunk 0");
        fake_stream_step(0);
        umpi_cuda_pipe_progress(&s);
        CHECK(net.nsend == 1 && net.send[0].chunk == 0, "chunk 0 sent");
        fake_stream_step(1);
        umpi_cuda_pipe_progress(&s);
        CHECK(net.nsend == 4 && net.order_errors == 0, "then 1, 2, 3 in order");
        while (net_match() || net.nsend > net.matched) {
            /* no receiver: complete the sends directly */
            break;
        }
        for (unsigned i = 0; i < 4; i++) {
            fake_pinned_release(net.send[i].host);
            umpi_cuda_pipe_net_done(&s, i, UMPI_OK);
        }
        CHECK(umpi_cuda_pipe_progress(&s) == 1 && s.status == UMPI_OK, "done");
    }
}

/* Runs a transfer with an injected failure; checks it stops, drains, and reports the cause. */
static void failing(const char *what, const char *cause, int copy_fail_at, int query_fail, int start_fail_at,
                    int completion_fail_at)
{
    struct umpi_cuda_pipe s, r;
    const size_t n = 40 * 64;
    unsigned char *src = calloc(1, n), *dst = calloc(1, n);
    int sd, rd;
    fake_start();
    net_reset();
    umpi_config.cuda_pipeline_chunk = 64;
    umpi_config.cuda_pipeline_buffers = 4;
    umpi_config.cuda_pipeline_streams = 2;
    fake_copies = 0;
    fake_copy_fail_at = copy_fail_at;
    net.start_fail_at = start_fail_at;
    net.fail_completion_at = completion_fail_at;
    rng = 99;
    umpi_cuda_pipe_start(&s, UMPI_CUDA_PIPE_SEND, (CUdeviceptr) (uintptr_t) src, n, &fake_net, NULL);
    umpi_cuda_pipe_start(&r, UMPI_CUDA_PIPE_RECV, (CUdeviceptr) (uintptr_t) dst, n, &fake_net, NULL);
    if (query_fail) {
        umpi_cuda_pipe_progress(&s);
        fake_query_fail_next = 1;
    }
    simulate(&s, &r, &sd, &rd);
    /* the failed side has finished; the other may wait for a peer that stopped */
    struct umpi_cuda_pipe *bad = s.status != UMPI_OK ? &s : &r;
    CHECK(bad->status != UMPI_OK && strstr(bad->why, cause) != NULL, "%s: status %d why \"%s\"", what, bad->status,
          bad->why);
    CHECK((bad == &s ? sd : rd) == 1 && bad->ndone < bad->nchunks, "%s: finished early (%u of %u chunks)", what,
          bad->ndone, bad->nchunks);
    CHECK(fake_violations == 0, "%s: no buffer reused under an operation", what);
    /* drain the other side as a real peer would be cancelled: finish what is in flight */
    while (fake_copies_pending() > 0)
        for (int i = 0; i < FAKE_STREAMS; i++)
            fake_stream_step(i);
    CHECK(fake_copies_pending() == 0, "%s: copies drained", what);
    size_t out, pooled;
    struct umpi_cuda_pipe *other = bad == &s ? &r : &s;
    if (!other->finished) {
        /* not part of the check: return the other side's buffers */
        for (unsigned b = 0; b < other->nbufs; b++)
            if (other->buf[b] != NULL)
                umpi_cuda_stage_put(other->buf[b]);
    }
    umpi_cuda_stage_counts(&out, &pooled);
    CHECK(out == 0, "%s: staging buffers returned (%zu out)", what, out);
    memset(fake_pinned, 0, sizeof(fake_pinned));
    fake_violations = 0;
    free(src);
    free(dst);
}

static void test_errors(void)
{
    SECTION("pipeline: errors stop new work, drain, and say why")
    {
        failing("a copy fails", "Async of chunk", 5, 0, -1, -1);
        failing("event query fails", "the copy of chunk", -1, 1, -1, -1);
        failing("network start fails", "could not start", -1, 0, 9, -1);
        failing("network completion fails", "failed (", -1, 0, -1, 3);
    }

    SECTION("pipeline: the D2H copy fails mid-transfer, no new copies after it")
    {
        struct umpi_cuda_pipe s;
        unsigned char src[64 * 10];
        fake_start();
        net_reset();
        umpi_config.cuda_pipeline_chunk = 64;
        umpi_config.cuda_pipeline_buffers = 3;
        umpi_config.cuda_pipeline_streams = 1;
        fake_copies = 0;
        fake_copy_fail_at = 2;
        umpi_cuda_pipe_start(&s, UMPI_CUDA_PIPE_SEND, (CUdeviceptr) (uintptr_t) src, sizeof(src), &fake_net, NULL);
        CHECK(umpi_cuda_pipe_progress(&s) == 0 && s.status == UMPI_ERR_OTHER, "failed with 2 copies in flight");
        int copies = fake_copies;
        fake_stream_step(0);
        CHECK(umpi_cuda_pipe_progress(&s) == 0 && fake_copies == copies && net.nsend == 0,
              "one copy left: not finished, nothing new started");
        fake_stream_step(0);
        CHECK(umpi_cuda_pipe_progress(&s) == 1 && fake_copies == copies, "finished once both copies ended");
    }

    SECTION("pipeline: pool failures and finalize")
    {
        struct umpi_cuda_pipe s;
        size_t out, pooled;
        fake_start();
        umpi_config.cuda_pipeline_chunk = 64;
        umpi_config.cuda_pipeline_buffers = 4;
        fake_host_alloc_fail = 1;
        CHECK(umpi_cuda_pipe_start(&s, UMPI_CUDA_PIPE_SEND, 0x1000, 1000, &fake_net, NULL) == UMPI_ERR_OTHER &&
              strstr(umpi_status_last_msg(), "cuMemHostAlloc"), "no pinned memory: %s", umpi_status_last_msg());
        umpi_cuda_stage_counts(&out, &pooled);
        CHECK(out == 0, "nothing held after a failed start");
        fake_host_alloc_fail = 0;
        umpi_cuda_finalize();
        CHECK(fake_host_allocs == fake_host_frees && fake_events == fake_events_destroyed &&
              fake_streams_created == fake_streams_destroyed,
              "finalize frees all: %d/%d buffers, %d/%d events, %d/%d streams", fake_host_allocs, fake_host_frees,
              fake_events, fake_events_destroyed, fake_streams_created, fake_streams_destroyed);
    }
}

int main(void)
{
    test_transfers();
    test_errors();
    umpi_cuda_finalize();
    return unit_done("test_cuda_pipe");
}
