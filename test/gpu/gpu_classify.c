/*
 * Classification on a real GPU: memory of every kind is allocated through umpi's own driver table
 * (src/cuda/umpi_cuda_drv.h, so no cuda.h is needed to build this) and umpi_cuda_classify must name
 * it, with the caches answering repeated questions without the driver. Built everywhere, run only
 * where test/runtests finds a GPU (the gpu suite); exits 77 (skipped) if started without one.
 */
#include "core/umpi_knobs.h"
#include "cuda/umpi_cuda.h"
#include "netmod/ucx/umpi_ucx.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1UL << 20)

static unsigned long queries(void)
{
    return umpi_cuda_stats[UMPI_CUDA_STAT_driver_queries];
}

/* The result of a driver call, checked. */
#define CU(call) cu_ok((call), #call)
static int cu_ok(CUresult r, const char *what)
{
    char buf[160];
    CHECK(r == UMPI_CUDA_SUCCESS, "%s: %s", what, umpi_cuda_strerror(r, buf, sizeof(buf)));
    return r == UMPI_CUDA_SUCCESS;
}

int main(void)
{
    struct umpi_cuda_buf_info info;
    struct umpi_cuda_driver *d = &umpi_cuda_drv;
    CUcontext ctx;
    CUdevice dev;
    unsigned long q;

    umpi_knobs_load(); /* UMPI_CUDA_LIBRARY may name another driver (the fake one, for a dry run) */
    umpi_config.cuda = "1";
    umpi_config.debug = 1;
    if (umpi_cuda_init() != UMPI_OK) {
        printf("SKIP: %s\n", umpi_status_last_msg());
        return 77;
    }
    if (!CU(d->cuDeviceGet(&dev, 0)) || !CU(d->cuDevicePrimaryCtxRetain(&ctx, dev)) || !CU(d->cuCtxSetCurrent(ctx)))
        return unit_done("gpu_classify");
    /* as MPI_Init does: UCX's address-space events keep the caches right (the driver's own
     * mappings of pinned memory, its reservations where the program's memory was) */
    umpi_status_t watch = umpi_ucx_vm_watch(umpi_cuda_vm_changed);
    CHECK(watch == UMPI_OK, "UCX's memory events: %s", watch == UMPI_OK ? "ok" : umpi_status_last_msg());
    umpi_cuda_cache_watched(watch == UMPI_OK);

    SECTION("device memory (cuMemAlloc)")
    {
        CUdeviceptr p;
        if (CU(d->cuMemAlloc(&p, MIB))) {
            void *ptr = (void *) (uintptr_t) p;
            CHECK(umpi_cuda_classify(ptr, MIB, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_DEVICE &&
                      info.device == 0, "type %d device %d", info.type, info.device);
            CHECK(info.range_start == (uintptr_t) p && info.range_size >= MIB && info.buffer_id != 0,
                  "range %#lx+%zu id %llu", (unsigned long) info.range_start, info.range_size, info.buffer_id);
            CHECK((info.flags & UMPI_CUDA_BUF_LEGACY_IPC) && !(info.flags & UMPI_CUDA_BUF_VMM), "flags %#x",
                  info.flags);
            q = queries();
            CHECK(umpi_cuda_classify((char *) ptr + 100, 100, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_DEVICE,
                  "inside");
            CHECK(umpi_cuda_classify((char *) ptr + MIB - 1, 1, &info) == UMPI_OK &&
                      info.type == UMPI_CUDA_MEM_DEVICE, "last byte");
            CHECK(queries() == q, "range cache: %lu driver queries", queries() - q);

            /* The driver's copy functions through the table: host -> device -> host. */
            char out[256], back[256];
            for (int i = 0; i < 256; i++)
                out[i] = (char) i;
            memset(back, 0, sizeof(back));
            CU(d->cuMemcpyHtoDAsync(p, out, sizeof(out), NULL));
            CU(d->cuMemcpyDtoDAsync(p + 4096, p, sizeof(out), NULL));
            CU(d->cuMemcpyDtoHAsync(back, p + 4096, sizeof(back), NULL));
            CU(d->cuStreamSynchronize(NULL));
            CHECK(memcmp(out, back, sizeof(out)) == 0, "copies through the table");

            CUipcMemHandle h;
            CU(d->cuIpcGetMemHandle(&h, p));

            /* Freed and allocated again: often the same address, always a new buffer id. */
            unsigned long long old_id = info.buffer_id;
            CU(d->cuMemFree(p));
            CUdeviceptr p2;
            if (CU(d->cuMemAlloc(&p2, MIB))) {
                if (p2 == p) {
                    CHECK(umpi_cuda_validate(ptr, MIB, &info) == 0 && info.buffer_id != old_id,
                          "reuse detected: id %llu -> %llu", old_id, info.buffer_id);
                    CHECK(umpi_cuda_validate(ptr, MIB, &info) == 1, "then valid");
                } else {
                    printf("note: the new allocation is at another address; reuse not exercised\n");
                }
                CU(d->cuMemFree(p2));
            }
        }
    }

    SECTION("managed memory (cuMemAllocManaged)")
    {
        CUdeviceptr m;
        if (CU(d->cuMemAllocManaged(&m, MIB, UMPI_CU_MEMATTACH_GLOBAL))) {
            CHECK(umpi_cuda_classify((void *) (uintptr_t) m, 64, &info) == UMPI_OK &&
                      info.type == UMPI_CUDA_MEM_MANAGED && umpi_cuda_is_gpu(&info),
                  "type %d", info.type);
            CU(d->cuMemFree(m));
            umpi_cuda_forget((void *) (uintptr_t) m, MIB);
        }
    }

    SECTION("pinned host memory (cuMemHostAlloc, cuMemHostRegister)")
    {
        void *h;
        if (CU(d->cuMemHostAlloc(&h, MIB, UMPI_CU_MEMHOSTALLOC_PORTABLE))) {
            CHECK(umpi_cuda_classify(h, MIB, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_HOST_PINNED,
                  "cuMemHostAlloc: type %d", info.type);
            umpi_cuda_forget(h, MIB);
            CU(d->cuMemFreeHost(h));
        }
        void *r = NULL;
        if (posix_memalign(&r, 4 * MIB, 4 * MIB) == 0) {
            memset(r, 1, 4 * MIB);
            if (CU(d->cuMemHostRegister(r, 4 * MIB, UMPI_CU_MEMHOSTREGISTER_PORTABLE))) {
                CHECK(umpi_cuda_classify((char *) r + 10, 100, &info) == UMPI_OK &&
                          info.type == UMPI_CUDA_MEM_HOST_PINNED,
                      "cuMemHostRegister: type %d", info.type);
                umpi_cuda_forget(r, 4 * MIB);
                CU(d->cuMemHostUnregister(r));
            }
            free(r);
        }
    }

    SECTION("addresses handed out again as another kind of memory (no umpi_cuda_forget)")
    {
        /* The driver gives freed addresses to the next allocation of any kind; classification must
         * follow without being told (MPI programs never tell it). */
        for (int round = 0; round < 4; round++) {
            CUdeviceptr p;
            void *h;
            if (!CU(d->cuMemAlloc(&p, MIB)))
                break;
            CHECK(umpi_cuda_classify((void *) (uintptr_t) p, 64, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_DEVICE,
                  "round %d: device memory at %#llx: type %d", round, (unsigned long long) p, info.type);
            CU(d->cuMemFree(p));
            if (!CU(d->cuMemHostAlloc(&h, MIB, UMPI_CU_MEMHOSTALLOC_PORTABLE)))
                break;
            CHECK(umpi_cuda_classify(h, 64, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_HOST_PINNED,
                  "round %d: pinned host memory at %p (device memory was at %#llx): type %d", round, h,
                  (unsigned long long) p, info.type);
            CU(d->cuMemFreeHost(h));
            char *m = malloc(8 * MIB); /* mmap'ed by malloc, unmapped by free */
            uintptr_t was = (uintptr_t) m;
            CHECK(umpi_cuda_classify(m, 64, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_HOST, "round %d: malloc",
                  round);
            free(m);
            if (!CU(d->cuMemAlloc(&p, 8 * MIB)))
                break;
            CHECK(umpi_cuda_classify((void *) (uintptr_t) p, 64, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_DEVICE,
                  "round %d: device memory at %#llx (malloc's memory was at %#lx): type %d", round,
                  (unsigned long long) p, (unsigned long) was, info.type);
            CU(d->cuMemFree(p));
        }
    }

    SECTION("pageable host memory: one query per granule")
    {
        char *m = malloc(MIB);
        CHECK(umpi_cuda_classify(m, 100, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_HOST, "type %d",
              info.type);
        q = queries();
        CHECK(umpi_cuda_classify(m + 10, 100, &info) == UMPI_OK && info.type == UMPI_CUDA_MEM_HOST &&
                  queries() == q,
              "cached: %lu queries", queries() - q);
        free(m);
    }

    SECTION("stream-ordered pool memory (cuMemAllocAsync)")
    {
        CUstream s;
        CUdeviceptr p;
        if (d->cuMemAllocAsync == NULL) {
            printf("note: driver without cuMemAllocAsync\n");
        } else if (CU(d->cuStreamCreate(&s, UMPI_CU_STREAM_NON_BLOCKING))) {
            if (CU(d->cuMemAllocAsync(&p, MIB, s)) && CU(d->cuStreamSynchronize(s))) {
                CHECK(umpi_cuda_classify((void *) (uintptr_t) p, 64, &info) == UMPI_OK &&
                          info.type == UMPI_CUDA_MEM_DEVICE && (info.flags & UMPI_CUDA_BUF_POOL),
                      "type %d flags %#x", info.type, info.flags);
                umpi_cuda_forget((void *) (uintptr_t) p, MIB);
                CU(d->cuMemFreeAsync(p, s));
                CU(d->cuStreamSynchronize(s));
            }
            CU(d->cuStreamDestroy(s));
        }
    }

    SECTION("events")
    {
        CUevent e;
        if (CU(d->cuEventCreate(&e, UMPI_CU_EVENT_DISABLE_TIMING))) {
            CU(d->cuEventRecord(e, NULL));
            CU(d->cuEventSynchronize(e));
            CHECK(d->cuEventQuery(e) == UMPI_CUDA_SUCCESS, "event done");
            CU(d->cuEventDestroy(e));
        }
    }

    d->cuDevicePrimaryCtxRelease(dev);
    umpi_cuda_finalize();
    return unit_done("gpu_classify");
}
