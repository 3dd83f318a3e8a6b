/*
 * The CUDA driver, loaded at run time: the same libmpi runs on machines with and without a GPU.
 *
 *   UMPI_CUDA=0     never touch CUDA (no dlopen)
 *   UMPI_CUDA=auto  use CUDA if libcuda.so.1 loads, cuInit succeeds and a device is there;
 *                   otherwise host-only, silently (UMPI_DEBUG=1 says why)
 *   UMPI_CUDA=1     the same, but MPI_Init fails with the reason when CUDA is not usable
 *
 * No context is created or made current here: the application picks its device after MPI_Init as
 * often as before it, and cuPointerGetAttributes needs no current context for unified addresses.
 * This file opens and closes the driver; start.c runs src/cuda's start and finish around it.
 */
#include "cuda/umpi_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct umpi_cuda_driver umpi_cuda_drv;
int umpi_cuda_active;
int umpi_cuda_device_buffers;
static void *umpi__lib;
/* cuInit was called on umpi__lib: it is never closed again (the driver's threads and exit handlers
 * stay behind in the process, and unloading the code under them is not supported). */
static int umpi__lib_pinned;
static struct umpi_cuda_state umpi__state = { .mode = "auto", .why = "not initialized" };

const char *umpi_cuda_strerror(CUresult r, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (umpi_cuda_drv.cuGetErrorName != NULL)
        umpi_cuda_drv.cuGetErrorName(r, &name);
    if (umpi_cuda_drv.cuGetErrorString != NULL)
        umpi_cuda_drv.cuGetErrorString(r, &text);
    snprintf(buf, len, "%s (%d): %s", name ? name : "CUDA error", (int) r, text ? text : "no description");
    return buf;
}

int umpi_cuda_mode_parse(const char *s)
{
    static const char *const off[] = { "0", "no", "off", "false" };
    static const char *const on[] = { "1", "yes", "on", "true" };
    if (s == NULL || strcasecmp(s, "auto") == 0)
        return 2;
    for (size_t i = 0; i < UMPI_ARRAY_SIZE(off); i++) {
        if (strcasecmp(s, off[i]) == 0)
            return 0;
        if (strcasecmp(s, on[i]) == 0)
            return 1;
    }
    return -1;
}

/* Not usable: an error when UMPI_CUDA=1 asked for it, a debug line otherwise. */
static umpi_status_t umpi__unusable(int mode, const char *fmt, ...) UMPI_PRINTF(2, 3);
static umpi_status_t umpi__unusable(int mode, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(umpi__state.why, sizeof(umpi__state.why), fmt, ap);
    va_end(ap);
    memset(&umpi_cuda_drv, 0, sizeof(umpi_cuda_drv));
    if (umpi__lib != NULL && !umpi__lib_pinned) {
        dlclose(umpi__lib);
        umpi__lib = NULL;
    }
    umpi__state.loaded = 0;
    if (mode == 1) {
        umpi_status_msg("UMPI_CUDA=1 but CUDA cannot be used: %s", umpi__state.why);
        return UMPI_ERR_OTHER;
    }
    umpi_debug(1, "cuda: host memory only: %s", umpi__state.why);
    return UMPI_OK;
}

static umpi_status_t umpi__load(const char *libname, int mode)
{
    if (umpi__lib == NULL) /* a second MPI_Init in umpi_info's process reuses it */
        umpi__lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (umpi__lib == NULL) {
        const char *err = dlerror();
        return umpi__unusable(mode, "the CUDA driver %s could not be loaded (%s)", libname, err ? err : "?");
    }
#define UMPI__CUDA_SYM(name, sym, req, params)                                                      \
    *(void **) &umpi_cuda_drv.name = dlsym(umpi__lib, sym);                                         \
    if (umpi_cuda_drv.name == NULL && (req))                                                        \
        return umpi__unusable(mode, "the CUDA driver %s has no %s (older than CUDA 11?)", libname, sym);
    UMPI_CUDA_FUNCTIONS(UMPI__CUDA_SYM)
#undef UMPI__CUDA_SYM
    return UMPI_OK;
}

umpi_status_t umpi_cuda_driver_open(const char *libname, const struct umpi_cuda_driver *fake)
{
    char buf[160];
    CUresult r;
    int mode = umpi_cuda_mode_parse(umpi_config.cuda);

    umpi_cuda_active = 0;
    memset(&umpi__state, 0, sizeof(umpi__state));
    if (mode < 0) {
        umpi_log("warning", "UMPI_CUDA=\"%s\": not auto, 0 or 1; using auto", umpi_config.cuda);
        mode = 2;
    }
    umpi__state.mode = mode == 0 ? "0" : mode == 1 ? "1" : "auto";
    if (mode == 0) {
        snprintf(umpi__state.why, sizeof(umpi__state.why), "UMPI_CUDA=0");
        umpi_debug(1, "cuda: UMPI_CUDA=0: CUDA is not used");
        return UMPI_OK;
    }

    if (fake != NULL) {
        umpi_cuda_drv = *fake;
    } else {
        umpi_status_t st = umpi__load(libname, mode);
        if (st != UMPI_OK || umpi__lib == NULL)
            return st;
    }
    umpi__state.loaded = 1;

    umpi__lib_pinned = umpi__lib != NULL;
    r = umpi_cuda_drv.cuInit(0);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi__unusable(mode, "cuInit failed: %s", umpi_cuda_strerror(r, buf, sizeof(buf)));
    if (umpi_cuda_drv.cuDriverGetVersion(&umpi__state.driver_version) != UMPI_CUDA_SUCCESS)
        umpi__state.driver_version = 0;
    r = umpi_cuda_drv.cuDeviceGetCount(&umpi__state.devices);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi__unusable(mode, "cuDeviceGetCount failed: %s", umpi_cuda_strerror(r, buf, sizeof(buf)));
    if (umpi__state.devices <= 0)
        return umpi__unusable(mode, "the CUDA driver reports no device");

    char name[128] = "?";
    CUdevice dev;
    if (umpi_cuda_drv.cuDeviceGet(&dev, 0) != UMPI_CUDA_SUCCESS ||
        umpi_cuda_drv.cuDeviceGetName(name, sizeof(name), dev) != UMPI_CUDA_SUCCESS)
        umpi_strlcpy(name, "?", sizeof(name));
    umpi_cuda_active = 1;
    umpi__state.active = 1;
    snprintf(umpi__state.why, sizeof(umpi__state.why), "driver %d.%d, %d device(s), device 0: %s",
             umpi__state.driver_version / 1000, umpi__state.driver_version % 1000 / 10, umpi__state.devices, name);
    umpi_debug(1, "cuda: in use: %s", umpi__state.why);
    return UMPI_OK;
}

void umpi_cuda_driver_close(void)
{
    umpi_cuda_active = 0;
    memset(&umpi_cuda_drv, 0, sizeof(umpi_cuda_drv));
    if (umpi__lib != NULL && !umpi__lib_pinned) {
        dlclose(umpi__lib);
        umpi__lib = NULL;
    }
    umpi__state.active = 0;
}

void umpi_cuda_get_state(struct umpi_cuda_state *st)
{
    *st = umpi__state;
    if (st->mode == NULL)
        st->mode = "auto";
    st->ipc = umpi_config.cuda_ipc;
}
