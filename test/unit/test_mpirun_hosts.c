/* mpirun's host lists (--host, hostfiles of both families) and the mapping of ranks to nodes
 * (tools/mpirun/hosts.c): what every daemon of a job computes from the same description. */
#include "unit.h"
#include "mpirun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[1024];

static int parse_list(struct mpirun_hostlist *hl, const char *spec)
{
    mpirun_hosts_free(hl);
    err[0] = '\0';
    return mpirun_hosts_parse_list(hl, spec, err, sizeof(err));
}

/* "a:2 b:1": the list as text, to compare in one check. */
static const char *show(const struct mpirun_hostlist *hl)
{
    static char buf[1024];
    size_t off = 0;

    buf[0] = '\0';
    for (int i = 0; i < hl->n; i++) {
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s:%d", i ? " " : "",
                                hl->hosts[i].name, hl->hosts[i].slots);
        if (hl->hosts[i].max_slots)
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "/%d", hl->hosts[i].max_slots);
    }
    return buf;
}

static int parse_file(struct mpirun_hostlist *hl, const char *text)
{
    char path[] = "/tmp/umpi-hostfile-XXXXXX";
    int fd = mkstemp(path), rc;

    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        return -2;
    close(fd);
    mpirun_hosts_free(hl);
    err[0] = '\0';
    rc = mpirun_hosts_parse_file(hl, path, err, sizeof(err));
    unlink(path);
    return rc;
}

/* The map as "node-of-each-rank / local-rank-of-each-rank / node names". */
static const char *map_of(const char *hosts, const char *policy, int oversub, int np)
{
    static char buf[1024];
    struct mpirun_hostlist hl = { 0 };
    struct mpirun_mapping m = { .policy = MPIRUN_MAP_SLOT, .oversubscribe = oversub };
    struct mpirun_map map;
    size_t off = 0;

    if (mpirun_hosts_parse_list(&hl, hosts, err, sizeof(err)) < 0)
        return "bad hosts";
    if (policy != NULL && mpirun_mapping_parse(&m, policy, err, sizeof(err)) < 0)
        return "bad policy";
    if (np == 0)
        np = mpirun_map_default_np(&hl, &m);
    err[0] = '\0';
    if (mpirun_map_compute(&hl, &m, np, &map, err, sizeof(err)) < 0) {
        mpirun_hosts_free(&hl);
        return "error";
    }
    for (int r = 0; r < np; r++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%d", map.node_of[r]);
    off += (size_t)snprintf(buf + off, sizeof(buf) - off, "/");
    for (int r = 0; r < np; r++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%d", map.local_rank[r]);
    off += (size_t)snprintf(buf + off, sizeof(buf) - off, "/");
    for (int n = 0; n < map.nnodes; n++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s=%d", n ? "," : "",
                                map.node_name[n], map.node_nranks[n]);
    mpirun_map_free(&map);
    mpirun_hosts_free(&hl);
    return buf;
}

static void check_hosts_option(void)
{
    struct mpirun_hostlist hl = { 0 };

    SECTION("--host lists") {
        CHECK(parse_list(&hl, "a:2,b:2") == 0 && strcmp(show(&hl), "a:2 b:2") == 0, "%s", show(&hl));
        CHECK(parse_list(&hl, "a") == 0 && strcmp(show(&hl), "a:1") == 0, "%s", show(&hl));
        /* a repeated host adds its slots and keeps its first place */
        CHECK(parse_list(&hl, "a,b,a:3") == 0 && strcmp(show(&hl), "a:4 b:1") == 0, "%s", show(&hl));
        CHECK(parse_list(&hl, "node-1.example_x:65536") == 0 &&
              strcmp(show(&hl), "node-1.example_x:65536") == 0, "%s", show(&hl));
        /* two --host options add up */
        CHECK(mpirun_hosts_parse_list(&hl, "c:2", err, sizeof(err)) == 0 &&
              strcmp(show(&hl), "node-1.example_x:65536 c:2") == 0, "%s", show(&hl));
    }
    SECTION("--host errors name what is wrong") {
        CHECK(parse_list(&hl, "") < 0 && strstr(err, "empty host list") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a,,b") < 0 && strstr(err, "empty entry") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a:0") < 0 && strstr(err, "bad slot count in 'a:0'") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a:x") < 0 && strstr(err, "'a:x'") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a:2:3") < 0 && strstr(err, "'a:2:3'") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a:65537") < 0 && strstr(err, "1 to 65536") != NULL, "%s", err);
        CHECK(parse_list(&hl, "-a") < 0 && strstr(err, "bad host name '-a'") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a;rm") < 0 && strstr(err, "bad host name 'a;rm'") != NULL, "%s", err);
        CHECK(parse_list(&hl, ":2") < 0 && strstr(err, "bad host name ''") != NULL, "%s", err);
        CHECK(parse_list(&hl, "a:30000,a:30000,a:30000") < 0 && strstr(err, "more than 65536 slots") != NULL,
              "%s", err);
    }
    mpirun_hosts_free(&hl);
}

static void check_hostfiles(void)
{
    struct mpirun_hostlist hl = { 0 };

    SECTION("hostfiles: Open MPI and MPICH lines, comments, repeats") {
        CHECK(parse_file(&hl, "# cluster\n\nn1 slots=2\nn2:3   # MPICH form\n  n3\nn1\n"
                              "n4 slots=2 max_slots=4\nn5 max-slots=2\n") == 0 &&
              strcmp(show(&hl), "n1:3 n2:3 n3:1 n4:2/4 n5:1/2") == 0, "%s (%s)", show(&hl), err);
        CHECK(parse_file(&hl, "a\r\nb slots=1\r\n") == 0 && strcmp(show(&hl), "a:1 b:1") == 0,
              "%s (%s)", show(&hl), err);
        CHECK(parse_file(&hl, "a:2 max_slots=3\n") == 0 && strcmp(show(&hl), "a:2/3") == 0, "%s", show(&hl));
    }
    SECTION("hostfile errors name the file and the line") {
        CHECK(parse_file(&hl, "a\nb slots=2 cpus=4\n") < 0 &&
              strstr(err, "line 2: unknown field 'cpus=4'") != NULL, "%s", err);
        CHECK(parse_file(&hl, "a slots=0\n") < 0 && strstr(err, "line 1: bad value in 'slots=0'") != NULL,
              "%s", err);
        CHECK(parse_file(&hl, "a slots=two\n") < 0 && strstr(err, "bad value") != NULL, "%s", err);
        CHECK(parse_file(&hl, "\n\na:2 slots=3\n") < 0 && strstr(err, "line 3: 'a:2' and slots=3") != NULL,
              "%s", err);
        CHECK(parse_file(&hl, "a slots=4 max_slots=2\n") < 0 && strstr(err, "exceeds max_slots") != NULL,
              "%s", err);
        CHECK(parse_file(&hl, "a max_slots=2\na max_slots=3\n") < 0 && strstr(err, "line 2") != NULL,
              "%s", err);
        CHECK(parse_file(&hl, "# nothing\n\n") < 0 && strstr(err, "names no host") != NULL, "%s", err);
        CHECK(parse_file(&hl, "bad!name\n") < 0 && strstr(err, "bad host name 'bad!name'") != NULL, "%s", err);
        mpirun_hosts_free(&hl);
        CHECK(mpirun_hosts_parse_file(&hl, "/nonexistent/hostfile", err, sizeof(err)) < 0 &&
              strstr(err, "/nonexistent/hostfile: No such file") != NULL, "%s", err);
    }
    mpirun_hosts_free(&hl);
}

static void check_mapping(void)
{
    struct mpirun_mapping m = { 0 };

    SECTION("--map-by values") {
        CHECK(mpirun_mapping_parse(&m, "slot", err, sizeof(err)) == 0 && m.policy == MPIRUN_MAP_SLOT, "slot");
        CHECK(mpirun_mapping_parse(&m, "node", err, sizeof(err)) == 0 && m.policy == MPIRUN_MAP_NODE, "node");
        CHECK(mpirun_mapping_parse(&m, "ppr:3:node", err, sizeof(err)) == 0 && m.policy == MPIRUN_MAP_PPR &&
              m.ppr == 3, "ppr");
        CHECK(mpirun_mapping_parse(&m, "ppr:0:node", err, sizeof(err)) < 0 && strstr(err, "ppr:N:node"), "%s", err);
        CHECK(mpirun_mapping_parse(&m, "ppr:2:socket", err, sizeof(err)) < 0, "ppr:2:socket");
        CHECK(mpirun_mapping_parse(&m, "ppr:2", err, sizeof(err)) < 0, "ppr:2");
        CHECK(mpirun_mapping_parse(&m, "board", err, sizeof(err)) < 0 && strstr(err, "unknown --map-by 'board'"),
              "%s", err);
    }
    SECTION("map by slot (default): fill each host in turn") {
        const char *s;

        CHECK(strcmp(s = map_of("a:2,b:2", NULL, 0, 0), "0011/0101/a=2,b=2") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:2,b:2", NULL, 0, 3), "001/010/a=2,b=1") == 0, "%s", s);
        /* hosts without ranks are no nodes */
        CHECK(strcmp(s = map_of("a:2,b:2,c:2", NULL, 0, 2), "00/01/a=2") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:2,b:2", NULL, 0, 5), "error") == 0 &&
              strstr(err, "5 ranks do not fit in the 4 slots of the hosts (a:2 b:2)") != NULL, "%s", err);
        /* oversubscribed: one more per host in turn, each host's ranks still consecutive */
        CHECK(strcmp(s = map_of("a:2,b:2", NULL, 1, 7), "0000111/0123012/a=4,b=3") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a,b,c", NULL, 1, 4), "0012/0100/a=2,b=1,c=1") == 0, "%s", s);
    }
    SECTION("map by node: round robin over the hosts with free slots") {
        const char *s;

        CHECK(strcmp(s = map_of("a:2,b:2", "node", 0, 0), "0101/0011/a=2,b=2") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:1,b:3", "node", 0, 0), "0111/0012/a=1,b=3") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:2,b:2,c:2", "node", 0, 4), "0120/0001/a=2,b=1,c=1") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:1,b:1", "node", 1, 5), "01010/00112/a=3,b=2") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:1,b:1", "node", 0, 3), "error") == 0, "%s", s);
    }
    SECTION("map by ppr:N:node") {
        const char *s;

        CHECK(strcmp(s = map_of("a:2,b:2,c:2", "ppr:2:node", 0, 0), "001122/010101/a=2,b=2,c=2") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:2,b:2,c:2", "ppr:2:node", 0, 3), "001/010/a=2,b=1") == 0, "%s", s);
        CHECK(strcmp(s = map_of("a:2,b:2", "ppr:2:node", 0, 5), "error") == 0 &&
              strstr(err, "places at most 4 ranks on 2 hosts, not 5") != NULL, "%s", err);
        CHECK(strcmp(s = map_of("a,b", "ppr:2:node", 0, 0), "error") == 0 &&
              strstr(err, "puts 2 ranks on host a, which has 1 slot") != NULL, "%s", err);
        CHECK(strcmp(s = map_of("a,b", "ppr:2:node", 1, 0), "0011/0101/a=2,b=2") == 0, "%s", s);
    }
    SECTION("max_slots holds even oversubscribed") {
        struct mpirun_hostlist hl = { 0 };
        struct mpirun_mapping ov = { .policy = MPIRUN_MAP_SLOT, .oversubscribe = 1 };
        struct mpirun_map map;

        CHECK(parse_file(&hl, "a slots=1 max_slots=2\nb slots=1\n") == 0, "%s", err);
        CHECK(mpirun_map_compute(&hl, &ov, 5, &map, err, sizeof(err)) == 0 && map.node_nranks[0] == 2 &&
              map.node_nranks[1] == 3, "%s", err);
        mpirun_map_free(&map);
        CHECK(parse_file(&hl, "a slots=1 max_slots=1\nb slots=1 max_slots=1\n") == 0, "%s", err);
        CHECK(mpirun_map_compute(&hl, &ov, 3, &map, err, sizeof(err)) < 0 &&
              strstr(err, "3 ranks exceed the max_slots") != NULL, "%s", err);
        ov.policy = MPIRUN_MAP_NODE;
        CHECK(mpirun_map_compute(&hl, &ov, 3, &map, err, sizeof(err)) < 0 &&
              strstr(err, "3 ranks exceed the max_slots") != NULL, "%s", err);
        mpirun_hosts_free(&hl);
    }
    SECTION("the single-machine map and local host names") {
        struct mpirun_map map;
        char me[256];

        CHECK(mpirun_map_single(&map, "here", 3) == 0 && map.nnodes == 1 && map.node_nranks[0] == 3 &&
              map.node_of[2] == 0 && map.local_rank[2] == 2 && strcmp(map.node_name[0], "here") == 0,
              "single map");
        mpirun_map_free(&map);
        CHECK(mpirun_host_is_local("localhost"), "localhost");
        CHECK(gethostname(me, sizeof(me)) == 0 && mpirun_host_is_local(me), "%s", me);
        CHECK(!mpirun_host_is_local("no-such-host.invalid"), "a remote name");
    }
}

int main(void)
{
    check_hosts_option();
    check_hostfiles();
    check_mapping();
    return unit_done("test_mpirun_hosts");
}
