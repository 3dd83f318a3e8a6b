/*
 * CUDA IPC and the staged pipeline on a real GPU, between two processes (rank 0 the parent, rank 1
 * a child forked before either touches CUDA, joined by a socketpair that stands in for the
 * network; point-to-point does not route device buffers through these modules yet).
 *
 *   IPC:      rank 0 exports a buffer inside a device allocation; rank 1 opens it, reads it, opens
 *             another offset of the same allocation (cache hit, no second open), writes into it;
 *             rank 0 frees and reallocates (often at the same address, with a new buffer id) and
 *             exports again: rank 1 must see the new data, never "already mapped".
 *   pipeline: rank 0 sends an odd-sized device buffer through pinned staging buffers, rank 1
 *             receives it into device memory; the data are checked.
 *
 * Built everywhere; run only where test/runtests finds a GPU; exits 77 (skipped) without one.
 */
#include "cuda/umpi_cuda_ipc.h"
#include "cuda/umpi_cuda_pipe.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t) 1 << 20)

static int sock, rank;

static void xfer(void *buf, size_t n, int out)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = out ? write(sock, p, n) : read(sock, p, n);
        if (k <= 0) {
            printf("rank %d: socket %s failed\n", rank, out ? "write" : "read");
            exit(1);
        }
        p += k;
        n -= (size_t) k;
    }
}

#define CU(call) cu_ok((call), #call)
static int cu_ok(CUresult r, const char *what)
{
    char buf[160];
    CHECK(r == UMPI_CUDA_SUCCESS, "rank %d: %s: %s", rank, what, umpi_cuda_strerror(r, buf, sizeof(buf)));
    return r == UMPI_CUDA_SUCCESS;
}

static void pattern(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char) (i * 13 + seed);
}

static CUdeviceptr dev_filled(size_t n, unsigned seed)
{
    CUdeviceptr d = 0;
    unsigned char *h = malloc(n);
    pattern(h, n, seed);
    if (CU(umpi_cuda_drv.cuMemAlloc(&d, n))) {
        CU(umpi_cuda_drv.cuMemcpyHtoDAsync(d, h, n, NULL));
        CU(umpi_cuda_drv.cuStreamSynchronize(NULL));
    }
    free(h);
    return d;
}

/* Whether n bytes at device address d hold pattern seed from offset off. */
static int dev_check(CUdeviceptr d, size_t n, unsigned seed, size_t off)
{
    unsigned char *h = malloc(n), *want = malloc(off + n);
    pattern(want, off + n, seed);
    CU(umpi_cuda_drv.cuMemcpyDtoHAsync(h, d, n, NULL));
    CU(umpi_cuda_drv.cuStreamSynchronize(NULL));
    int ok = memcmp(h, want + off, n) == 0;
    free(h);
    free(want);
    return ok;
}

static void ipc_rank0(void)
{
    struct umpi_cuda_ipc_desc desc;
    int ok;
    char ack;
    CUdeviceptr a = dev_filled(4 * MIB, 1);
    CHECK(umpi_cuda_ipc_export((void *) (uintptr_t) (a + MIB), MIB, &desc, &ok) == UMPI_OK && ok, "export");
    xfer(&desc, sizeof(desc), 1);
    xfer(&ack, 1, 0); /* rank 1 read it and wrote 1 MiB of pattern 7 at offset 2 MiB */
    CHECK(dev_check(a + 2 * MIB, MIB, 7, 0), "rank 1's write through IPC arrived");
    CU(umpi_cuda_drv.cuMemFree(a));
    CUdeviceptr b = dev_filled(4 * MIB, 2);
    if (b != a)
        printf("note: the reallocation is at another address; same-address reuse not exercised\n");
    CHECK(umpi_cuda_ipc_export((void *) (uintptr_t) (b + MIB), MIB, &desc, &ok) == UMPI_OK && ok, "export again");
    xfer(&desc, sizeof(desc), 1);
    xfer(&ack, 1, 0);
    CU(umpi_cuda_drv.cuMemFree(b));
}

static void ipc_rank1(void)
{
    struct umpi_cuda_ipc_desc desc;
    umpi_cuda_ipc_ref_t *r1, *r2;
    void *p1, *p2;
    char ack = 1;
    xfer(&desc, sizeof(desc), 0);
    CHECK(umpi_cuda_ipc_open(0, &desc, MIB, &p1, &r1) == UMPI_OK && p1 != NULL, "open: %s", umpi_status_last_msg());
    if (p1 != NULL) {
        CHECK(dev_check((CUdeviceptr) (uintptr_t) p1, MIB, 1, MIB), "rank 0's data read through IPC");
        struct umpi_cuda_ipc_desc d2 = desc;
        d2.offset = 2 * MIB;
        unsigned long opened = umpi_cuda_stats[UMPI_CUDA_STAT_ipc_opened];
        CHECK(umpi_cuda_ipc_open(0, &d2, MIB, &p2, &r2) == UMPI_OK && r2 == r1 &&
                  umpi_cuda_stats[UMPI_CUDA_STAT_ipc_opened] == opened,
              "another offset: the same mapping");
        unsigned char *h = malloc(MIB);
        pattern(h, MIB, 7);
        CU(umpi_cuda_drv.cuMemcpyHtoDAsync((CUdeviceptr) (uintptr_t) p2, h, MIB, NULL));
        CU(umpi_cuda_drv.cuStreamSynchronize(NULL));
        free(h);
        umpi_cuda_ipc_release(r2);
        umpi_cuda_ipc_release(r1);
    }
    xfer(&ack, 1, 1);
    xfer(&desc, sizeof(desc), 0);
    CHECK(umpi_cuda_ipc_open(0, &desc, MIB, &p1, &r1) == UMPI_OK && p1 != NULL, "open the reallocation: %s",
          umpi_status_last_msg());
    if (p1 != NULL) {
        CHECK(dev_check((CUdeviceptr) (uintptr_t) p1, MIB, 2, MIB), "the new allocation's data, not the old");
        umpi_cuda_ipc_release(r1);
    }
    CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_ipc_fallback] == 0, "no fallback");
    xfer(&ack, 1, 1);
}

/* The socket as the pipeline's network: each chunk moves whole, in order, at start. */
static umpi_status_t sock_start(void *ctx, struct umpi_cuda_pipe *p, unsigned chunk, void *host, size_t len)
{
    (void) ctx;
    xfer(host, len, p->dir == UMPI_CUDA_PIPE_SEND);
    umpi_cuda_pipe_net_done(p, chunk, UMPI_OK);
    return UMPI_OK;
}

static void pipeline(void)
{
    static const struct umpi_cuda_pipe_net net = { sock_start };
    struct umpi_cuda_pipe p;
    const size_t n = 5 * MIB + 123;
    umpi_config.cuda_pipeline_chunk = 256 * 1024;
    umpi_config.cuda_pipeline_buffers = 4;
    umpi_config.cuda_pipeline_streams = 2;
    CUdeviceptr d = 0;
    if (rank == 0)
        d = dev_filled(n, 3);
    else
        CU(umpi_cuda_drv.cuMemAlloc(&d, n));
    if (d == 0)
        return;
    CHECK(umpi_cuda_pipe_start(&p, rank == 0 ? UMPI_CUDA_PIPE_SEND : UMPI_CUDA_PIPE_RECV, d, n, &net, NULL) == UMPI_OK,
          "pipe start: %s", umpi_status_last_msg());
    while (!umpi_cuda_pipe_progress(&p))
        ;
    CHECK(p.status == UMPI_OK && p.ndone == p.nchunks, "rank %d pipeline: %s", rank, p.why);
    if (rank == 1)
        CHECK(dev_check(d, n, 3, 0), "pipelined data arrived");
    CU(umpi_cuda_drv.cuMemFree(d));
}

int main(void)
{
    int sv[2], status = 0;
    CUcontext ctx;
    CUdevice dev;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    rank = child == 0;
    sock = sv[rank];
    close(sv[1 - rank]);

    umpi_config.cuda = "1";
    umpi_config.debug = 1;
    if (umpi_cuda_init() != UMPI_OK) {
        if (rank == 0) {
            printf("SKIP: %s\n", umpi_status_last_msg());
            waitpid(child, &status, 0);
        }
        return 77;
    }
    if (!CU(umpi_cuda_drv.cuDeviceGet(&dev, 0)) || !CU(umpi_cuda_drv.cuDevicePrimaryCtxRetain(&ctx, dev)) ||
        !CU(umpi_cuda_drv.cuCtxSetCurrent(ctx)))
        return 1;

    SECTION(rank == 0 ? "rank 0: IPC export, reallocation" : "rank 1: IPC open, cache, stale mapping")
    {
        if (rank == 0)
            ipc_rank0();
        else
            ipc_rank1();
    }
    SECTION(rank == 0 ? "rank 0: pipeline send" : "rank 1: pipeline receive")
    {
        pipeline();
    }

    /* finalize frees pinned buffers, streams and mappings in the context, then clears the table */
    CUresult (*ctx_release)(CUdevice) = umpi_cuda_drv.cuDevicePrimaryCtxRelease;
    umpi_cuda_finalize();
    ctx_release(dev);
    int rc = unit_done(rank == 0 ? "gpu_ipc_pipe rank 0" : "gpu_ipc_pipe rank 1");
    if (rank == 1)
        return rc;
    waitpid(child, &status, 0);
    return rc || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
