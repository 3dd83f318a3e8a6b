/*
 * Hosts and mapping: which machines a job runs on (--host, --hostfile) and which rank goes where
 * (--map-by). Pure functions of their arguments, so that the head and every daemon compute the
 * same map from the same few lines of the job description, and unit tests can check it.
 *
 * A host list keeps hosts in the order first given; a repeated host adds its slots. Nodes are the
 * hosts that receive at least one rank, in that order; the node index is PMIX_NODEID.
 *
 *   slot      consecutive ranks fill each host's slots, host after host (the default)
 *   node      round robin: one rank per host in turn, skipping hosts whose slots are full
 *   ppr:N:node  N consecutive ranks on each host in turn
 *
 * With --oversubscribe, ranks beyond the slots are spread one more per host in turn (slot keeps
 * each host's ranks consecutive; node keeps going round); max_slots is a limit even then.
 */
#include "mpirun.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Host names reach a launch agent (and a remote shell) as one word: letters, digits, '.', '-',
 * '_' only, not starting with '-'. */
static int valid_name(const char *s, size_t len)
{
    if (len == 0 || len > 255 || s[0] == '-')
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-' && s[i] != '_')
            return 0;
    }
    return 1;
}

/* A count in [1, max]: 0, or -1. */
static int parse_num(const char *s, size_t len, int max, int *out)
{
    long v = 0;

    if (len == 0 || len > 9)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* Adds slots to host name (creating it); max_slots 0 leaves the limit as it is. */
static int add_host(struct mpirun_hostlist *hl, const char *name, size_t len, int slots,
                    int max_slots, char *err, size_t errlen, const char *where)
{
    struct mpirun_host *h = NULL;

    for (int i = 0; i < hl->n; i++) {
        if (strlen(hl->hosts[i].name) == len && strncmp(hl->hosts[i].name, name, len) == 0) {
            h = &hl->hosts[i];
            break;
        }
    }
    if (h == NULL) {
        struct mpirun_host *hosts;

        if (hl->n >= MPIRUN_MAX_HOSTS)
            return fail(err, errlen, "%smore than %d hosts", where, MPIRUN_MAX_HOSTS);
        hosts = realloc(hl->hosts, (size_t)(hl->n + 1) * sizeof(*hosts));
        if (hosts == NULL)
            return fail(err, errlen, "out of memory");
        hl->hosts = hosts;
        h = &hl->hosts[hl->n];
        h->name = strndup(name, len);
        if (h->name == NULL)
            return fail(err, errlen, "out of memory");
        h->slots = 0;
        h->max_slots = 0;
        hl->n++;
    }
    if (max_slots > 0) {
        if (h->max_slots > 0 && h->max_slots != max_slots)
            return fail(err, errlen, "%shost %s: max_slots=%d, but %d before", where, h->name,
                        max_slots, h->max_slots);
        h->max_slots = max_slots;
    }
    if (h->slots > MPIRUN_MAX_RANKS - slots)
        return fail(err, errlen, "%shost %s: more than %d slots", where, h->name,
                    MPIRUN_MAX_RANKS);
    h->slots += slots;
    return 0;
}

/* "name" or "name:N": the MPICH form of --host entries and hostfile lines. */
static int parse_entry(struct mpirun_hostlist *hl, const char *s, size_t len, char *err,
                       size_t errlen, const char *where)
{
    const char *colon = memchr(s, ':', len);
    size_t nlen = colon != NULL ? (size_t)(colon - s) : len;
    int slots = 1;

    if (!valid_name(s, nlen))
        return fail(err, errlen, "%sbad host name '%.*s' (letters, digits, '.', '-', '_')", where,
                    (int)nlen, s);
    if (colon != NULL &&
        parse_num(colon + 1, len - nlen - 1, MPIRUN_MAX_RANKS, &slots) < 0)
        return fail(err, errlen, "%sbad slot count in '%.*s' (host:N, N from 1 to %d)", where,
                    (int)len, s, MPIRUN_MAX_RANKS);
    return add_host(hl, s, nlen, slots, 0, err, errlen, where);
}

int mpirun_hosts_parse_list(struct mpirun_hostlist *hl, const char *spec, char *err, size_t errlen)
{
    const char *p = spec;

    if (spec[0] == '\0')
        return fail(err, errlen, "empty host list");
    for (;;) {
        size_t len = strcspn(p, ",");

        if (len == 0)
            return fail(err, errlen, "empty entry in host list '%s'", spec);
        if (parse_entry(hl, p, len, err, errlen, "") < 0)
            return -1;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* One hostfile line, comment already cut: "host[:N] [slots=N] [max_slots=M]". */
static int parse_line(struct mpirun_hostlist *hl, char *line, char *err, size_t errlen,
                      const char *where)
{
    char *save = NULL, *name = strtok_r(line, " \t\r\n", &save), *field;
    int slots = 0, max_slots = 0;

    if (name == NULL)
        return 0;   /* blank */
    while ((field = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
        char *eq = strchr(field, '=');
        size_t klen = eq != NULL ? (size_t)(eq - field) : strlen(field);
        int *dst = NULL;

        if (eq != NULL && klen == 5 && strncmp(field, "slots", 5) == 0)
            dst = &slots;
        else if (eq != NULL && ((klen == 9 && strncmp(field, "max_slots", 9) == 0) ||
                                (klen == 9 && strncmp(field, "max-slots", 9) == 0)))
            dst = &max_slots;
        if (dst == NULL)
            return fail(err, errlen, "%sunknown field '%s' (host[:N] [slots=N] [max_slots=N])",
                        where, field);
        if (parse_num(eq + 1, strlen(eq + 1), MPIRUN_MAX_RANKS, dst) < 0)
            return fail(err, errlen, "%sbad value in '%s' (1 to %d)", where, field,
                        MPIRUN_MAX_RANKS);
    }
    if (slots > 0 && strchr(name, ':') != NULL)
        return fail(err, errlen, "%s'%s' and slots=%d both give the slots", where, name, slots);
    if (slots == 0 && max_slots == 0)
        return parse_entry(hl, name, strlen(name), err, errlen, where);
    if (strchr(name, ':') != NULL) {
        size_t nlen = strcspn(name, ":");

        if (parse_entry(hl, name, strlen(name), err, errlen, where) < 0)
            return -1;
        return add_host(hl, name, nlen, 0, max_slots, err, errlen, where);
    }
    if (!valid_name(name, strlen(name)))
        return fail(err, errlen, "%sbad host name '%s' (letters, digits, '.', '-', '_')", where,
                    name);
    if (slots == 0)
        slots = 1;
    if (max_slots > 0 && slots > max_slots)
        return fail(err, errlen, "%sslots=%d exceeds max_slots=%d", where, slots, max_slots);
    return add_host(hl, name, strlen(name), slots, max_slots, err, errlen, where);
}

int mpirun_hosts_parse_file(struct mpirun_hostlist *hl, const char *path, char *err,
                            size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, named = 0, rc = 0;

    if (f == NULL)
        return fail(err, errlen, "hostfile %s: %s", path, strerror(errno));
    while (getline(&line, &cap, f) >= 0) {
        char where[512];

        lineno++;
        line[strcspn(line, "#")] = '\0';
        snprintf(where, sizeof(where), "hostfile %s, line %d: ", path, lineno);
        named |= line[strspn(line, " \t\r\n")] != '\0';
        if (parse_line(hl, line, err, errlen, where) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && ferror(f))
        rc = fail(err, errlen, "hostfile %s: %s", path, strerror(errno));
    if (rc == 0 && !named)
        rc = fail(err, errlen, "hostfile %s names no host", path);
    free(line);
    fclose(f);
    return rc;
}

void mpirun_hosts_free(struct mpirun_hostlist *hl)
{
    for (int i = 0; i < hl->n; i++)
        free(hl->hosts[i].name);
    free(hl->hosts);
    hl->hosts = NULL;
    hl->n = 0;
}

int mpirun_mapping_parse(struct mpirun_mapping *m, const char *spec, char *err, size_t errlen)
{
    if (strcmp(spec, "slot") == 0 || strcmp(spec, "by-slot") == 0) {
        m->policy = MPIRUN_MAP_SLOT;
    } else if (strcmp(spec, "node") == 0 || strcmp(spec, "by-node") == 0) {
        m->policy = MPIRUN_MAP_NODE;
    } else if (strncmp(spec, "ppr:", 4) == 0) {
        const char *n = spec + 4, *colon = strchr(n, ':');

        if (colon == NULL || strcmp(colon + 1, "node") != 0 ||
            parse_num(n, (size_t)(colon - n), MPIRUN_MAX_RANKS, &m->ppr) < 0)
            return fail(err, errlen, "bad --map-by '%s': ppr takes the form ppr:N:node", spec);
        m->policy = MPIRUN_MAP_PPR;
    } else {
        return fail(err, errlen, "unknown --map-by '%s' (slot, node or ppr:N:node)", spec);
    }
    return 0;
}

int mpirun_map_default_np(const struct mpirun_hostlist *hl, const struct mpirun_mapping *m)
{
    long n = 0;

    for (int h = 0; h < hl->n; h++)
        n += m->policy == MPIRUN_MAP_PPR ? m->ppr : hl->hosts[h].slots;
    return n > MPIRUN_MAX_RANKS ? MPIRUN_MAX_RANKS : (int)n;
}

/* Room left on host h holding `have` ranks: within its slots (0) or past them (1). */
static int has_room(const struct mpirun_host *h, int have, int past_slots)
{
    if (h->max_slots > 0 && have >= h->max_slots)
        return 0;
    return past_slots || have < h->slots;
}

/* "a:2 b:2 ..." (at most the first 8) for messages about slots. */
static void describe(const struct mpirun_hostlist *hl, char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (int h = 0; h < hl->n && off < len; h++) {
        if (h == 8) {
            snprintf(buf + off, len - off, " ...");
            break;
        }
        off += (size_t)snprintf(buf + off, len - off, "%s%s:%d", h ? " " : "",
                                hl->hosts[h].name, hl->hosts[h].slots);
    }
}

/* Rank counts per host for slot and ppr mapping (consecutive ranks per host). */
static int count_blocks(const struct mpirun_hostlist *hl, const struct mpirun_mapping *m, int np,
                        int *count, char *err, size_t errlen)
{
    int left = np;

    for (int h = 0; h < hl->n && left > 0; h++) {
        const struct mpirun_host *host = &hl->hosts[h];
        int want = m->policy == MPIRUN_MAP_PPR ? m->ppr : host->slots;

        if (m->policy == MPIRUN_MAP_SLOT && host->max_slots > 0 && want > host->max_slots)
            want = host->max_slots;
        if (want > left)
            want = left;
        if (m->policy == MPIRUN_MAP_PPR && want > host->slots && !m->oversubscribe)
            return fail(err, errlen, "--map-by ppr:%d:node puts %d ranks on host %s, which has "
                        "%d slot%s (use --oversubscribe to allow it)", m->ppr, want, host->name,
                        host->slots, host->slots == 1 ? "" : "s");
        if (host->max_slots > 0 && want > host->max_slots)
            return fail(err, errlen, "--map-by ppr:%d:node puts %d ranks on host %s, beyond "
                        "its max_slots=%d", m->ppr, want, host->name, host->max_slots);
        count[h] = want;
        left -= want;
    }
    if (left > 0 && m->policy == MPIRUN_MAP_PPR)
        return fail(err, errlen, "--map-by ppr:%d:node places at most %d ranks on %d host%s, "
                    "not %d", m->ppr, np - left, hl->n, hl->n == 1 ? "" : "s", np);
    /* Oversubscribed slot mapping: one more per host in turn, as max_slots allows. */
    while (left > 0) {
        int placed = 0;

        for (int h = 0; h < hl->n && left > 0; h++) {
            if (has_room(&hl->hosts[h], count[h], 1)) {
                count[h]++;
                left--;
                placed = 1;
            }
        }
        if (!placed)
            return fail(err, errlen, "%d ranks exceed the max_slots of the hosts", np);
    }
    return 0;
}

int mpirun_map_compute(const struct mpirun_hostlist *hl, const struct mpirun_mapping *m, int np,
                       struct mpirun_map *map, char *err, size_t errlen)
{
    int *count = calloc((size_t)hl->n, sizeof(int));
    int *host_of = malloc((size_t)np * sizeof(int));
    int *node_of_host = malloc((size_t)hl->n * sizeof(int));
    long slots = 0;
    int rc = -1;

    memset(map, 0, sizeof(*map));
    if (count == NULL || host_of == NULL || node_of_host == NULL) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    for (int h = 0; h < hl->n; h++)
        slots += hl->hosts[h].slots;
    if (m->policy != MPIRUN_MAP_PPR && np > slots && !m->oversubscribe) {
        char list[256];

        describe(hl, list, sizeof(list));
        fail(err, errlen, "%d ranks do not fit in the %ld slot%s of the hosts (%s): give more "
             "slots or --oversubscribe", np, slots, slots == 1 ? "" : "s", list);
        goto out;
    }

    if (m->policy == MPIRUN_MAP_NODE) {
        /* Round robin within the slots, then past them (oversubscribed) if rounds still must go. */
        int r = 0, past = 0;

        while (r < np) {
            int placed = 0;

            for (int h = 0; h < hl->n && r < np; h++) {
                if (has_room(&hl->hosts[h], count[h], past)) {
                    count[h]++;
                    host_of[r++] = h;
                    placed = 1;
                }
            }
            if (!placed) {
                if (past) {
                    fail(err, errlen, "%d ranks exceed the max_slots of the hosts", np);
                    goto out;
                }
                past = 1;
            }
        }
    } else {
        int r = 0;

        if (count_blocks(hl, m, np, count, err, errlen) < 0)
            goto out;
        for (int h = 0; h < hl->n; h++) {
            for (int i = 0; i < count[h]; i++)
                host_of[r++] = h;
        }
    }

    /* Nodes: the hosts with ranks, in host order. */
    for (int h = 0; h < hl->n; h++)
        node_of_host[h] = count[h] > 0 ? map->nnodes++ : -1;
    map->np = np;
    map->node_name = calloc((size_t)map->nnodes, sizeof(char *));
    map->node_nranks = calloc((size_t)map->nnodes, sizeof(int));
    map->node_of = malloc((size_t)np * sizeof(int));
    map->local_rank = malloc((size_t)np * sizeof(int));
    if (map->node_name == NULL || map->node_nranks == NULL || map->node_of == NULL ||
        map->local_rank == NULL) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    for (int h = 0; h < hl->n; h++) {
        if (node_of_host[h] >= 0 &&
            (map->node_name[node_of_host[h]] = strdup(hl->hosts[h].name)) == NULL) {
            fail(err, errlen, "out of memory");
            goto out;
        }
    }
    for (int r = 0; r < np; r++) {
        int node = node_of_host[host_of[r]];

        map->node_of[r] = node;
        map->local_rank[r] = map->node_nranks[node]++;
    }
    rc = 0;
out:
    if (rc < 0)
        mpirun_map_free(map);
    free(count);
    free(host_of);
    free(node_of_host);
    return rc;
}

int mpirun_map_single(struct mpirun_map *map, const char *hostname, int np)
{
    memset(map, 0, sizeof(*map));
    map->np = np;
    map->nnodes = 1;
    map->node_name = calloc(1, sizeof(char *));
    map->node_nranks = calloc(1, sizeof(int));
    map->node_of = calloc((size_t)np, sizeof(int));
    map->local_rank = malloc((size_t)np * sizeof(int));
    if (map->node_name == NULL || map->node_nranks == NULL || map->node_of == NULL ||
        map->local_rank == NULL || (map->node_name[0] = strdup(hostname)) == NULL) {
        mpirun_map_free(map);
        return -1;
    }
    map->node_nranks[0] = np;
    for (int r = 0; r < np; r++)
        map->local_rank[r] = r;
    return 0;
}

void mpirun_map_free(struct mpirun_map *map)
{
    for (int n = 0; map->node_name != NULL && n < map->nnodes; n++)
        free(map->node_name[n]);
    free(map->node_name);
    free(map->node_nranks);
    free(map->node_of);
    free(map->local_rank);
    memset(map, 0, sizeof(*map));
}

int mpirun_host_is_local(const char *name)
{
    char me[256];
    size_t short_len;

    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0)
        return 1;
    if (gethostname(me, sizeof(me) - 1) < 0)
        return 0;
    me[sizeof(me) - 1] = '\0';
    if (strcmp(name, me) == 0)
        return 1;
    /* "node1" names "node1.cluster.example" and the other way round */
    short_len = strcspn(me, ".");
    if (strchr(name, '.') == NULL)
        return strlen(name) == short_len && strncmp(name, me, short_len) == 0;
    return strchr(me, '.') == NULL && strcspn(name, ".") == strlen(me) &&
           strncmp(name, me, strlen(me)) == 0;
}
