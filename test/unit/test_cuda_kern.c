/*
 * The GPU kernels without a GPU (src/cuda/kern.c, kern_pack.c, kernels.cu):
 *
 *  - the kernel table is the host's: every (op, predefined type) with a host kernel has a GPU
 *    kernel and no other, and the kernel list of kern.c is exactly the list kernels.cu is built
 *    from (its CPU emulation, kern_emu.cc, expands the same macros);
 *  - the embedded image (when nvcc built one): the architectures configure chose, every kernel in
 *    every cubin's symbol table and in the PTX (cross-checked with cuobjdump when it is there);
 *    without an image, the kernels say they are unavailable;
 *  - launch geometry;
 *  - behind a fake driver whose cuLaunchKernel runs the kernels' bodies on the CPU: every op x type
 *    against the host kernels, byte for byte (padding included), at several counts and alignments;
 *    derived types; pack/unpack of random datatypes against the host pack engine, which kernel a
 *    shape takes, a type's blocks uploaded once and freed with it; the fallback statuses; and
 *    MPI_Reduce_local's routing (kernel on one GPU, host copies otherwise);
 *  - the software long double against the x87 itself.
 */
#include "config.h"
#include "core/umpi_err.h"
#include "core/umpi_knobs.h"
#include "core/umpi_op.h"
#include "cuda/kern_args.h"
#include "cuda/umpi_cuda_kern.h"
#include "kern_emu.h"
#include "kern_testdata.h"
#include "mpi/gen/umpi_impl.h"
#include "unit.h"

#include <elf.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the fake driver: two GPUs of "device memory" that is host memory ---------------------------- */

#define ARENA_SIZE (64u << 20)
static char *arena[2];                  /* device 0 and device 1 */
static size_t arena_used[2];
static CUcontext cur_ctx;               /* the calling thread's current context */
static int fake_module_fail, fake_loads, fake_unloads, fake_launches, fake_mem_allocs, fake_mem_frees;
static int fake_retains, fake_releases, fake_htod;
static const char *last_kernel;
static unsigned last_grid, last_block;
static char fake_image_token[64] = "fake fatbin";

#define FAKE_CTX(dev) ((CUcontext) (uintptr_t) (0x1000 + (dev)))

static CUresult f_cuInit(unsigned flags) { return 0; }
static CUresult f_cuDriverGetVersion(int *v) { *v = 12040; return 0; }
static CUresult f_cuDeviceGetCount(int *n) { *n = 2; return 0; }
static CUresult f_cuDeviceGet(CUdevice *d, int i) { *d = i; return i >= 0 && i < 2 ? 0 : 101; }
static CUresult f_cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t) len, "Fake GPU %d", d);
    return 0;
}
static CUresult f_cuGetErrorString(CUresult r, const char **s) { *s = "fake error text"; return 0; }
static CUresult f_cuGetErrorName(CUresult r, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }

static int arena_of(uintptr_t p)
{
    for (int a = 0; a < 2; a++)
        if (p >= (uintptr_t) arena[a] && p < (uintptr_t) arena[a] + ARENA_SIZE)
            return a;
    return -1;
}

static CUresult f_cuPointerGetAttributes(unsigned n, umpi_cu_pointer_attribute_t *attrs, void **data, CUdeviceptr ptr)
{
    int a = arena_of((uintptr_t) ptr);
    for (unsigned i = 0; i < n; i++) {
        switch ((int) attrs[i]) {
        case UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *) data[i] = a >= 0 ? UMPI_CU_MEMORYTYPE_DEVICE : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *) data[i] = 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *) data[i] = a >= 0 ? a : -2; break;
        case UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *) data[i] = a >= 0 ? 100 + a : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *) data[i] = a >= 0 ? (uintptr_t) arena[a] : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *) data[i] = a >= 0 ? ARENA_SIZE : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(unsigned char *) data[i] = 1; break;
        case UMPI_CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned char *) data[i] = a >= 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *) data[i] = NULL; break;
        default: return UMPI_CUDA_ERROR_INVALID_VALUE;
        }
    }
    return 0;
}

static CUresult f_cuCtxGetCurrent(CUcontext *c) { *c = cur_ctx; return 0; }
static CUresult f_cuCtxSetCurrent(CUcontext c) { cur_ctx = c; return 0; }
static CUresult f_cuCtxGetDevice(CUdevice *d)
{
    if (cur_ctx == NULL)
        return 201;
    *d = (CUdevice) ((uintptr_t) cur_ctx - 0x1000);
    return 0;
}
static CUresult f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { *c = FAKE_CTX(d); fake_retains++; return 0; }
static CUresult f_cuDevicePrimaryCtxRelease(CUdevice d) { fake_releases++; return 0; }
static CUresult f_cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    *v = attr == UMPI_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 4 : attr == UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
    return 0;
}

static CUresult f_cuModuleLoadData(CUmodule *m, const void *image)
{
    if (fake_module_fail)
        return 209;   /* CUDA_ERROR_NO_BINARY_FOR_GPU */
    if (image != fake_image_token)
        return 200;   /* CUDA_ERROR_INVALID_IMAGE */
    fake_loads++;
    *m = (CUmodule) (uintptr_t) (0x7000 + fake_loads);
    return 0;
}
static CUresult f_cuModuleUnload(CUmodule m) { fake_unloads++; return 0; }
static CUresult f_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    const struct kern_emu_entry *e = kern_emu_find(name);
    if (e == NULL)
        return 500;   /* CUDA_ERROR_NOT_FOUND */
    *f = (CUfunction) (uintptr_t) e;
    return 0;
}
static CUresult f_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    const struct kern_emu_entry *e = (const struct kern_emu_entry *) (uintptr_t) f;
    if (cur_ctx == NULL || gy != 1 || gz != 1 || by != 1 || bz != 1 || gx == 0 || bx != UMPI_KERN_THREADS ||
        extra != NULL || gx > 4 * 8)
        return 1;     /* the geometry kern.c promises, in a context */
    fake_launches++;
    last_kernel = e->name;
    last_grid = gx;
    last_block = bx;
    e->run(params[0], (uint64_t) gx * bx);
    return 0;
}

static CUresult f_cuMemAlloc(CUdeviceptr *p, size_t n)
{
    int a = cur_ctx == NULL ? 0 : (int) ((uintptr_t) cur_ctx - 0x1000);
    size_t at = (arena_used[a] + 255) & ~(size_t) 255;
    if (at + n > ARENA_SIZE)
        return 2;     /* CUDA_ERROR_OUT_OF_MEMORY */
    arena_used[a] = at + n;
    *p = (CUdeviceptr) (uintptr_t) (arena[a] + at);
    fake_mem_allocs++;
    return 0;
}
static CUresult f_cuMemFree(CUdeviceptr p) { fake_mem_frees++; return arena_of((uintptr_t) p) >= 0 ? 0 : 1; }
static CUresult f_cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    memmove((void *) (uintptr_t) d, (const void *) (uintptr_t) s, n);
    return 0;
}
static CUresult f_cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    fake_htod++;
    memcpy((void *) (uintptr_t) d, s, n);
    return 0;
}
static CUresult f_cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    memcpy((void *) (uintptr_t) d, s, n);
    return 0;
}
static CUresult f_cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    memcpy(d, (const void *) (uintptr_t) s, n);
    return 0;
}
static CUresult f_cuStreamSynchronize(CUstream s) { return 0; }
static int fake_async_allocs, fake_async_frees;
static CUresult f_cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
    fake_async_allocs++;
    return f_cuMemAlloc(p, n);
}
static CUresult f_cuMemAllocAsync_unsupported(CUdeviceptr *p, size_t n, CUstream s) { return 801; }
static CUresult f_cuMemFreeAsync(CUdeviceptr p, CUstream s) { fake_async_frees++; return 0; }

static struct umpi_cuda_driver fake_driver(void)
{
    struct umpi_cuda_driver d;
    memset(&d, 0, sizeof(d));
#define F(name) d.name = f_##name
    F(cuInit); F(cuDriverGetVersion); F(cuDeviceGetCount); F(cuDeviceGet); F(cuDeviceGetName);
    F(cuGetErrorString); F(cuGetErrorName); F(cuPointerGetAttributes); F(cuCtxGetCurrent);
    F(cuCtxSetCurrent); F(cuCtxGetDevice); F(cuDevicePrimaryCtxRetain); F(cuDevicePrimaryCtxRelease);
    F(cuDeviceGetAttribute); F(cuModuleLoadData); F(cuModuleUnload); F(cuModuleGetFunction);
    F(cuLaunchKernel); F(cuMemAlloc); F(cuMemFree); F(cuMemcpyAsync); F(cuMemcpyHtoD);
    F(cuMemcpyHtoDAsync); F(cuMemcpyDtoHAsync); F(cuStreamSynchronize);
#undef F
    return d;
}

/* Device memory of GPU g, aligned to 256 plus `skew` bytes. */
static char *dev_alloc(int g, size_t n, size_t skew)
{
    CUcontext saved = cur_ctx;
    cur_ctx = FAKE_CTX(g);
    CUdeviceptr p;
    if (f_cuMemAlloc(&p, n + skew + 256) != 0)
        abort();
    cur_ctx = saved;
    fake_mem_allocs--;   /* the test's own, not kern.c's */
    return (char *) (uintptr_t) p + skew;
}

static void dev_reset(void)
{
    arena_used[0] = arena_used[1] = 0;
}

static void setup_fake(void)
{
    struct umpi_cuda_driver d = fake_driver();
    umpi_config.cuda = "1";
    cur_ctx = NULL;
    if (umpi_cuda_setup(NULL, &d) != UMPI_OK || !umpi_cuda_active) {
        printf("FAIL: the fake driver does not start\n");
        exit(1);
    }
    umpi_cuda_kern_set_image(fake_image_token);
}

static void teardown_fake(void)
{
    umpi_cuda_kern_finalize();
    umpi_cuda_finalize();
    umpi_cuda_kern_use_builtin_image();
}

static void test_table(void)
{
    SECTION("kernel table: exactly the host's (op, type) pairs")
    {
        int pairs = 0;
        for (int k = 1; k < UMPI_OP_NBUILTIN; k++) {
            for (int i = 0; i < n_all_types; i++) {
                const umpi_dtype_t *dt = all_types[i];
                int host = umpi_op_kernel(k, dt) != NULL;
                const char *name = umpi_cuda_kern_name(k, dt);
                if (LDBL_MANT_DIG != 64 && is_ldbl(dt))
                    host = 0;
                CHECK(host == (name != NULL), "op %d on %s: host kernel %d, GPU kernel %s", k, dt->name, host,
                      name ? name : "none");
                if (name != NULL) {
                    pairs++;
                    CHECK(kern_emu_find(name) != NULL, "%s is not among the kernels kernels.cu builds", name);
                }
            }
        }
        CHECK(pairs > 300, "only %d (op, type) pairs", pairs);
        printf("  %d (op, predefined type) pairs have a GPU kernel\n", pairs);
    }
    SECTION("kernel list of kern.c = the list kernels.cu is built from")
    {
        CHECK(umpi_cuda_kern_count() == kern_emu_count(), "kern.c knows %d kernels, kernels.cu builds %d",
              umpi_cuda_kern_count(), kern_emu_count());
        for (int i = 0; i < umpi_cuda_kern_count(); i++)
            CHECK(kern_emu_find(umpi_cuda_kern_name_at(i)) != NULL, "%s", umpi_cuda_kern_name_at(i));
        for (int i = 0; i < kern_emu_count(); i++) {
            int found = 0;
            for (int j = 0; j < umpi_cuda_kern_count() && !found; j++)
                found = strcmp(umpi_cuda_kern_name_at(j), kern_emu_at(i)->name) == 0;
            CHECK(found, "kernels.cu builds %s, which kern.c never looks up", kern_emu_at(i)->name);
        }
        printf("  %d kernels\n", kern_emu_count());
    }
}

/* ---- the embedded image ---------------------------------------------------------------------------- */

struct fatbin_entry {
    int kind;        /* 1 PTX, 2 ELF */
    unsigned arch;
    int compressed;
    const char *payload;
    size_t size;
};

/* The fatbin container: a 16-byte header (magic 0xba55ed50, version, header size, size of the
 * rest), then entries, each a header (kind, version, its size, payload size, ..., arch at 28,
 * flags at 40) and its payload. */
static int fatbin_parse(const char *img, size_t n, struct fatbin_entry *e, int max)
{
    uint32_t magic;
    uint16_t hsize;
    uint64_t fsize;
    if (n < 16)
        return -1;
    memcpy(&magic, img, 4);
    memcpy(&hsize, img + 6, 2);
    memcpy(&fsize, img + 8, 8);
    if (magic != 0xba55ed50u || hsize + fsize > n)
        return -1;
    int k = 0;
    for (size_t o = hsize; o + 48 <= hsize + fsize && k < max; k++) {
        uint16_t kind;
        uint32_t ehs, arch;
        uint64_t psize, flags;
        memcpy(&kind, img + o, 2);
        memcpy(&ehs, img + o + 4, 4);
        memcpy(&psize, img + o + 8, 8);
        memcpy(&arch, img + o + 28, 4);
        memcpy(&flags, img + o + 40, 8);
        e[k] = (struct fatbin_entry) {kind, arch, (flags & 0xa000) != 0, img + o + ehs, (size_t) psize};
        o += ehs + psize;
    }
    return k;
}

/* Is `name` a function symbol of the cubin? */
static int elf_has_func(const char *elf, size_t n, const char *name)
{
    Elf64_Ehdr eh;
    if (n < sizeof(eh))
        return 0;
    memcpy(&eh, elf, sizeof(eh));
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_shoff + (size_t) eh.e_shnum * sizeof(Elf64_Shdr) > n)
        return 0;
    for (int i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, str;
        memcpy(&sh, elf + eh.e_shoff + i * sizeof(sh), sizeof(sh));
        if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum)
            continue;
        memcpy(&str, elf + eh.e_shoff + sh.sh_link * sizeof(str), sizeof(str));
        for (size_t s = 0; s + sizeof(Elf64_Sym) <= sh.sh_size; s += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            memcpy(&sym, elf + sh.sh_offset + s, sizeof(sym));
            if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_name < str.sh_size &&
                strcmp(elf + str.sh_offset + sym.st_name, name) == 0)
                return 1;
        }
    }
    return 0;
}

static int ptx_has_entry(const char *ptx, size_t n, const char *name)
{
    char pat[128];
    int len = snprintf(pat, sizeof(pat), ".entry %s(", name);
    for (size_t i = 0; i + (size_t) len <= n; i++)
        if (ptx[i] == '.' && memcmp(ptx + i, pat, (size_t) len) == 0)
            return 1;
    return 0;
}

static void test_image(void)
{
    size_t size;
    const char *img = umpi_cuda_kern_image(&size);
    if (img == NULL) {
        SECTION("no image (built without nvcc): the kernels say so")
        {
            CHECK(!umpi_cuda_kernels_built() && umpi_cuda_kernels_archs()[0] == '\0', "built %d, archs '%s'",
                  umpi_cuda_kernels_built(), umpi_cuda_kernels_archs());
            CHECK(!umpi_cuda_kernels_available(), "available without an image");
        }
        return;
    }
    SECTION("embedded image: configure's architectures, every kernel in every one")
    {
        struct fatbin_entry e[32];
        int n = fatbin_parse(img, size, e, 32);
        CHECK(n > 0, "not a fatbin (%zu bytes)", size);
        char found[256] = "";
        int checked = 0;
        for (int i = 0; i < n; i++) {
            char one[32];
            snprintf(one, sizeof(one), "%s%s_%u", found[0] ? " " : "", e[i].kind == 1 ? "compute" : "sm", e[i].arch);
            strcat(found, one);
            if (e[i].compressed)
                continue;
            for (int k = 0; k < umpi_cuda_kern_count(); k++) {
                const char *name = umpi_cuda_kern_name_at(k);
                int ok = e[i].kind == 2 ? elf_has_func(e[i].payload, e[i].size, name)
                                        : ptx_has_entry(e[i].payload, e[i].size, name);
                CHECK(ok, "%s is missing from the %s_%u image", name, e[i].kind == 1 ? "compute" : "sm", e[i].arch);
                checked++;
            }
        }
        /* the same set as configure's list (order aside) */
        char want[256];
        umpi_strlcpy(want, umpi_cuda_kernels_archs(), sizeof(want));
        int nwant = 0;
        for (char *t = strtok(want, " "); t != NULL; t = strtok(NULL, " "), nwant++) {
            char pat[40];
            snprintf(pat, sizeof(pat), " %s ", t);
            char padded[260];
            snprintf(padded, sizeof(padded), " %s ", found);
            CHECK(strstr(padded, pat) != NULL, "configure asked for %s; the image has: %s", t, found);
        }
        CHECK(nwant == n, "configure asked for '%s'; the image has: %s", umpi_cuda_kernels_archs(), found);
        CHECK(checked > 0, "every entry is compressed: no symbol could be checked");
        printf("  image: %zu bytes: %s; %d kernel symbols found\n", size, found, checked);
    }
    /* cuobjdump, when the toolkit has it, must agree on the cubins */
#ifdef UMPI_CUDA_DIR
    const char *dirs[] = {UMPI_CUDA_DIR "/bin/cuobjdump", "/usr/bin/cuobjdump"};
#else
    const char *dirs[] = {"/usr/local/cuda/bin/cuobjdump", "/usr/bin/cuobjdump"};
#endif
    const char *tool = NULL;
    for (int i = 0; i < 2 && tool == NULL; i++)
        if (access(dirs[i], X_OK) == 0)
            tool = dirs[i];
    if (tool == NULL) {
        printf("  (no cuobjdump in the toolkit: its cross-check is skipped)\n");
        return;
    }
    SECTION("cuobjdump --list-elf lists the same cubins")
    {
        char path[] = "/tmp/umpi_kern_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0 && write(fd, img, size) == (ssize_t) size, "temp file");
        close(fd);
        char cmd[512], line[256], got[256] = "";
        snprintf(cmd, sizeof(cmd), "%s --list-elf %s 2>&1", tool, path);
        FILE *p = popen(cmd, "r");
        while (p != NULL && fgets(line, sizeof(line), p) != NULL) {
            char *s = strstr(line, ".sm_");
            if (s != NULL) {
                char arch[16];
                if (sscanf(s + 1, "%15[a-z_0-9]", arch) == 1) {
                    strcat(got, " ");
                    strcat(got, arch);
                }
            }
        }
        if (p != NULL)
            pclose(p);
        unlink(path);
        char want[256];
        umpi_strlcpy(want, umpi_cuda_kernels_archs(), sizeof(want));
        for (char *t = strtok(want, " "); t != NULL; t = strtok(NULL, " "))
            if (strncmp(t, "sm_", 3) == 0)
                CHECK(strstr(got, t) != NULL, "cuobjdump does not list %s (it lists:%s)", t, got);
    }
}

/* ---- geometry ----------------------------------------------------------------------------------------- */

static void test_geometry(void)
{
    SECTION("launch geometry")
    {
        unsigned g, b;
        umpi_cuda_kern_geometry(0, 132, &g, &b);
        CHECK(g == 0, "no items, grid %u", g);
        umpi_cuda_kern_geometry(1, 132, &g, &b);
        CHECK(g == 1 && b == UMPI_KERN_THREADS, "1 item: %u x %u", g, b);
        umpi_cuda_kern_geometry(UMPI_KERN_THREADS * 10 + 1, 132, &g, &b);
        CHECK(g == 11, "10 blocks and 1 item: grid %u", g);
        umpi_cuda_kern_geometry(1ull << 40, 132, &g, &b);
        CHECK(g == 132 * 8, "many items: grid %u (8 blocks per multiprocessor)", g);
        umpi_cuda_kern_geometry(1ull << 40, 0, &g, &b);
        CHECK(g == 80 * 8, "multiprocessors unknown: grid %u", g);
    }
}

/* ---- every op x type against the host kernels ------------------------------------------------------ */

static int reduce_case(int kind, umpi_dtype_t *dt, MPI_Count n, size_t skew, int verbose)
{
    size_t bytes = (size_t) (n * dt->extent);
    char *hin = malloc(bytes + 1), *hio = malloc(bytes + 1);
    char *din = dev_alloc(0, bytes, skew), *dio = dev_alloc(0, bytes, skew);
    rand_buf(dt, hin, n);
    rand_buf(dt, hio, n);
    memcpy(din, hin, bytes);
    memcpy(dio, hio, bytes);
    umpi_op_apply(&umpi_op_builtin[kind], hin, hio, n, dt);
    int launches = fake_launches;
    umpi_status_t st = umpi_cuda_kern_reduce(&umpi_op_builtin[kind], dt, din, dio, n, NULL);
    int bad = 0;
    if (st != UMPI_OK || (n > 0 && fake_launches != launches + 1)) {
        bad = 1;
        if (verbose)
            printf("FAIL op %d on %s x %ld: status %d, %d launches (%s)\n", kind, dt->name, (long) n, st,
                   fake_launches - launches, umpi_status_last_msg());
    } else if (memcmp(hio, dio, bytes) != 0) {
        bad = 1;
        if (verbose) {
            size_t at = 0;
            while (hio[at] == dio[at])
                at++;
            printf("FAIL op %d on %s x %ld (skew %zu, kernel %s): byte %zu of element %zu differs: host %02x GPU %02x\n",
                   kind, dt->name, (long) n, skew, last_kernel, at % (size_t) dt->extent, at / (size_t) dt->extent,
                   (unsigned char) hio[at], (unsigned char) dio[at]);
        }
    }
    free(hin);
    free(hio);
    return bad;
}

static void test_reductions(void)
{
    SECTION("every op x type on the GPU (emulated) = the host kernels, byte for byte")
    {
        static const MPI_Count counts[] = {1, 3, 17, 1000, 4099};
        int cases = 0, bad = 0;
        for (int k = 1; k < UMPI_OP_NBUILTIN; k++) {
            for (int i = 0; i < n_all_types; i++) {
                umpi_dtype_t *dt = all_types[i];
                if (umpi_cuda_kern_name(k, dt) == NULL)
                    continue;
                for (size_t c = 0; c < UMPI_ARRAY_SIZE(counts); c++) {
                    /* aligned; off 16-byte alignment by one element; and (where the host copes)
                     * misaligned by a byte */
                    size_t skews[3] = {0, (size_t) dt->extent % 16, 1};
                    for (int s = 0; s < 3; s++) {
                        dev_reset();
                        int b = reduce_case(k, dt, counts[c], skews[s], bad < 10);
                        bad += b;
                        cases++;
                    }
                }
            }
        }
        CHECK(bad == 0, "%d of %d cases differ", bad, cases);
        printf("  %d cases\n", cases);
    }
    SECTION("count 0, MPI_NO_OP: nothing launched")
    {
        char *d = dev_alloc(0, 64, 0);
        int l = fake_launches;
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], umpi_dtype_get(MPI_INT), d, d, 0, NULL) == UMPI_OK, "0");
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_NO_OP], umpi_dtype_get(MPI_INT), d, d, 4, NULL) == UMPI_OK,
              "NO_OP");
        CHECK(fake_launches == l, "launched %d", fake_launches - l);
    }
}

/* ---- derived types -------------------------------------------------------------------------------------- */

/* Buffers for count elements of dt: host and device copies of the same random bytes, base pointers
 * placed so that the type's span lies inside. */
struct tbuf {
    char *h, *d, *hmem;
    size_t span;
    MPI_Aint first;
};

static void tbuf_make(struct tbuf *b, const umpi_dtype_t *dt, MPI_Count count, int gpu)
{
    b->span = kt_span(dt, count, &b->first) + 64;
    b->hmem = malloc(b->span);
    char *dmem = dev_alloc(gpu, b->span, 0);
    for (size_t i = 0; i < b->span; i++)
        b->hmem[i] = (char) rnd64();
    memcpy(dmem, b->hmem, b->span);
    b->h = b->hmem - b->first;
    b->d = dmem - b->first;
}

static int check_reduce_derived(const char *what, int kind, umpi_dtype_t *dt, MPI_Count count, const char *kernel)
{
    const umpi_dtype_t *leaf = umpi_op_leaf(dt);
    struct tbuf in, io;
    tbuf_make(&in, dt, count, 0);
    tbuf_make(&io, dt, count, 0);
    /* valid values where the type has data: pack random leaf elements in */
    MPI_Count n = count * dt->size / (leaf ? leaf->size : 1);
    char *vals = malloc((size_t) (n * (leaf ? leaf->extent : 1)) + 1), *packed = malloc((size_t) (count * dt->size) + 1);
    for (int side = 0; side < 2; side++) {
        struct tbuf *b = side ? &io : &in;
        if (leaf != NULL) {
            rand_buf(leaf, vals, n);
            umpi_dtype_pack(leaf, vals, n, packed);  /* pair types: their packed form */
            umpi_dtype_unpack(dt, packed, count * dt->size, b->h);
            memcpy(b->d + b->first, b->h + b->first, b->span);
        }
    }
    umpi_op_apply(&umpi_op_builtin[kind], in.h, io.h, count, dt);
    int l = fake_launches;
    umpi_status_t st = umpi_cuda_kern_reduce(&umpi_op_builtin[kind], dt, in.d, io.d, count, NULL);
    int ok = st == UMPI_OK && memcmp(io.h + io.first, io.d + io.first, io.span) == 0;
    CHECK(ok, "%s: status %d (%s), results %s", what, st, st ? umpi_status_last_msg() : "",
          st ? "-" : memcmp(io.h + io.first, io.d + io.first, io.span) ? "differ" : "equal");
    if (kernel != NULL)
        CHECK(fake_launches > l && strcmp(last_kernel, kernel) == 0, "%s: last kernel %s, not %s", what,
              last_kernel ? last_kernel : "none", kernel);
    free(vals);
    free(packed);
    free(in.hmem);
    free(io.hmem);
    return ok;
}

static void test_derived_reductions(void)
{
    SECTION("reductions on derived types")
    {
        dev_reset();
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *di = umpi_dtype_get(MPI_DOUBLE_INT),
                     *ii = umpi_dtype_get(MPI_2INT), *ldi = umpi_dtype_get(MPI_LONG_DOUBLE_INT);
        MPI_Count vc[3] = {5, 2, 3}, cc[1] = {3};
        umpi_dtype_t *vec = make(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1);
        umpi_dtype_t *cdi = make(MPI_COMBINER_CONTIGUOUS, cc, 1, NULL, 0, &di, 1);
        umpi_dtype_t *cii = make(MPI_COMBINER_CONTIGUOUS, cc, 1, NULL, 0, &ii, 1);
        umpi_dtype_t *cldi = make(MPI_COMBINER_CONTIGUOUS, cc, 1, NULL, 0, &ldi, 1);
        unsigned long packed0 = umpi_cuda_kern_stats.reduce_packed;
        check_reduce_derived("vector of double, SUM", UMPI_OP_SUM, vec, 7, "umpi_pack_vec8");
        check_reduce_derived("vector of double, MPI_REPLACE", UMPI_OP_REPLACE, vec, 7, "umpi_pack_vec8");
        check_reduce_derived("contiguous of MPI_DOUBLE_INT (holes), MAXLOC", UMPI_OP_MAXLOC, cdi, 9,
                             "umpi_pack_vec4");
        check_reduce_derived("contiguous of MPI_LONG_DOUBLE_INT, MINLOC", UMPI_OP_MINLOC, cldi, 4, NULL);
        CHECK(umpi_cuda_kern_stats.reduce_packed == packed0 + 4, "packed reductions %lu",
              umpi_cuda_kern_stats.reduce_packed - packed0);
        check_reduce_derived("contiguous of MPI_2INT (one run), MINLOC", UMPI_OP_MINLOC, cii, 11,
                             "umpi_red_MINLOC_int_int");
        CHECK(umpi_cuda_kern_stats.reduce_packed == packed0 + 4, "a contiguous type went through scratch memory");
        /* scratch memory: the stream-ordered allocator when it works, cuMemAlloc when it does not */
        int allocs = fake_mem_allocs, frees = fake_mem_frees;
        umpi_cuda_drv.cuMemAllocAsync = f_cuMemAllocAsync;
        umpi_cuda_drv.cuMemFreeAsync = f_cuMemFreeAsync;
        check_reduce_derived("vector, stream-ordered scratch", UMPI_OP_SUM, vec, 7, NULL);
        CHECK(fake_async_allocs == 1 && fake_async_frees == 1, "async allocs %d frees %d", fake_async_allocs,
              fake_async_frees);
        umpi_cuda_drv.cuMemAllocAsync = f_cuMemAllocAsync_unsupported;
        check_reduce_derived("vector, no memory pools", UMPI_OP_SUM, vec, 7, NULL);
        CHECK(fake_async_frees == 1 && fake_mem_allocs == allocs + 2 && fake_mem_frees == frees + 1,
              "fallback: frees %d, allocs %d, cuMemFree %d", fake_async_frees, fake_mem_allocs - allocs,
              fake_mem_frees - frees);
        umpi_cuda_drv.cuMemAllocAsync = NULL;
        umpi_cuda_drv.cuMemFreeAsync = NULL;
        umpi_dtype_release(vec);
        umpi_dtype_release(cdi);
        umpi_dtype_release(cii);
        umpi_dtype_release(cldi);
    }
}

/* ---- pack / unpack ------------------------------------------------------------------------------------- */

/* Packs and unpacks count elements on the "GPU" and on the host; 0 when they agree. */
static int pack_case(umpi_dtype_t *dt, MPI_Count count, const char **kernel, int verbose)
{
    struct tbuf t;
    tbuf_make(&t, dt, count, 0);
    size_t bytes = (size_t) (count * dt->size);
    char *hp = malloc(bytes + 1), *dp = dev_alloc(0, bytes + 1, 0);
    int bad = 0, l = fake_launches;
    last_kernel = "none";
    umpi_dtype_pack(dt, t.h, count, hp);
    umpi_status_t st = umpi_cuda_kern_pack(dt, count, t.d, dp, NULL);
    if (st != UMPI_OK || memcmp(hp, dp, bytes) != 0) {
        bad = 1;
        if (verbose)
            printf("FAIL pack of %ld elements (size %ld extent %ld, %ld ops, loop %ld): status %d, kernel %s\n",
                   (long) count, (long) dt->size, (long) dt->extent, (long) dt->nops, (long) dt->loop_count, st,
                   last_kernel);
    }
    *kernel = fake_launches > l ? last_kernel : "memcpy";
    /* unpack other bytes into both buffers */
    for (size_t i = 0; i < bytes; i++)
        hp[i] = (char) rnd64();
    memcpy(dp, hp, bytes);
    umpi_dtype_unpack(dt, hp, (MPI_Count) bytes, t.h);
    st = umpi_cuda_kern_unpack(dt, count, dp, t.d, NULL);
    if (st != UMPI_OK || (!kt_overlaps(dt, count) && memcmp(t.h + t.first, t.d + t.first, t.span) != 0)) {
        bad = 1;
        if (verbose)
            printf("FAIL unpack of %ld elements: status %d, kernel %s\n", (long) count, st, last_kernel);
    }
    free(hp);
    free(t.hmem);
    return bad;
}

static void test_pack(void)
{
    SECTION("pack/unpack of random datatypes = the host pack engine")
    {
        int bad = 0, cases = 0, vec = 0, gen = 0, memcpys = 0;
        for (int i = 0; i < 400; i++) {
            dev_reset();
            umpi_dtype_t *dt = random_type(3);
            if (dt->size == 0 || dt->size * 6 > 4000000 || dt->builtin) {
                umpi_dtype_release(dt);
                continue;
            }
            for (MPI_Count count = 1; count <= 5; count += 2) {
                const char *k;
                bad += pack_case(dt, count, &k, bad < 5);
                cases++;
                vec += strncmp(k, "umpi_pack_vec", 13) == 0;
                gen += strcmp(k, "umpi_pack_gen") == 0;
                memcpys += strcmp(k, "memcpy") == 0;
            }
            umpi_dtype_release(dt);
        }
        CHECK(bad == 0, "%d of %d cases differ", bad, cases);
        CHECK(vec > 0 && gen > 0 && memcpys > 0, "kernels used: vec %d gen %d memcpy %d", vec, gen, memcpys);
        printf("  %d cases: %d by the vector kernel, %d by the general one, %d by cuMemcpy\n", cases, vec, gen, memcpys);
    }
    SECTION("which kernel a shape takes")
    {
        dev_reset();
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *byte = umpi_dtype_get(MPI_BYTE);
        MPI_Count vc[3] = {100, 1, 2}, hv[3] = {64, 12, 20}, ib[6] = {4, 3, 0, 10, 20, 7}, ix[7] = {3, 1, 2, 3, 0, 5, 9};
        const char *k;
        umpi_dtype_t *v = make(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1);
        CHECK(pack_case(v, 3, &k, 1) == 0 && strcmp(k, "umpi_pack_vec8") == 0, "every other double: %s", k);
        umpi_dtype_t *h = make(MPI_COMBINER_HVECTOR, hv, 3, NULL, 0, &byte, 1);
        CHECK(pack_case(h, 2, &k, 1) == 0 && strcmp(k, "umpi_pack_vec4") == 0, "12 bytes at stride 20: %s", k);
        umpi_dtype_t *b = make(MPI_COMBINER_INDEXED_BLOCK, ib, 6, NULL, 0, &dbl, 1);
        CHECK(pack_case(b, 2, &k, 1) == 0 && strcmp(k, "umpi_pack_gen") == 0, "indexed blocks: %s", k);
        umpi_dtype_t *x = make(MPI_COMBINER_INDEXED, ix, 7, NULL, 0, &dbl, 1);
        CHECK(pack_case(x, 2, &k, 1) == 0 && strcmp(k, "umpi_pack_gen") == 0, "indexed: %s", k);
        CHECK(pack_case(umpi_dtype_get(MPI_SHORT_INT), 5, &k, 1) == 0 && strcmp(k, "umpi_pack_gen") == 0,
              "MPI_SHORT_INT: %s", k);
        CHECK(pack_case(umpi_dtype_get(MPI_DOUBLE_INT), 5, &k, 1) == 0 && strcmp(k, "umpi_pack_vec4") == 0,
              "MPI_DOUBLE_INT: %s", k);
        CHECK(pack_case(dbl, 5, &k, 1) == 0 && strcmp(k, "memcpy") == 0, "MPI_DOUBLE: %s", k);
        umpi_dtype_release(v);
        umpi_dtype_release(h);
        umpi_dtype_release(b);
        umpi_dtype_release(x);
    }
    SECTION("a type's blocks: uploaded once, freed with the type")
    {
        dev_reset();
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE);
        MPI_Count ix[7] = {3, 1, 2, 3, 0, 5, 9};
        umpi_dtype_t *x = make(MPI_COMBINER_INDEXED, ix, 7, NULL, 0, &dbl, 1);
        unsigned long up = umpi_cuda_kern_stats.dtype_uploads, fr = umpi_cuda_kern_stats.dtype_frees;
        int htod = fake_htod, frees = fake_mem_frees;
        const char *k;
        for (int i = 0; i < 3; i++)
            CHECK(pack_case(x, 1 + i, &k, 1) == 0, "pack %d", i);
        CHECK(umpi_cuda_kern_stats.dtype_uploads == up + 1 && fake_htod == htod + 1, "uploads: %lu, copies %d",
              umpi_cuda_kern_stats.dtype_uploads - up, fake_htod - htod);
        CHECK(x->cuda_desc != NULL, "no table kept");
        umpi_dtype_release(x);
        CHECK(umpi_cuda_kern_stats.dtype_frees == fr + 1 && fake_mem_frees == frees + 1, "freed %lu, cuMemFree %d",
              umpi_cuda_kern_stats.dtype_frees - fr, fake_mem_frees - frees);
    }
}

/* ---- fallbacks ------------------------------------------------------------------------------------------ */

static void test_fallbacks(void)
{
    umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *si = umpi_dtype_get(MPI_SHORT_INT);
    char *a = dev_alloc(0, 4096, 0), *b = dev_alloc(0, 4096, 0);
    SECTION("no GPU kernel: UMPI_ERR_NOT_FOUND, for the caller to stage")
    {
        umpi_op_t user = {.kind = UMPI_OP_USER, .commute = 1};
        CHECK(umpi_cuda_kern_reduce(&user, dbl, a, b, 4, NULL) == UMPI_ERR_NOT_FOUND, "user op");
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_BAND], dbl, a, b, 4, NULL) == UMPI_ERR_NOT_FOUND,
              "BAND on double");
        umpi_config.cuda_kernels = 0;
        CHECK(!umpi_cuda_kernels_available(), "UMPI_CUDA_KERNELS=0 still available");
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, 4, NULL) == UMPI_ERR_NOT_FOUND &&
                  strstr(umpi_status_last_msg(), "UMPI_CUDA_KERNELS=0") != NULL,
              "UMPI_CUDA_KERNELS=0: %s", umpi_status_last_msg());
        CHECK(umpi_cuda_kern_pack(si, 4, a, b, NULL) == UMPI_ERR_NOT_FOUND, "pack without kernels");
        CHECK(umpi_cuda_kern_pack(dbl, 4, a, b, NULL) == UMPI_OK, "a contiguous pack needs no kernel");
        umpi_config.cuda_kernels = 1;
        umpi_cuda_kern_set_image(NULL);
        CHECK(!umpi_cuda_kernels_available(), "available without an image");
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, 4, NULL) == UMPI_ERR_NOT_FOUND, "no image");
        umpi_cuda_kern_set_image(fake_image_token);
    }
    SECTION("an image that does not load: reported once, then unavailable in that context")
    {
        teardown_fake();
        setup_fake();
        fake_module_fail = 1;
        int loads = fake_loads;
        unsigned long fails = umpi_cuda_kern_stats.module_failures;
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, 4, NULL) == UMPI_ERR_NOT_FOUND, "first");
        CHECK(!umpi_cuda_kernels_available(), "still available after the load failed");
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, 4, NULL) == UMPI_ERR_NOT_FOUND, "second");
        CHECK(umpi_cuda_kern_stats.module_failures == fails + 1 && fake_loads == loads, "failures %lu",
              umpi_cuda_kern_stats.module_failures - fails);
        fake_module_fail = 0;
        teardown_fake();
        setup_fake();
    }
    SECTION("contexts: the primary one when none is current; one module each; released at finalize")
    {
        teardown_fake();
        setup_fake();
        int loads = fake_loads, retains = fake_retains, releases = fake_releases, unloads = fake_unloads;
        char *a1 = dev_alloc(1, 64, 0), *b1 = dev_alloc(1, 64, 0);
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a1, b1, 4, NULL) == UMPI_OK, "on GPU 1");
        CHECK(cur_ctx == FAKE_CTX(1), "GPU 1's primary context was not made current");
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a1, b1, 4, NULL) == UMPI_OK, "again");
        cur_ctx = FAKE_CTX(0);
        CHECK(umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, 4, NULL) == UMPI_OK, "on GPU 0");
        CHECK(fake_loads == loads + 2, "modules loaded: %d", fake_loads - loads);
        CHECK(fake_retains == retains + 1, "retains %d", fake_retains - retains);
        teardown_fake();
        CHECK(fake_unloads == unloads + 2 && fake_releases == releases + 1, "unloads %d releases %d",
              fake_unloads - unloads, fake_releases - releases);
        setup_fake();
    }
}

static void user_max(void *in, void *io, int *n, MPI_Datatype *t)
{
    for (int i = 0; i < *n; i++)
        ((double *) io)[i] = ((double *) in)[i] > ((double *) io)[i] ? ((double *) in)[i] : ((double *) io)[i];
}

/* ---- MPI_Reduce_local ------------------------------------------------------------------------------------ */

static void test_reduce_local(void)
{
    SECTION("MPI_Reduce_local: on the GPU when both buffers are on one, through the host otherwise")
    {
        dev_reset();
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE);
        enum { N = 1000 };
        double *h_in = malloc(N * 8), *h_io = malloc(N * 8), *want = malloc(N * 8);
        double *g_in = (double *) dev_alloc(0, N * 8, 0), *g_io = (double *) dev_alloc(0, N * 8, 0);
        double *g1 = (double *) dev_alloc(1, N * 8, 0);
        for (int i = 0; i < N; i++)
            h_in[i] = i, h_io[i] = 0.5 * i, want[i] = 1.5 * i;
        struct {
            const char *what;
            double *in, *io;
            int kernel;
        } cases[] = {
            {"device + device", g_in, g_io, 1},
            {"host + device", h_in, g_io, 0},
            {"device + host", g_in, h_io, 0},
            {"two GPUs", g_in, g1, 0},
        };
        for (size_t c = 0; c < UMPI_ARRAY_SIZE(cases); c++) {
            memcpy(cases[c].in, h_in, N * 8);
            for (int i = 0; i < N; i++)
                cases[c].io[i] = 0.5 * i;
            int l = fake_launches;
            unsigned long staged = umpi_cuda_stats[UMPI_CUDA_STAT_reduce_staged];
            cur_ctx = NULL;
            int err = umpi_impl_reduce_local(cases[c].in, cases[c].io, N, dbl, MPI_SUM);
            CHECK(err == MPI_SUCCESS && memcmp(cases[c].io, want, N * 8) == 0, "%s: err %d, result %s", cases[c].what,
                  err, memcmp(cases[c].io, want, N * 8) ? "wrong" : "right");
            CHECK((fake_launches > l) == cases[c].kernel, "%s: %d launches", cases[c].what, fake_launches - l);
            CHECK((umpi_cuda_stats[UMPI_CUDA_STAT_reduce_staged] > staged) == !cases[c].kernel,
                  "%s: staged %lu", cases[c].what, umpi_cuda_stats[UMPI_CUDA_STAT_reduce_staged] - staged);
            CHECK(cur_ctx == NULL, "%s: the caller's (no) context was not restored", cases[c].what);
        }
        /* another op on the GPU; a user op on device buffers goes through the host */
        for (int i = 0; i < N; i++)
            g_io[i] = 0.5 * i;
        unsigned long staged = umpi_cuda_stats[UMPI_CUDA_STAT_reduce_staged];
        int err = umpi_impl_reduce_local(g_in, g_io, N, dbl, MPI_PROD);
        CHECK(err == MPI_SUCCESS && g_io[3] == 4.5, "PROD: %g", g_io[3]);
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_reduce_staged] == staged, "PROD was staged");
        MPI_Op user;
        CHECK(umpi_impl_op_create((MPI_User_function_c *) user_max, 1, &user, 0) == MPI_SUCCESS, "op create");
        for (int i = 0; i < N; i++)
            g_io[i] = 0.5 * i;
        err = umpi_impl_reduce_local(g_in, g_io, N, dbl, user);
        CHECK(err == MPI_SUCCESS && g_io[3] == 3 && g_io[0] == 0, "user op: %g", g_io[3]);
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_reduce_staged] == staged + 1, "user op not staged");
        umpi_impl_op_free(&user);
        /* both host: umpi_cuda_kern_reduce_local declines */
        int e2 = -1;
        CHECK(umpi_cuda_kern_reduce_local(&umpi_op_builtin[UMPI_OP_SUM], h_in, h_io, N, dbl, &e2) == 0 && e2 == -1,
              "host buffers taken");
        free(h_in);
        free(h_io);
        free(want);
    }
}

/* ---- the software long double against the x87 ---------------------------------------------------------- */

static long double ld_bits(unsigned se, uint64_t m)
{
    long double x = 0;
    memcpy(&x, &m, 8);
    memcpy((char *) &x + 8, &se, 2);
    return x;
}

static long double rand_ld_bits(void)
{
    uint64_t m = rnd64();
    unsigned s = rnd(2) << 15, e;
    switch (rnd(10)) {
    case 0: return ld_bits(s, 0);
    case 1: e = 0, m &= ~(1ull << 63), m >>= rnd(64); break;           /* denormal */
    case 2: e = 0x7fff, m = 1ull << 63; break;                         /* infinity */
    case 3: e = 0x7fff, m |= 1ull << 63, m |= (m << 1) == 0; break;    /* NaN, quiet or signaling */
    case 4: e = 1 + rnd(70), m |= 1ull << 63; break;                   /* near underflow */
    case 5: e = 0x7ffe - rnd(70), m |= 1ull << 63; break;              /* near overflow */
    case 6: e = 0, m |= 1ull << 63; break;                             /* pseudo-denormal */
    case 7: e = 16383 + rnd(3), m = (1ull << 63) | (m & 0xff); break;  /* cancellations */
    default: e = 16343 + rnd(80), m |= 1ull << 63; break;
    }
    return ld_bits(s | e, m);
}

static void test_f80(void)
{
    SECTION("software long double = the x87 (add, subtract, multiply, compare; 300000 pairs)")
    {
        int bad = 0;
        for (int i = 0; i < 300000; i++) {
            long double a = rand_ld_bits(), b = rnd(8) == 0 ? a : rand_ld_bits(), r;
            if (rnd(8) == 0) {   /* neighbours, and the same significand with the other sign */
                uint64_t m;
                memcpy(&m, &a, 8);
                m += rnd(5) - 2;
                b = a;
                memcpy(&b, &m, 8);
                if (rnd(2))
                    ((unsigned char *) &b)[9] ^= 0x80;
            }
            long double want[3] = {a + b, a - b, a * b};
            for (int op = 0; op < 3; op++) {
                memset(&r, 0, sizeof(r));
                kern_emu_f80(op, &a, &b, &r);
                if (memcmp(&r, &want[op], 10) != 0 && bad++ < 5)
                    printf("FAIL op %d on %La, %La: %La, the x87 says %La\n", op, a, b, r, want[op]);
            }
            int c, hc = a < b ? -1 : a > b ? 1 : a == b ? 0 : 2;
            kern_emu_f80(KERN_EMU_CMP, &a, &b, &c);
            if (c != hc && bad++ < 5)
                printf("FAIL compare %La, %La: %d, the x87 says %d\n", a, b, c, hc);
        }
        CHECK(bad == 0, "%d differences", bad);
    }
}

int main(void)
{
    umpi_knobs_load();
    collect_types();
    for (int a = 0; a < 2; a++) {
        /* 2 MiB-aligned, apart from malloc's memory: classification caches host memory by 2 MiB */
        char *m = mmap(NULL, ARENA_SIZE + (2u << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 1;
        arena[a] = (char *) (((uintptr_t) m + (2u << 20) - 1) & ~(uintptr_t) ((2u << 20) - 1));
    }
    test_table();
    test_image();
    test_geometry();
    if (LDBL_MANT_DIG == 64)
        test_f80();
    setup_fake();
    test_reductions();
    test_derived_reductions();
    test_pack();
    test_fallbacks();
    test_reduce_local();
    teardown_fake();
    return unit_done("test_cuda_kern");
}
