/*
 * mpirun's binding plan (tools/mpirun/bind.c) on synthetic hwloc topologies, so that sockets,
 * NUMA nodes, L3 caches and hardware threads exist whatever machine runs the test; then the
 * child side (sched_setaffinity and the report line) on this machine, in a forked child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mpirun.h"

#include <hwloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* What error.c provides to bind.c, in a version that keeps the last message for the checks. */
const char *mpirun_name = "mpirun";
static char last_error[1024];

void mpirun_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
}

/* 2 packages, each: a NUMA node, 2 L3 caches of 2 cores of 2 hardware threads (16 cpus). */
#define BIG "pack:2 [numa] l3:2 core:2 pu:2"

static hwloc_topology_t topo_load(const char *synthetic)
{
    hwloc_topology_t t;

    if (hwloc_topology_init(&t) != 0 || hwloc_topology_set_synthetic(t, synthetic) != 0 ||
        hwloc_topology_load(t) != 0) {
        printf("FAIL cannot load the synthetic topology %s\n", synthetic);
        exit(1);
    }
    return t;
}

/* The cpus of a slot as an hwloc list ("0-3"), "inherit" when it does not bind. */
static const char *slot_cpus(const struct mpirun_bind *b, int r)
{
    static char buf[256];
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    const cpu_set_t *cs = b->slots[r].cpus;

    if (cs == NULL) {
        hwloc_bitmap_free(set);
        return "inherit";
    }
    for (int c = 0; c < (int)(b->slots[r].cpus_size * 8); c++)
        if (CPU_ISSET_S(c, b->slots[r].cpus_size, cs))
            hwloc_bitmap_set(set, (unsigned)c);
    hwloc_bitmap_list_snprintf(buf, sizeof(buf), set);
    hwloc_bitmap_free(set);
    return buf;
}

/* The object part of the report line: "core 3" in " on h: core 3, cpus 6-7, mask 0xc0\n". */
static const char *slot_label(const struct mpirun_bind *b, int r)
{
    static char buf[256];
    const char *s = b->slots[r].report, *colon = s != NULL ? strstr(s, ": ") : NULL;
    const char *comma = colon != NULL ? strchr(colon, ',') : NULL;

    if (comma == NULL)
        return "?";
    snprintf(buf, sizeof(buf), "%.*s", (int)(comma - colon - 2), colon + 2);
    return buf;
}

struct opts {
    enum mpirun_bind_level bind_to, map_by;
    int pe, oversubscribe;
    const char *cpu_set;
    const char *avail;      /* mpirun's own cpus; NULL: the whole machine */
};

/* Plans n ranks on topo; returns mpirun_bind_plan's result, b filled. */
static int plan(struct mpirun_bind *b, hwloc_topology_t t, struct opts o, int n)
{
    hwloc_bitmap_t avail = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(t));
    int rc;

    mpirun_bind_free(b);
    memset(b, 0, sizeof(*b));
    b->bind_to = o.bind_to;
    b->map_by = o.map_by;
    b->pe = o.pe;
    b->oversubscribe = o.oversubscribe;
    b->cpu_set = (char *)o.cpu_set;
    if (o.avail != NULL)
        hwloc_bitmap_list_sscanf(avail, o.avail);
    last_error[0] = '\0';
    rc = mpirun_bind_plan(b, t, avail, n, "h");
    hwloc_bitmap_free(avail);
    return rc;
}

/* Checks every rank's cpus and label against want[] ("cpus|label"). */
static void expect(const struct mpirun_bind *b, int n, const char *const *want, const char *what)
{
    CHECK(b->nslots == n, "%s: %d slots, expected %d", what, b->nslots, n);
    for (int r = 0; r < n && r < b->nslots; r++) {
        char got[512];

        snprintf(got, sizeof(got), "%s|%s", slot_cpus(b, r), slot_label(b, r));
        CHECK(strcmp(got, want[r]) == 0, "%s: rank %d got '%s', expected '%s'", what, r, got, want[r]);
    }
}

static void test_defaults(hwloc_topology_t t)
{
    struct mpirun_bind b = { 0 };

    SECTION("auto: a core each while they fit, else not bound") {
        static const char *const eight[] = { "0-1|core 0", "2-3|core 1", "4-5|core 2", "6-7|core 3",
                                             "8-9|core 4", "10-11|core 5", "12-13|core 6",
                                             "14-15|core 7" };
        static const char *const nine[] = { "inherit|not bound", "inherit|not bound",
                                            "inherit|not bound", "inherit|not bound",
                                            "inherit|not bound", "inherit|not bound",
                                            "inherit|not bound", "inherit|not bound",
                                            "inherit|not bound" };

        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_AUTO }, 8) == 0, "%s", last_error);
        expect(&b, 8, eight, "auto 8");
        CHECK(b.node_cpus == 16, "auto 8: node cpus %d", b.node_cpus);
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_UNSET }, 8) == 0, "%s", last_error);
        expect(&b, 8, eight, "unset 8");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_AUTO }, 9) == 0, "%s", last_error);
        expect(&b, 9, nine, "auto 9");
        CHECK(b.node_cpus == 0, "auto 9: node cpus %d, expected 0 (not bound)", b.node_cpus);
        CHECK(last_error[0] == '\0', "auto 9 is no error: %s", last_error);
    }
    SECTION("report line") {
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_CORE }, 2) == 0, "%s", last_error);
        CHECK(b.slots != NULL && strcmp(b.slots[1].report, " on h: core 1, cpus 2-3, mask 0xc\n") == 0,
              "report '%s'", b.slots != NULL ? b.slots[1].report : "(none)");
        CHECK(b.slots != NULL && b.slots[1].report_len == strlen(b.slots[1].report), "report_len");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_NONE }, 1) == 0, "%s", last_error);
        CHECK(b.slots != NULL && strcmp(b.slots[0].report, " on h: not bound, cpus 0-15, mask 0xffff\n") == 0,
              "report '%s'", b.slots != NULL ? b.slots[0].report : "(none)");
    }
    mpirun_bind_free(&b);
}

static void test_explicit(hwloc_topology_t t)
{
    struct mpirun_bind b = { 0 };

    SECTION("bind to core: more ranks than cores is an error unless --oversubscribe") {
        static const char *const nine[] = { "0-1|core 0", "2-3|core 1", "4-5|core 2", "6-7|core 3",
                                            "8-9|core 4", "10-11|core 5", "12-13|core 6",
                                            "14-15|core 7", "0-1|core 0" };

        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_CORE }, 9) == -1, "9 on 8 cores");
        CHECK(strstr(last_error, "cannot bind 9 ranks to cores of their own: only 8 are available "
                                 "(cpus 0-15)") != NULL && strstr(last_error, "--oversubscribe") != NULL,
              "message: %s", last_error);
        CHECK(b.nslots == 0 && b.slots == NULL, "no plan after an error");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_CORE, .oversubscribe = 1 }, 9) == 0,
              "%s", last_error);
        expect(&b, 9, nine, "core 9 oversubscribed");
        CHECK(b.node_cpus == 16, "node cpus %d", b.node_cpus);
    }
    SECTION("bind to hwthread") {
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_HWTHREAD }, 16) == 0, "%s", last_error);
        CHECK(b.nslots == 16 && strcmp(slot_cpus(&b, 5), "5") == 0 &&
              strcmp(slot_label(&b, 5), "hwthread 5") == 0, "rank 5: %s|%s", slot_cpus(&b, 5),
              slot_label(&b, 5));
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_HWTHREAD }, 17) == -1, "17 on 16");
        CHECK(strstr(last_error, "hwthreads") != NULL, "message: %s", last_error);
    }
    SECTION("bind to socket, numa, l3cache: spread over them") {
        static const char *const sock[] = { "0-7|socket 0", "8-15|socket 1" };
        static const char *const numa[] = { "0-7|numa 0", "8-15|numa 1", "0-7|numa 0" };
        static const char *const l3[] = { "0-3|l3cache 0", "4-7|l3cache 1", "8-11|l3cache 2",
                                          "12-15|l3cache 3" };

        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_SOCKET }, 2) == 0, "%s", last_error);
        expect(&b, 2, sock, "socket 2");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_NUMA }, 3) == 0, "%s", last_error);
        expect(&b, 3, numa, "numa 3");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_L3CACHE }, 4) == 0, "%s", last_error);
        expect(&b, 4, l3, "l3cache 4");
        /* 5 ranks on numa 0 of 4 cores */
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_NUMA }, 10) == -1, "numa 10");
        CHECK(strstr(last_error, "cannot bind 5 ranks on numa 0 to cores of their own: only 4 are "
                                 "available (cpus 0-7)") != NULL, "message: %s", last_error);
    }
    SECTION("map by socket, bind to core; map by core, bind to hwthread") {
        static const char *const rr[] = { "0-1|core 0", "8-9|core 4", "2-3|core 1", "10-11|core 5" };
        static const char *const ht[] = { "0|hwthread 0", "2|hwthread 2", "4|hwthread 4" };
        static const char *const sock[] = { "0-7|socket 0", "8-15|socket 1", "0-7|socket 0" };

        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_CORE, .map_by = MPIRUN_BIND_SOCKET }, 4) == 0,
              "%s", last_error);
        expect(&b, 4, rr, "map socket bind core");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_HWTHREAD, .map_by = MPIRUN_BIND_CORE }, 3) == 0,
              "%s", last_error);
        expect(&b, 3, ht, "map core bind hwthread");
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_HWTHREAD, .map_by = MPIRUN_BIND_CORE }, 9) == 0 &&
              strcmp(slot_cpus(&b, 8), "1") == 0, "9th rank on core 0's second thread: %s %s",
              b.nslots == 9 ? slot_cpus(&b, 8) : "-", last_error);
        /* --map-by alone: bound to what it maps by */
        CHECK(plan(&b, t, (struct opts){ .map_by = MPIRUN_BIND_SOCKET }, 3) == 0, "%s", last_error);
        expect(&b, 3, sock, "map socket");
        /* --map-by counts as asking: 9 ranks on 8 cores is an error */
        CHECK(plan(&b, t, (struct opts){ .map_by = MPIRUN_BIND_CORE }, 9) == -1, "map core 9");
    }
    SECTION("PE: several cores per rank") {
        static const char *const pe2[] = { "0-3|core 0-1", "4-7|core 2-3", "8-11|core 4-5",
                                           "12-15|core 6-7" };
        static const char *const sock[] = { "0-3|core 0-1", "8-11|core 4-5", "4-7|core 2-3",
                                            "12-15|core 6-7" };

        CHECK(plan(&b, t, (struct opts){ .map_by = MPIRUN_BIND_CORE, .pe = 2 }, 4) == 0, "%s", last_error);
        expect(&b, 4, pe2, "core:PE=2");
        CHECK(plan(&b, t, (struct opts){ .map_by = MPIRUN_BIND_SOCKET, .pe = 2 }, 4) == 0, "%s", last_error);
        expect(&b, 4, sock, "socket:PE=2");
        CHECK(plan(&b, t, (struct opts){ .pe = 2 }, 4) == 0, "%s", last_error);
        expect(&b, 4, pe2, "cpus-per-rank 2");
        CHECK(plan(&b, t, (struct opts){ .map_by = MPIRUN_BIND_CORE, .pe = 2 }, 5) == -1, "PE=2 x 5");
        CHECK(strstr(last_error, "cannot bind 5 ranks to 2 cores each: they need 10, only 8 are "
                                 "available") != NULL, "message: %s", last_error);
        CHECK(plan(&b, t, (struct opts){ .map_by = MPIRUN_BIND_SOCKET, .pe = 5, .oversubscribe = 1 }, 1) == -1,
              "PE=5 on a socket of 4 cores");
        CHECK(strstr(last_error, "5 cores per rank, but only 4 are available on socket 0") != NULL,
              "message: %s", last_error);
    }
    mpirun_bind_free(&b);
}

static void test_cpusets(hwloc_topology_t t)
{
    struct mpirun_bind b = { 0 };

    SECTION("--cpu-set and mpirun's own cpus") {
        static const char *const two[] = { "2-3|core 1", "4-5|core 2" };
        static const char *const three[] = { "2-5|cpu-set", "2-5|cpu-set", "2-5|cpu-set" };
        static const char *const halves[] = { "1|core 0", "2|core 1" };
        static const char *const taskset[] = { "inherit|not bound", "inherit|not bound",
                                               "inherit|not bound" };

        CHECK(plan(&b, t, (struct opts){ .cpu_set = "2-5" }, 2) == 0, "%s", last_error);
        expect(&b, 2, two, "cpu-set 2-5, 2 ranks");
        CHECK(plan(&b, t, (struct opts){ .cpu_set = "2-5" }, 3) == 0, "%s", last_error);
        expect(&b, 3, three, "cpu-set 2-5, 3 ranks: confined, not bound");
        CHECK(b.node_cpus == 4, "node cpus %d", b.node_cpus);
        CHECK(plan(&b, t, (struct opts){ .bind_to = MPIRUN_BIND_NONE, .cpu_set = "2-5" }, 1) == 0 &&
              strcmp(slot_cpus(&b, 0), "2-5") == 0, "none + cpu-set confines: %s", slot_cpus(&b, 0));
        CHECK(plan(&b, t, (struct opts){ .cpu_set = "1,2" }, 2) == 0, "%s", last_error);
        expect(&b, 2, halves, "cpu-set of half cores");
        CHECK(plan(&b, t, (struct opts){ .cpu_set = "8", .avail = "0-7" }, 1) == -1, "cpu-set outside");
        CHECK(strstr(last_error, "--cpu-set 8: cpu 8 is not available here (mpirun may use cpus 0-7)") != NULL,
              "message: %s", last_error);
        /* mpirun under taskset -c 0-3: 2 ranks get a core each, 3 do not fit */
        CHECK(plan(&b, t, (struct opts){ .avail = "0-3" }, 3) == 0, "%s", last_error);
        expect(&b, 3, taskset, "taskset 0-3, 3 ranks");
        CHECK(b.slots != NULL && strstr(b.slots[0].report, "cpus 0-3, mask 0xf") != NULL,
              "an unbound rank's report shows what it inherits: %s", b.slots ? b.slots[0].report : "");
    }
    SECTION("objects the machine lacks") {
        hwloc_topology_t small = topo_load("pack:1 core:2 pu:1");

        CHECK(plan(&b, small, (struct opts){ .bind_to = MPIRUN_BIND_L3CACHE }, 1) == -1, "no L3");
        CHECK(strstr(last_error, "this machine has no l3cache") != NULL, "message: %s", last_error);
        CHECK(plan(&b, small, (struct opts){ .map_by = MPIRUN_BIND_L3CACHE }, 1) == -1, "no L3 map");
        CHECK(strstr(last_error, "this machine has no l3cache") != NULL, "message: %s", last_error);
        CHECK(plan(&b, small, (struct opts){ .bind_to = MPIRUN_BIND_NUMA }, 2) == 0, "%s", last_error);
        hwloc_topology_destroy(small);
    }
    mpirun_bind_free(&b);
}

/* Runs mpirun_bind_option on a NULL-terminated list; returns its result, *consumed the args. */
static int option(struct mpirun_bind *b, const char *a0, const char *a1, int *consumed)
{
    char *argv[4] = { "mpirun", (char *)a0, (char *)a1, NULL };
    int i = 1, rc;

    last_error[0] = '\0';
    rc = mpirun_bind_option(b, argv, &i);
    *consumed = i;
    return rc;
}

static void test_options(void)
{
    struct mpirun_bind b = { 0 };
    int i;

    SECTION("options") {
        CHECK(option(&b, "--bind-to", "numa", &i) == 1 && i == 2 && b.bind_to == MPIRUN_BIND_NUMA, "--bind-to numa");
        CHECK(option(&b, "-bind-to", "hwthread", &i) == 1 && b.bind_to == MPIRUN_BIND_HWTHREAD, "-bind-to");
        CHECK(option(&b, "--bind-to=package", NULL, &i) == 1 && i == 1 && b.bind_to == MPIRUN_BIND_SOCKET,
              "--bind-to=package");
        CHECK(option(&b, "--bind-to", "None", &i) == 1 && b.bind_to == MPIRUN_BIND_NONE, "case");
        CHECK(option(&b, "-bind-to-core", NULL, &i) == 1 && b.bind_to == MPIRUN_BIND_CORE, "-bind-to-core");
        CHECK(option(&b, "--map-by", "socket:PE=3", &i) == 1 && b.map_by == MPIRUN_BIND_SOCKET && b.pe == 3,
              "--map-by socket:PE=3");
        CHECK(option(&b, "--cpus-per-rank", "2", &i) == 1 && b.pe == 2, "--cpus-per-rank");
        CHECK(option(&b, "--report-bindings", NULL, &i) == 1 && b.report == 1, "--report-bindings");
        CHECK(option(&b, "--cpu-set", "0-1,3", &i) == 1 && b.cpu_set && strcmp(b.cpu_set, "0-1,3") == 0,
              "--cpu-set");
        CHECK(option(&b, "--tag-output", NULL, &i) == 0 && i == 1, "not a binding option");
        CHECK(option(&b, "--bind-to", "slot", &i) == -1 && strstr(last_error, "unknown object 'slot'"),
              "slot is for --map-by only: %s", last_error);
        CHECK(option(&b, "--bind-to", "board", &i) == -1 &&
              strstr(last_error, "--bind-to: unknown object 'board' (use none, hwthread, core, l3cache, "
                                 "numa or socket)"), "message: %s", last_error);
        CHECK(option(&b, "--map-by", "core:PE=0", &i) == -1 && strstr(last_error, "PE"), "PE=0: %s", last_error);
        CHECK(option(&b, "--map-by", "core:span", &i) == -1 && strstr(last_error, "unknown modifier 'span'"),
              "modifier: %s", last_error);
        CHECK(option(&b, "--map-by", "node", &i) == -1 && strstr(last_error, "places ranks over hosts"),
              "node: %s", last_error);
        CHECK(option(&b, "--bind-to", NULL, &i) == -1 && strstr(last_error, "needs a value"),
              "missing value: %s", last_error);
        CHECK(option(&b, "--cpu-set", "3-x", &i) == -1 && strstr(last_error, "not a list of cpu numbers"),
              "bad cpu-set: %s", last_error);
    }
    free(b.cpu_set);
}

/* The child side on this machine: bind as planned and write the report line. */
static void test_child(void)
{
    struct mpirun_job job;
    hwloc_topology_t t;
    hwloc_bitmap_t avail;
    int fds[2], status = -1;
    char line[512] = "";
    ssize_t n;
    pid_t pid;

    memset(&job, 0, sizeof(job));
    SECTION("child: sched_setaffinity and the report line") {
        if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0)
            exit(1);
        avail = hwloc_bitmap_alloc();
        if (hwloc_get_cpubind(t, avail, HWLOC_CPUBIND_PROCESS) != 0)
            hwloc_bitmap_copy(avail, hwloc_topology_get_topology_cpuset(t));
        job.bind.bind_to = MPIRUN_BIND_CORE;
        job.bind.report = 1;
        CHECK(mpirun_bind_plan(&job.bind, t, avail, 1, "here") == 0, "%s", last_error);
        CHECK(pipe(fds) == 0, "pipe");
        pid = fork();
        if (pid == 0) {
            cpu_set_t got;
            const cpu_set_t *want = job.bind.slots[0].cpus;
            int same = 1;

            dup2(fds[1], 2);
            mpirun_bind_child(&job, 4711, 0);
            if (sched_getaffinity(0, sizeof(got), &got) != 0)
                _exit(3);
            for (int c = 0; c < CPU_SETSIZE && c < (int)job.bind.slots[0].cpus_size * 8; c++)
                same &= !CPU_ISSET(c, &got) == !CPU_ISSET_S(c, job.bind.slots[0].cpus_size, want);
            _exit(same ? 0 : 2);
        }
        close(fds[1]);
        n = read(fds[0], line, sizeof(line) - 1);
        line[n > 0 ? n : 0] = '\0';
        close(fds[0]);
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's affinity is the plan's (status %d)",
              status);
        CHECK(strncmp(line, "mpirun: rank 4711 on here: core ", 32) == 0 && strstr(line, ", mask 0x") &&
              line[strlen(line) - 1] == '\n', "report line '%s'", line);
        /* No plan: nothing happens (mpirun --bind-to none without a report). */
        mpirun_bind_free(&job.bind);
        mpirun_bind_child(&job, 0, 0);
        hwloc_bitmap_free(avail);
        hwloc_topology_destroy(t);
    }
}

int main(void)
{
    hwloc_topology_t t = topo_load(BIG);

    test_defaults(t);
    test_explicit(t);
    test_cpusets(t);
    hwloc_topology_destroy(t);
    test_options();
    test_child();
    return unit_done("test_bind");
}
