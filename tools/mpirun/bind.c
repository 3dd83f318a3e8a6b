/*
 * Process binding: which cpus each rank of this node may run on (--bind-to, --map-by,
 * --cpu-set), and the --report-bindings lines.
 *
 *   options       mpirun_bind_option()   (main.c's option loop)
 *   plan          mpirun_bind_setup()    once in mpirun, before any fork: hwloc topology -> one
 *                                        cpu_set_t and one report line per local rank
 *   apply         mpirun_bind_child()    in each child between fork and exec: sched_setaffinity
 *                                        and write(), nothing that could take a lock
 *
 * Placement. The cpus a rank can get are mpirun's own (its affinity, e.g. under taskset or a
 * cgroup), or --cpu-set within them. They come in units: cores, or hardware threads when binding
 * or mapping by hwthread. Mapping deals ranks round robin over the --map-by objects (slot: the
 * units in order; socket: rank 0 on socket 0, rank 1 on socket 1, rank 2 on socket 0, ...), and
 * each rank takes the next PE units of its object. It is then bound to those units, or to the
 * --bind-to objects containing them when they are larger (a rank on core 3 bound to numa: the
 * NUMA node holding core 3). When the ranks need more units than there are, ranks would share
 * them: an error unless --oversubscribe, and with the default (auto) no binding at all.
 *
 * The library learns how many cpus the node's ranks share from UMPI_NODE_CPUS, which the plan
 * adds to the ranks' environment: a rank bound to one core cannot see from its own affinity that
 * the other ranks have cores of their own (src/core/progress.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* CPU_ALLOC, sched_setaffinity, asprintf */
#endif
#include "mpirun.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <hwloc.h>

#define UNSET    MPIRUN_BIND_UNSET
#define AUTO     MPIRUN_BIND_AUTO
#define NONE     MPIRUN_BIND_NONE
#define HWTHREAD MPIRUN_BIND_HWTHREAD
#define CORE     MPIRUN_BIND_CORE
#define SLOT     MPIRUN_BIND_SLOT

#define MAX_PE 4096

/* The one list of object names: what the options take, and what the report lines say. */
static const struct level {
    const char *name;
    const char *alias;           /* hwloc's name, also accepted */
    enum mpirun_bind_level level;
    hwloc_obj_type_t type;
    int bind_ok, map_ok;
} levels[] = {
    { "none", NULL, MPIRUN_BIND_NONE, HWLOC_OBJ_MACHINE, 1, 0 },
    { "hwthread", "pu", MPIRUN_BIND_HWTHREAD, HWLOC_OBJ_PU, 1, 1 },
    { "core", NULL, MPIRUN_BIND_CORE, HWLOC_OBJ_CORE, 1, 1 },
    { "l3cache", "l3", MPIRUN_BIND_L3CACHE, HWLOC_OBJ_L3CACHE, 1, 1 },
    { "numa", "numanode", MPIRUN_BIND_NUMA, HWLOC_OBJ_NUMANODE, 1, 1 },
    { "socket", "package", MPIRUN_BIND_SOCKET, HWLOC_OBJ_PACKAGE, 1, 1 },
    { "slot", NULL, MPIRUN_BIND_SLOT, HWLOC_OBJ_MACHINE, 0, 1 },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

static const struct level *level_of(enum mpirun_bind_level l)
{
    for (size_t i = 0; i < NLEVELS; i++)
        if (levels[i].level == l)
            return &levels[i];
    return NULL;
}

/* "core", or "a, b or c" of the names the option takes, for messages. */
static void level_names(int for_map, char *buf, size_t len)
{
    size_t n = 0, k = 0, count = 0;

    for (size_t i = 0; i < NLEVELS; i++)
        count += for_map ? levels[i].map_ok : levels[i].bind_ok;
    buf[0] = '\0';
    for (size_t i = 0; i < NLEVELS && n < len; i++) {
        if (!(for_map ? levels[i].map_ok : levels[i].bind_ok))
            continue;
        k++;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", k == 1 ? "" : k == count ? " or " : ", ",
                              levels[i].name);
    }
}

/* ---- options ---------------------------------------------------------------------------------- */

static int parse_pe(const char *opt, const char *s, int *pe)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > MAX_PE) {
        mpirun_error("%s: '%s' is not a number of cores per rank (1 to %d)", opt, s, MAX_PE);
        return -1;
    }
    *pe = (int)v;
    return 0;
}

/* Parses an object name for --bind-to (for_map 0) or --map-by (1); what names the option in
 * messages. --map-by also takes ":PE=n" (into *pe). */
static int parse_level(const char *what, const char *value, int for_map,
                       enum mpirun_bind_level *out, int *pe)
{
    const char *colon = strchr(value, ':');
    size_t len = colon != NULL ? (size_t)(colon - value) : strlen(value);
    char names[128];

    for (size_t i = 0; i < NLEVELS; i++) {
        const struct level *l = &levels[i];

        if (!(for_map ? l->map_ok : l->bind_ok))
            continue;
        if (!((strlen(l->name) == len && strncasecmp(value, l->name, len) == 0) ||
              (l->alias != NULL && strlen(l->alias) == len && strncasecmp(value, l->alias, len) == 0)))
            continue;
        if (colon == NULL) {
            *out = l->level;
            return 0;
        }
        if (for_map && strncasecmp(colon + 1, "PE=", 3) == 0) {
            char opt[128];

            snprintf(opt, sizeof(opt), "%s %s", what, value);
            if (parse_pe(opt, colon + 4, pe) < 0)
                return -1;
            *out = l->level;
            return 0;
        }
        mpirun_error("%s %s: unknown modifier '%s'%s", what, value, colon + 1,
                     for_map ? " (the one modifier is PE=n, cores per rank)" : "");
        return -1;
    }
    if (for_map && ((len == 4 && strncasecmp(value, "node", 4) == 0) ||
                    (len == 3 && strncasecmp(value, "ppr", 3) == 0))) {
        mpirun_error("%s %s: places ranks over hosts (--host, --hostfile), which takes no "
                     "modifier; within a node use core, socket, numa, ...", what, value);
        return -1;
    }
    level_names(for_map, names, sizeof(names));
    mpirun_error("%s: unknown object '%.*s' (use %s)", what, (int)len, value, names);
    return -1;
}

int mpirun_bind_option(struct mpirun_bind *b, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *eq = strchr(a, '=');
    const char *val;
    char what[64];

    if (mpirun_is_opt(a, "report-bindings")) {
        b->report = 1;
        return 1;
    }
    if (strcmp(a, "-bind-to-core") == 0 || strcmp(a, "--bind-to-core") == 0) {
        b->bind_to = CORE;
        return 1;
    }
    if (strcmp(a, "-bind-to-socket") == 0 || strcmp(a, "--bind-to-socket") == 0) {
        b->bind_to = MPIRUN_BIND_SOCKET;
        return 1;
    }
    if (!mpirun_is_opt(a, "bind-to") && !mpirun_is_opt(a, "map-by") && !mpirun_is_opt(a, "cpu-set") &&
        !mpirun_is_opt(a, "cpus-per-rank") && !mpirun_is_opt(a, "cpus-per-proc"))
        return 0;

    snprintf(what, sizeof(what), "%.*s", eq != NULL ? (int)(eq - a) : (int)strlen(a), a);
    if (eq != NULL) {
        val = eq + 1;
    } else if ((val = argv[*i + 1]) != NULL) {
        (*i)++;
    } else {
        mpirun_error("%s needs a value", what);
        return -1;
    }
    if (mpirun_is_opt(a, "bind-to"))
        return parse_level(what, val, 0, &b->bind_to, NULL) < 0 ? -1 : 1;
    if (mpirun_is_opt(a, "map-by"))
        return parse_level(what, val, 1, &b->map_by, &b->pe) < 0 ? -1 : 1;
    if (mpirun_is_opt(a, "cpu-set")) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int bad = set == NULL || val[0] == '\0' || hwloc_bitmap_list_sscanf(set, val) < 0 ||
                  hwloc_bitmap_iszero(set) || hwloc_bitmap_weight(set) < 0;

        hwloc_bitmap_free(set);
        if (bad) {
            mpirun_error("%s: '%s' is not a list of cpu numbers (such as 0-3,8)", what, val);
            return -1;
        }
        free(b->cpu_set);
        if ((b->cpu_set = strdup(val)) == NULL) {
            mpirun_error("out of memory");
            return -1;
        }
        return 1;
    }
    return parse_pe(what, val, &b->pe) < 0 ? -1 : 1;   /* --cpus-per-rank, --cpus-per-proc */
}

void mpirun_bind_usage(FILE *f)
{
    fprintf(f,
        "  --bind-to OBJ      bind each rank to OBJ: core, hwthread, l3cache, numa, socket or none;\n"
        "                     default (or UMPI_BIND_TO): core when every rank can have a core of\n"
        "                     its own, else none\n"
        "  --map-by OBJ[:PE=n]\n"
        "                     place ranks round robin over OBJ (core, hwthread, l3cache, numa,\n"
        "                     socket, or slot: the next free core), n cores per rank\n"
        "  --cpus-per-rank n  same as :PE=n\n"
        "  --cpu-set LIST     run the ranks only on these cpus (OS numbers, e.g. 0-3,8)\n"
        "  --report-bindings  print each rank's binding on stderr (object, cpu list, mask)\n");
}

/* ---- the plan --------------------------------------------------------------------------------- */

/* hwloc_bitmap_*_asprintf wrappers that never return NULL (messages and reports). */
static char *set_list(hwloc_const_bitmap_t set)
{
    char *s = NULL;

    return hwloc_bitmap_list_asprintf(&s, set) < 0 || s == NULL ? strdup("?") : s;
}

static char *set_mask(hwloc_const_bitmap_t set)
{
    char *s = NULL;

    return hwloc_bitmap_taskset_asprintf(&s, set) < 0 || s == NULL ? strdup("?") : s;
}

void mpirun_bind_free(struct mpirun_bind *b)
{
    for (int r = 0; r < b->nslots && b->slots != NULL; r++) {
        free(b->slots[r].cpus);
        free(b->slots[r].report);
    }
    free(b->slots);
    b->slots = NULL;
    b->nslots = 0;
    b->node_cpus = 0;
}

/* Fills one slot: its cpu_set_t (when bind is not NULL) and its report line, which says label
 * and the cpus (bound or, when not bound, those the rank inherits). */
static int fill_slot(struct mpirun_bind_slot *s, hwloc_topology_t topo, hwloc_const_bitmap_t bind,
                     hwloc_const_bitmap_t shown, const char *label, const char *host)
{
    char *list = set_list(shown), *mask = set_mask(shown);
    int rc = -1;

    if (bind != NULL) {
        int ncpus = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo)) + 1;
        cpu_set_t *set;
        unsigned idx;

        if (ncpus < hwloc_bitmap_last(bind) + 1)
            ncpus = hwloc_bitmap_last(bind) + 1;
        set = CPU_ALLOC(ncpus);
        if (set == NULL)
            goto out;
        s->cpus_size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(s->cpus_size, set);
        hwloc_bitmap_foreach_begin(idx, bind) {
            CPU_SET_S(idx, s->cpus_size, set);
        }
        hwloc_bitmap_foreach_end();
        s->cpus = set;
    }
    if (list != NULL && mask != NULL &&
        asprintf(&s->report, " on %s: %s, cpus %s, mask %s\n", host, label, list, mask) >= 0) {
        s->report_len = strlen(s->report);
        rc = 0;
    }
out:
    free(list);
    free(mask);
    if (rc < 0)
        mpirun_error("out of memory planning the binding");
    return rc;
}

/* Every rank gets the same: bind (NULL: nothing) and the label. */
static int plan_uniform(struct mpirun_bind *b, hwloc_topology_t topo, hwloc_const_bitmap_t bind,
                        hwloc_const_bitmap_t shown, const char *label, int local_size,
                        const char *host)
{
    b->slots = calloc((size_t)local_size, sizeof(*b->slots));
    if (b->slots == NULL) {
        mpirun_error("out of memory planning the binding");
        return -1;
    }
    b->nslots = local_size;
    for (int r = 0; r < local_size; r++)
        if (fill_slot(&b->slots[r], topo, bind, shown, label, host) < 0)
            return -1;
    b->node_cpus = bind != NULL ? hwloc_bitmap_weight(bind) : 0;
    return 0;
}

/* The units ranks are dealt (cores or hwthreads), each restricted to the available cpus, and
 * the groups --map-by makes of them. */
struct units {
    int n;
    hwloc_bitmap_t *set;    /* n cpusets */
    hwloc_obj_t *obj;       /* the n objects */
    int ngroups;
    int *group_start;       /* units of group g: order[group_start[g] .. group_start[g+1]) */
    int *order;             /* unit numbers, grouped */
    hwloc_obj_t *group_obj; /* the --map-by object of each group; NULL: all units in order */
};

static void units_free(struct units *u)
{
    for (int k = 0; k < u->n && u->set != NULL; k++)
        hwloc_bitmap_free(u->set[k]);
    free(u->set);
    free(u->obj);
    free(u->group_start);
    free(u->order);
    free(u->group_obj);
    memset(u, 0, sizeof(*u));
}

static int units_collect(struct units *u, hwloc_topology_t topo, hwloc_const_bitmap_t avail,
                         hwloc_obj_type_t type)
{
    int nobj = hwloc_get_nbobjs_by_type(topo, type);

    units_free(u);
    u->set = calloc(nobj > 0 ? (size_t)nobj : 1, sizeof(*u->set));
    u->obj = calloc(nobj > 0 ? (size_t)nobj : 1, sizeof(*u->obj));
    if (u->set == NULL || u->obj == NULL)
        return -1;
    for (int k = 0; k < nobj; k++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)k);
        hwloc_bitmap_t s;

        if (o == NULL || o->cpuset == NULL || !hwloc_bitmap_intersects(o->cpuset, avail))
            continue;
        if ((s = hwloc_bitmap_alloc()) == NULL)
            return -1;
        hwloc_bitmap_and(s, o->cpuset, avail);
        u->obj[u->n] = o;
        u->set[u->n++] = s;
    }
    return 0;
}

/* Groups the units by the objects of map_type (NULL: one group, units in order); objects with
 * no available unit make no group. 0, -1 out of memory, -2 no such object on this machine. */
static int units_group(struct units *u, hwloc_topology_t topo, const hwloc_obj_type_t *map_type)
{
    int nobj = map_type != NULL ? hwloc_get_nbobjs_by_type(topo, *map_type) : 1;
    int *taken, k = 0;

    if (nobj <= 0)
        return -2;
    /* One group more than objects: units that no object holds (unusual topologies) */
    u->group_start = calloc((size_t)nobj + 2, sizeof(int));
    u->group_obj = calloc((size_t)nobj + 1, sizeof(hwloc_obj_t));
    u->order = calloc((size_t)u->n + 1, sizeof(int));
    taken = calloc((size_t)u->n + 1, sizeof(int));
    if (u->group_start == NULL || u->group_obj == NULL || u->order == NULL || taken == NULL) {
        free(taken);
        return -1;
    }
    for (int g = 0; g <= nobj; g++) {
        hwloc_obj_t o = map_type != NULL && g < nobj
                            ? hwloc_get_obj_by_type(topo, *map_type, (unsigned)g) : NULL;
        int start = k;

        if (map_type != NULL && g < nobj && (o == NULL || o->cpuset == NULL))
            continue;
        for (int j = 0; j < u->n; j++) {
            if (taken[j] || (o != NULL && !hwloc_bitmap_isincluded(u->set[j], o->cpuset)))
                continue;
            taken[j] = 1;
            u->order[k++] = j;
        }
        if (k == start)
            continue;
        u->group_obj[u->ngroups] = o;
        u->group_start[u->ngroups++] = start;
    }
    u->group_start[u->ngroups] = k;
    free(taken);
    return 0;
}

/* Adds to set and to idx (the logical indexes, for the label) every object of type that shares
 * a cpu with unit, restricted to avail. 0, or -2 when there is none. */
static int containing(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_const_bitmap_t unit,
                      hwloc_const_bitmap_t avail, hwloc_bitmap_t set, hwloc_bitmap_t idx)
{
    int nobj = hwloc_get_nbobjs_by_type(topo, type), found = 0;

    for (int k = 0; k < nobj; k++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)k);

        if (o == NULL || o->cpuset == NULL || !hwloc_bitmap_intersects(o->cpuset, unit))
            continue;
        hwloc_bitmap_or(set, set, o->cpuset);
        hwloc_bitmap_set(idx, o->logical_index);
        found = 1;
    }
    hwloc_bitmap_and(set, set, avail);
    return found ? 0 : -2;
}

int mpirun_bind_plan(struct mpirun_bind *b, struct hwloc_topology *topo,
                     const struct hwloc_bitmap_s *avail_in, int local_size, const char *host)
{
    /* Binding was asked for (not the default): then ranks that would share are an error. */
    int explicit_ = b->bind_to != AUTO && b->bind_to != UNSET;
    enum mpirun_bind_level bind_to = b->bind_to == UNSET ? AUTO : b->bind_to;
    enum mpirun_bind_level map_by = b->map_by;
    int pe = b->pe > 0 ? b->pe : 1;
    hwloc_bitmap_t avail = hwloc_bitmap_alloc(), rank_set = hwloc_bitmap_alloc();
    hwloc_bitmap_t rank_idx = hwloc_bitmap_alloc(), all = hwloc_bitmap_alloc();
    struct units u = { 0 };
    const struct level *unit_level, *bind_level, *map_level;
    const char *unit_name;
    int rc = -1, over = 0;
    char *list = NULL;

    mpirun_bind_free(b);
    if (avail == NULL || rank_set == NULL || rank_idx == NULL || all == NULL)
        goto nomem;
    hwloc_bitmap_and(avail, avail_in, hwloc_topology_get_topology_cpuset(topo));
    if (b->cpu_set != NULL) {
        hwloc_bitmap_t want = hwloc_bitmap_alloc();
        int bad;

        if (want == NULL || hwloc_bitmap_list_sscanf(want, b->cpu_set) < 0) {
            hwloc_bitmap_free(want);
            mpirun_error("--cpu-set: '%s' is not a list of cpu numbers", b->cpu_set);
            goto out;
        }
        bad = !hwloc_bitmap_isincluded(want, avail);
        if (bad) {
            char *have = set_list(avail);

            hwloc_bitmap_andnot(want, want, avail);
            list = set_list(want);
            mpirun_error("--cpu-set %s: %s %s %s not available here (mpirun may use cpus %s)",
                         b->cpu_set, hwloc_bitmap_weight(want) == 1 ? "cpu" : "cpus", list,
                         hwloc_bitmap_weight(want) == 1 ? "is" : "are", have);
            free(have);
        }
        hwloc_bitmap_copy(avail, want);
        hwloc_bitmap_free(want);
        if (bad)
            goto out;
    }
    if (hwloc_bitmap_iszero(avail)) {
        mpirun_error("no cpu of this machine is available to the ranks");
        goto out;
    }
    /* Explicit mapping asks for placement as much as explicit binding does. */
    if (map_by != UNSET || b->pe > 0)
        explicit_ = explicit_ || bind_to != NONE;

    if (bind_to == NONE) {
        /* The ranks inherit mpirun's cpus; --cpu-set still confines them. */
        if (b->cpu_set != NULL)
            rc = plan_uniform(b, topo, avail, avail, "cpu-set", local_size, host);
        else
            rc = plan_uniform(b, topo, NULL, avail, "not bound", local_size, host);
        goto out;
    }

    /* Units: hardware threads when binding or mapping by them, else cores. */
    unit_level = level_of(bind_to == HWTHREAD || map_by == HWTHREAD ? HWTHREAD : CORE);
    if (units_collect(&u, topo, avail, unit_level->type) < 0)
        goto nomem;
    if (u.n == 0 && unit_level->level == CORE) {   /* a machine hwloc shows without cores */
        unit_level = level_of(HWTHREAD);
        if (units_collect(&u, topo, avail, unit_level->type) < 0)
            goto nomem;
    }
    unit_name = unit_level->level == CORE ? "cores" : "hwthreads";

    /* Defaults: bound to what they are mapped by (to their own PE units when PE is given);
     * mapped by the object they are bound to when it is larger than a core, spreading them. */
    if (map_by == UNSET)
        map_by = bind_to == AUTO || bind_to == CORE || bind_to == HWTHREAD ? SLOT : bind_to;
    if (bind_to == AUTO)
        bind_to = b->pe > 1 || map_by == SLOT ? unit_level->level : map_by;
    if (bind_to == CORE && unit_level->level == HWTHREAD && hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) <= 0)
        bind_to = HWTHREAD;
    bind_level = level_of(bind_to);
    map_level = level_of(map_by);

    rc = units_group(&u, topo, map_by == SLOT || map_level->type == unit_level->type ? NULL : &map_level->type);
    if (rc == -1)
        goto nomem;
    if (rc == -2) {
        mpirun_error("--map-by %s: this machine has no %s", map_level->name, map_level->name);
        rc = -1;
        goto out;
    }
    rc = -1;

    /* Group g receives ranks g, g + G, g + 2G, ...: each needs pe units of its own. */
    for (int g = 0; g < u.ngroups && !over; g++) {
        int have = u.group_start[g + 1] - u.group_start[g];
        int ranks = local_size / u.ngroups + (g < local_size % u.ngroups);
        hwloc_bitmap_t gset = hwloc_bitmap_alloc();
        char where[64] = "";

        if (gset == NULL)
            goto nomem;
        for (int k = u.group_start[g]; k < u.group_start[g + 1]; k++)
            hwloc_bitmap_or(gset, gset, u.set[u.order[k]]);
        free(list);
        list = set_list(gset);
        hwloc_bitmap_free(gset);
        if (u.group_obj[g] != NULL)
            snprintf(where, sizeof(where), " on %s %u", map_level->name, u.group_obj[g]->logical_index);
        if (pe > have) {
            mpirun_error("%d %s per rank, but only %d %s available%s (cpus %s)", pe, unit_name,
                         have, have == 1 ? "is" : "are", where, list);
            goto out;
        }
        if ((long)ranks * pe <= have)
            continue;
        over = 1;
        if (!explicit_ || b->oversubscribe)
            continue;
        if (pe == 1)
            mpirun_error("cannot bind %d ranks%s to %s of their own: only %d %s available (cpus %s); "
                         "add --oversubscribe to let ranks share them, or --bind-to none", ranks,
                         where, unit_name, have, have == 1 ? "is" : "are", list);
        else
            mpirun_error("cannot bind %d ranks%s to %d %s each: they need %ld, only %d %s available "
                         "(cpus %s); add --oversubscribe to let ranks share them, or --bind-to none",
                         ranks, where, pe, unit_name, (long)ranks * pe, have,
                         have == 1 ? "is" : "are", list);
        goto out;
    }
    if (over && !explicit_) {
        /* The default gives way: unbound ranks at least let the kernel balance the load. */
        if (b->report) {
            free(list);
            list = set_list(avail);
            fprintf(stderr, "%s: %d ranks on %d %.*s (cpus %s): not binding them (oversubscribed)\n",
                    mpirun_name, local_size, u.n, (int)strlen(unit_name) - (u.n == 1), unit_name, list);
        }
        if (b->cpu_set != NULL)
            rc = plan_uniform(b, topo, avail, avail, "cpu-set", local_size, host);
        else
            rc = plan_uniform(b, topo, NULL, avail, "not bound", local_size, host);
        goto out;
    }

    b->slots = calloc((size_t)local_size, sizeof(*b->slots));
    if (b->slots == NULL)
        goto nomem;
    b->nslots = local_size;
    for (int r = 0; r < local_size; r++) {
        int g = r % u.ngroups, k = r / u.ngroups;
        int have = u.group_start[g + 1] - u.group_start[g];
        char *idx = NULL, *label = NULL;

        hwloc_bitmap_zero(rank_set);
        hwloc_bitmap_zero(rank_idx);
        for (int j = 0; j < pe; j++) {
            int unit = u.order[u.group_start[g] + (int)(((long)k * pe + j) % have)];

            if (bind_level->type == unit_level->type) {
                hwloc_bitmap_or(rank_set, rank_set, u.set[unit]);
                hwloc_bitmap_set(rank_idx, u.obj[unit]->logical_index);
            } else if (containing(topo, bind_level->type, u.set[unit], avail, rank_set, rank_idx) < 0) {
                mpirun_error("--bind-to %s: this machine has no %s", bind_level->name, bind_level->name);
                goto out;
            }
        }
        hwloc_bitmap_or(all, all, rank_set);
        idx = set_list(rank_idx);
        if (idx == NULL || asprintf(&label, "%s %s", bind_level->name, idx) < 0)
            label = NULL;
        rc = label != NULL ? fill_slot(&b->slots[r], topo, rank_set, rank_set, label, host) : -1;
        free(idx);
        free(label);
        if (rc < 0)
            goto nomem;
        rc = -1;
    }
    b->node_cpus = hwloc_bitmap_weight(all);
    rc = 0;
    goto out;

nomem:
    mpirun_error("out of memory planning the binding");
    rc = -1;
out:
    if (rc < 0)
        mpirun_bind_free(b);
    units_free(&u);
    free(list);
    hwloc_bitmap_free(avail);
    hwloc_bitmap_free(rank_set);
    hwloc_bitmap_free(rank_idx);
    hwloc_bitmap_free(all);
    return rc;
}

/* Sets NAME=value in env unless NAME is there already (the user's choice, by -x or inherited). */
static int env_add_default(char ***envp, const char *name, const char *value)
{
    size_t nlen = strlen(name);
    char **env = *envp;
    int n;

    for (n = 0; env[n] != NULL; n++)
        if (strncmp(env[n], name, nlen) == 0 && env[n][nlen] == '=')
            return 0;
    env = realloc(env, (size_t)(n + 2) * sizeof(char *));
    if (env == NULL)
        return -1;
    *envp = env;
    if (asprintf(&env[n], "%s=%s", name, value) < 0)
        return env[n] = NULL, -1;
    env[n + 1] = NULL;
    return 0;
}

int mpirun_bind_setup(struct mpirun_job *job, int local_size)
{
    struct mpirun_bind *b = &job->bind;
    hwloc_topology_t topo = NULL;
    hwloc_bitmap_t avail = NULL;
    char host[256], num[16];
    int rc = -1;

    if (b->bind_to == UNSET) {
        /* The site's or user's default; not a library knob, but listed with them (umpi_info). */
        const char *def = getenv("UMPI_BIND_TO");

        b->bind_to = AUTO;
        if (def != NULL && def[0] != '\0' && strcasecmp(def, "auto") != 0 &&
            parse_level("UMPI_BIND_TO", def, 0, &b->bind_to, NULL) < 0)
            return -1;
    }
    if (b->bind_to == NONE && !b->report && b->cpu_set == NULL)
        return 0;   /* the ranks inherit mpirun's cpus: no topology needed */

    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0 ||
        (avail = hwloc_bitmap_alloc()) == NULL) {
        mpirun_error("hwloc cannot read the topology of this machine: %s", strerror(errno));
        goto out;
    }
    /* mpirun's own cpus: what taskset, numactl or a cgroup left it, and so its ranks. */
    if (hwloc_get_cpubind(topo, avail, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(avail))
        hwloc_bitmap_copy(avail, hwloc_topology_get_topology_cpuset(topo));
    /* the node's name in the host list (mpirun --host), else the machine's */
    if (job->hostname[0] != '\0')
        snprintf(host, sizeof(host), "%s", job->hostname);
    else if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';

    if (mpirun_bind_plan(b, topo, avail, local_size, host) < 0)
        goto out;
    snprintf(num, sizeof(num), "%d", b->node_cpus);
    if (b->node_cpus > 0 && env_add_default(&job->env, "UMPI_NODE_CPUS", num) < 0) {
        mpirun_error("out of memory");
        goto out;
    }
    rc = 0;
out:
    hwloc_bitmap_free(avail);
    if (topo != NULL)
        hwloc_topology_destroy(topo);
    return rc;
}

/* ---- in the child ----------------------------------------------------------------------------- */

/* Only memcpy, sched_setaffinity and write: the parent may have held any lock at the fork. */
static size_t put(char *buf, size_t at, size_t cap, const char *s, size_t len)
{
    if (at + len > cap)
        len = at < cap ? cap - at : 0;
    memcpy(buf + at, s, len);
    return at + len;
}

static size_t put_int(char *buf, size_t at, size_t cap, int v)
{
    char digits[16];
    int n = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;

    do {
        digits[sizeof(digits) - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0 && n < 15);
    if (v < 0)
        digits[sizeof(digits) - 1 - n++] = '-';
    return put(buf, at, cap, digits + sizeof(digits) - n, (size_t)n);
}

void mpirun_bind_child(const struct mpirun_job *job, int rank, int local_rank)
{
    const struct mpirun_bind *b = &job->bind;
    const struct mpirun_bind_slot *s;
    char line[4096];
    size_t n = 0;

    if (local_rank < 0 || local_rank >= b->nslots)
        return;
    s = &b->slots[local_rank];
    n = put(line, n, sizeof(line), mpirun_name, strlen(mpirun_name));
    n = put(line, n, sizeof(line), ": rank ", 7);
    n = put_int(line, n, sizeof(line), rank);
    if (s->cpus != NULL && sched_setaffinity(0, s->cpus_size, (const cpu_set_t *)s->cpus) != 0) {
        int err = errno;

        n = put(line, n, sizeof(line), ": cannot bind (sched_setaffinity: errno ", 40);
        n = put_int(line, n, sizeof(line), err);
        n = put(line, n, sizeof(line), ") as planned", 12);
        n = put(line, n, sizeof(line), s->report, s->report_len);
        (void)!write(2, line, n);
        _exit(1);
    }
    if (!b->report)
        return;
    if (n + s->report_len <= sizeof(line)) {
        n = put(line, n, sizeof(line), s->report, s->report_len);
        (void)!write(2, line, n);
    } else {
        /* A line too long for the buffer (thousands of cpus): in two writes. */
        (void)!write(2, line, n);
        (void)!write(2, s->report, s->report_len);
    }
}
