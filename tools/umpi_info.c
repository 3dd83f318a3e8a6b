/*
 * umpi_info: what this umpi is, how it was built, every UMPI_* knob and the collective algorithms.
 *
 * It links libmpi but never calls MPI_Init: it must answer on a login node, in a broken
 * environment, or when MPI_Init itself is what fails. The knob rows come from the one table in
 * libmpi (src/core/umpi_knobs.def via umpi_knobs_table()), so this listing cannot drift from what
 * the library actually reads; the same holds for the algorithm tables (umpi_coll_algo_describe).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <pmix.h>

#include "coll/umpi_coll.h"
#include "core/umpi_knobs.h"
#include "cuda/umpi_cuda.h"
#include "pmi/umpi_pmi.h"
#include "cuda/umpi_cuda_kern.h"
#include "cuda/umpi_cuda_nccl.h"
#include "netmod/ucx/umpi_ucx.h"

/* Width of the label column of the build/runtime sections. */
#define UMPI__LABEL_W 18
/* Doc text is wrapped to this many columns (the knob listing is read in a terminal). */
#define UMPI__TEXT_W 100

static void umpi__usage(FILE *out)
{
    fprintf(out,
            "Usage: umpi_info [option]\n"
            "Shows the umpi version, its build configuration and run-time libraries.\n"
            "\n"
            "  -a, --all      also list every UMPI_* knob (type, default, current value, doc)\n"
            "                 and the collective algorithms\n"
            "  -k, --knobs    list only the knobs\n"
            "  -c, --coll     list only the collective algorithms of each collective, for intra-\n"
            "                 and intercommunicators\n"
            "  -g, --gpu      print only the GPU state; exit status 0 when MPI_Init would use CUDA,\n"
            "                 1 when not\n"
            "  -V, --version  print only the version\n"
            "  -h, --help     this text\n"
            "\n"
            "Knobs are set as environment variables, e.g. UMPI_DEBUG=1 mpirun -n 2 ./prog.\n"
            "The current value shown is what MPI_Init would read from this environment.\n");
}

static void umpi__row(const char *label, const char *value)
{
    printf("  %-*s %s\n", UMPI__LABEL_W, label, value);
}

/* The shared object that umpi_knobs_table lives in: the libmpi actually loaded, which is the first
 * thing to check when LD_LIBRARY_PATH or an rpath picks up another MPI. */
static const char *umpi__libmpi_path(void)
{
    Dl_info info;

    if (dladdr((void *)umpi_knobs_table, &info) == 0 || info.dli_fname == NULL)
        return "(unknown)";
    return info.dli_fname;
}

/* Loads the CUDA driver as MPI_Init would (UMPI_CUDA from this environment) and says what it found.
 * Returns 1 when MPI_Init would use CUDA. */
static int umpi__print_gpu(void)
{
    struct umpi_cuda_state st;
    char buf[320];

    umpi_knobs_load();
    umpi_status_t rc = umpi_cuda_init();
    umpi_cuda_get_state(&st);
    snprintf(buf, sizeof(buf), "UMPI_CUDA=%s; %s", st.mode,
             !st.loaded ? "driver not loaded" : st.active ? "driver loaded, GPU buffers detected" : "driver loaded, not used");
    umpi__row("GPU", buf);
    if (st.loaded) {
        snprintf(buf, sizeof(buf), "%d.%d, %d device(s)", st.driver_version / 1000, st.driver_version % 1000 / 10,
                 st.devices);
        umpi__row("CUDA driver", buf);
    }
    umpi__row(st.active ? "GPU path" : "why host only", st.why);
    if (rc != UMPI_OK)
        umpi__row("MPI_Init", "would fail: UMPI_CUDA=1 and CUDA is not usable");
    /* what MPI_Init would make of device pointers (src/pt2pt/umpi_p2p_gpu.h, src/coll/device.c) */
    if (!st.active)
        umpi__row("GPU buffers", "not carried: CUDA is not used (pass host memory only)");
    else if (!st.ipc)
        umpi__row("GPU buffers", "carried: point-to-point by the pinned pipeline (UMPI_CUDA_IPC=0) and staged copies; "
                                 "collectives through host memory, reductions on the CPU");
    else
        umpi__row("GPU buffers", "carried: point-to-point by CUDA IPC within a node, the pinned pipeline across nodes, "
                                 "staged copies when small; collectives through host memory, reductions on the CPU");
    /* collectives within a node through CUDA IPC (src/coll/device_ipc.c) */
    if (st.active) {
        char mode[64] = "auto", min[64] = "32768", line[400];
        int n;
        const struct umpi_knob_info *k = umpi_knobs_table(&n);
        for (int i = 0; i < n; i++) {
            if (strcmp(k[i].name, "UMPI_CUDA_COLL_IPC") == 0)
                umpi_knob_format(&k[i], mode, sizeof(mode));
            else if (strcmp(k[i].name, "UMPI_CUDA_COLL_IPC_MIN") == 0)
                umpi_knob_format(&k[i], min, sizeof(min));
        }
        char when[96];
        if (strcmp(mode, "1") == 0)
            snprintf(when, sizeof(when), "at every size");
        else
            snprintf(when, sizeof(when), "from %s bytes", min);
        if (strcmp(mode, "0") == 0)
            snprintf(line, sizeof(line), "through host memory (UMPI_CUDA_COLL_IPC=0)");
        else
            snprintf(line, sizeof(line), "blocking allreduce, reduce, bcast, allgather(v), alltoall within a node "
                     "through CUDA IPC %s (UMPI_CUDA_COLL_IPC=%s) when every rank's buffers are device memory; "
                     "the rest through host memory", when, mode);
        umpi__row("GPU collectives", line);
    }
    if (st.active) { /* whether collectives on device buffers would go to NCCL */
        umpi_nccl_describe(buf, sizeof(buf));
        umpi__row("NCCL", buf);
    }
    umpi_cuda_finalize();
    return st.active;
}

/* The process-manager client MPI_Init would use in this environment, or why MPI_Init would fail.
 * UMPI_PMI is read by the umpi_knobs_load() of umpi__print_gpu, which runs first. */
static void umpi__print_pmi(void)
{
    char how[512], line[600];
    int kind = UMPI_PMI_SINGLETON;

    if (umpi_pmi_choose(&kind, how, sizeof(how)) == UMPI_OK)
        snprintf(line, sizeof(line), "%s", how);
    else
        snprintf(line, sizeof(line), "MPI_Init would fail: %s", how);
    umpi__row("process manager", line);
}

static void umpi__print_build(void)
{
    const char *args = UMPI_CONFIGURE_ARGS;

    while (*args == ' ') /* autoconf starts the list with a space */
        args++;
    printf("umpi %s (MPI %d.%d, MPICH ABI)\n", UMPI_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);

    printf("\nBuild\n");
    umpi__row("configure args", *args != '\0' ? args : "(none)");
    umpi__row("C compiler", UMPI_CC);
    umpi__row("UCX", UMPI_UCX_VERSION);
    umpi__row("PMIx", UMPI_PMIX_VERSION);
    umpi__row("hwloc", UMPI_HWLOC_VERSION);
#ifdef UMPI_HAVE_CUDA_BUILD
    umpi__row("CUDA", "toolkit found at " UMPI_CUDA_DIR " (the driver itself is loaded at run time)");
#else
    umpi__row("CUDA", "no toolkit found by configure (the driver is still loaded at run time)");
#endif
    if (umpi_cuda_kernels_built()) {
        char kern[320];
        size_t size;
        umpi_cuda_kern_image(&size);
        snprintf(kern, sizeof(kern), "%d reduction and pack kernels for %s (%.1f MiB in libmpi)",
                 umpi_cuda_kern_count(), umpi_cuda_kernels_archs(), (double) size / (1 << 20));
        umpi__row("GPU kernels", kern);
    } else {
        umpi__row("GPU kernels", "none (no nvcc at build time): device buffers are reduced and packed through host memory");
    }

    printf("\nRun time\n");
    umpi__row("libmpi", umpi__libmpi_path());
    umpi__row("UCX", umpi_ucx_version());
    umpi__row("PMIx", PMIx_Get_version());
    umpi__print_gpu();
    umpi__print_pmi();
}

/* Prints text wrapped at UMPI__TEXT_W columns, every line indented by `indent` spaces. Words longer
 * than a line are printed whole rather than split. */
static void umpi__print_wrapped(const char *text, int indent)
{
    const int width = UMPI__TEXT_W - indent;
    const char *p = text;

    while (*p != '\0') {
        int len = (int)strlen(p);
        int cut = len;

        if (len > width) {
            cut = width;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0) { /* one long word: up to the next space */
                cut = width;
                while (p[cut] != '\0' && p[cut] != ' ')
                    cut++;
            }
        }
        printf("%*s%.*s\n", indent, "", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

static void umpi__print_knobs(void)
{
    int count = 0;
    const struct umpi_knob_info *table = umpi_knobs_table(&count);
    int name_w = 4, type_w = 4, def_w = 7;
    char value[256];

    /* Reads the UMPI_* variables exactly as MPI_Init does, so that "current" is the truth and a
     * malformed value is reported here, before a job is launched with it. */
    umpi_knobs_load();

    for (int i = 0; i < count; i++) {
        int n = (int)strlen(table[i].name), t = (int)strlen(table[i].type_name);
        int d = (int)strlen(table[i].default_str);
        name_w = n > name_w ? n : name_w;
        type_w = t > type_w ? t : type_w;
        def_w = d > def_w ? d : def_w;
    }

    printf("Knobs (%d, set as environment variables)\n", count);
    printf("  %-*s  %-*s  %-*s  %s\n", name_w, "NAME", type_w, "TYPE", def_w, "DEFAULT", "CURRENT");
    for (int i = 0; i < count; i++) {
        const struct umpi_knob_info *k = &table[i];
        /* The name comes from the table: this is umpi_info showing where a value came from,
         * not a tunable read on the side. */
        const char *set = getenv(k->name);

        umpi_knob_format(k, value, sizeof(value));
        printf("  %-*s  %-*s  %-*s  %s", name_w, k->name, type_w, k->type_name, def_w,
               k->default_str, value);
        /* The raw text too: it may be a suffixed size ("64k"), or a value the parser rejected. */
        if (set != NULL)
            printf("  (environment: %s)", set);
        printf("\n");
        umpi__print_wrapped(k->doc, 6);
    }
}

/* One communicator class of one kind: its algorithms, each with its doc under it. */
static void umpi__print_algos(int kind, int inter)
{
    const char *kname, *name, *doc;

    printf("    %s:", inter ? "intercommunicators" : "intracommunicators");
    if (umpi_coll_algo_describe(kind, inter, 0, &kname, &name) == NULL) {
        printf(" none (MPI does not define it there)\n");
        return;
    }
    printf("\n");
    for (int i = 0; (doc = umpi_coll_algo_describe(kind, inter, i, &kname, &name)) != NULL; i++) {
        printf("      %s\n", name);
        umpi__print_wrapped(doc, 10);
    }
}

static void umpi__print_coll(void)
{
    const char *kname, *name;

    printf("Collective algorithms (UMPI_<COLL>_ALGORITHM=<name> forces one; by default the cost model\n"
           "chooses per call, UMPI_DEBUG=1 prints the choice)\n");
    for (int kind = 0; umpi_coll_algo_describe(kind, 0, 0, &kname, &name), kname != NULL; kind++) {
        printf("  %s\n", kname);
        umpi__print_algos(kind, 0);
        umpi__print_algos(kind, 1);
    }
}

int main(int argc, char **argv)
{
    int show_build = 1, show_knobs = 0, show_coll = 0;

    if (argc > 2) {
        umpi__usage(stderr);
        return 1;
    }
    if (argc == 2) {
        const char *a = argv[1];

        if (strcmp(a, "-a") == 0 || strcmp(a, "--all") == 0) {
            show_knobs = 1;
            show_coll = 1;
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "--coll") == 0) {
            show_build = 0;
            show_coll = 1;
        } else if (strcmp(a, "-k") == 0 || strcmp(a, "--knobs") == 0) {
            show_build = 0;
            show_knobs = 1;
        } else if (strcmp(a, "-g") == 0 || strcmp(a, "--gpu") == 0) {
            int active = umpi__print_gpu();
            return fflush(stdout) == 0 && active ? 0 : 1;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("umpi %s (MPI %d.%d)\n", UMPI_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
            return 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            umpi__usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "umpi_info: unknown option '%s'\n", a);
            umpi__usage(stderr);
            return 1;
        }
    }

    if (show_build)
        umpi__print_build();
    if (show_build && show_knobs)
        printf("\n");
    if (show_knobs)
        umpi__print_knobs();
    if (show_coll && (show_build || show_knobs))
        printf("\n");
    if (show_coll)
        umpi__print_coll();
    return fflush(stdout) == 0 ? 0 : 1;
}
