/* The messages of mpirun's launch tree (tools/mpirun/wire.c): frames, fields, and the job
 * description every daemon decodes; malformed input is refused, never half read. */
#include "unit.h"
#include "wire.h"

#include <stdlib.h>
#include <string.h>

static char *agent[] = { "ssh", "-o", "BatchMode=yes", NULL };
static char *argv_[] = { "./prog", "arg one", "", NULL };
static char *env[] = { "PATH=/bin", "UMPI_DEBUG=1", NULL };

static void check_frames(void)
{
    SECTION("frames: header in network order, fields in sequence") {
        struct mpirun_wbuf w;
        struct mpirun_rbuf r;
        uint32_t len, type, dest;
        size_t rest;
        const char *p;
        char *s;

        mpirun_wbuf_start(&w, MPIRUN_MSG_IOF, 7);
        mpirun_wbuf_u32(&w, 0x01020304);
        mpirun_wbuf_u8(&w, 2);
        mpirun_wbuf_str(&w, "host");
        mpirun_wbuf_bytes(&w, "tail", 4);
        CHECK(mpirun_wbuf_finish(&w) == 0 && w.len == MPIRUN_HDR_LEN + 4 + 1 + 8 + 4, "len %zu", w.len);
        mpirun_wire_header(w.p, &len, &type, &dest);
        CHECK(len == w.len - MPIRUN_HDR_LEN && type == MPIRUN_MSG_IOF && dest == 7, "%u %u %u", len, type, dest);
        CHECK((unsigned char)w.p[0] == 0 && (unsigned char)w.p[3] == len, "length is big-endian");
        r = (struct mpirun_rbuf){ .p = w.p + MPIRUN_HDR_LEN, .len = len };
        CHECK(mpirun_rbuf_u32(&r) == 0x01020304, "u32");
        CHECK(mpirun_rbuf_u8(&r) == 2, "u8");
        s = mpirun_rbuf_str(&r);
        CHECK(s != NULL && strcmp(s, "host") == 0, "str");
        free(s);
        p = mpirun_rbuf_rest(&r, &rest);
        CHECK(!r.bad && rest == 4 && memcmp(p, "tail", 4) == 0, "rest");
        /* reading past the end marks the buffer bad and gives zeros */
        CHECK(mpirun_rbuf_u32(&r) == 0 && r.bad, "past the end");
        CHECK(mpirun_rbuf_str(&r) == NULL, "string past the end");
        mpirun_wbuf_free(&w);
    }
    SECTION("strings: a length beyond the payload or a NUL inside is malformed") {
        char bad1[] = { 0, 0, 0, 9, 'a', 'b' };
        char bad2[] = { 0, 0, 0, 3, 'a', 0, 'b' };
        struct mpirun_rbuf r1 = { .p = bad1, .len = sizeof(bad1) };
        struct mpirun_rbuf r2 = { .p = bad2, .len = sizeof(bad2) };

        CHECK(mpirun_rbuf_str(&r1) == NULL && r1.bad, "short string");
        CHECK(mpirun_rbuf_str(&r2) == NULL && r2.bad, "NUL inside");
    }
}

static void check_launch(void)
{
    struct mpirun_host hosts[] = { { "a", 2, 0 }, { "b", 3, 4 } };
    struct mpirun_launch_desc d = {
        .nspace = "umpi.42", .np = 5, .mapping = { MPIRUN_MAP_PPR, 2, 1 },
        .hosts = { hosts, 2 }, .head_node = -1, .fanout = 32, .timeout_s = 30, .agent = agent,
        .daemon_path = "/opt/umpi/bin/mpirun", .token = "0123456789abcdef", .cwd = "/home/u",
        .path = "./prog", .argv = argv_, .env = env,
    }, got;
    struct mpirun_wbuf w;
    char err[256];

    SECTION("the job description survives the trip") {
        CHECK(mpirun_wire_launch_encode(&w, &d) == 0, "encode");
        CHECK(mpirun_wire_launch_decode(w.p + MPIRUN_HDR_LEN, w.len - MPIRUN_HDR_LEN, &got, err,
                                        sizeof(err)) == 0, "%s", err);
        CHECK(strcmp(got.nspace, "umpi.42") == 0 && got.np == 5, "nspace, np");
        CHECK(got.mapping.policy == MPIRUN_MAP_PPR && got.mapping.ppr == 2 && got.mapping.oversubscribe == 1,
              "mapping");
        CHECK(got.hosts.n == 2 && strcmp(got.hosts.hosts[1].name, "b") == 0 && got.hosts.hosts[1].slots == 3 &&
              got.hosts.hosts[1].max_slots == 4, "hosts");
        CHECK(got.head_node == -1 && got.fanout == 32 && got.timeout_s == 30, "tree");
        CHECK(strcmp(got.agent[2], "BatchMode=yes") == 0 && got.agent[3] == NULL, "agent");
        CHECK(strcmp(got.token, d.token) == 0 && strcmp(got.cwd, "/home/u") == 0 &&
              strcmp(got.daemon_path, d.daemon_path) == 0 && strcmp(got.path, "./prog") == 0, "strings");
        CHECK(strcmp(got.argv[1], "arg one") == 0 && strcmp(got.argv[2], "") == 0 && got.argv[3] == NULL,
              "argv");
        CHECK(strcmp(got.env[1], "UMPI_DEBUG=1") == 0 && got.env[2] == NULL, "env");
        mpirun_wire_launch_free(&got);
    }
    SECTION("a truncated, extended or foreign description is refused") {
        size_t plen = w.len - MPIRUN_HDR_LEN;
        char *longer = malloc(plen + 1);

        for (size_t cut = 0; cut < plen; cut += 7) {
            if (mpirun_wire_launch_decode(w.p + MPIRUN_HDR_LEN, cut, &got, err, sizeof(err)) == 0) {
                CHECK(0, "a description cut at %zu of %zu bytes was accepted", cut, plen);
                mpirun_wire_launch_free(&got);
                break;
            }
        }
        memcpy(longer, w.p + MPIRUN_HDR_LEN, plen);
        longer[plen] = 'x';
        CHECK(mpirun_wire_launch_decode(longer, plen + 1, &got, err, sizeof(err)) < 0 &&
              strstr(err, "malformed") != NULL, "%s", err);
        longer[3] = 99;   /* version */
        CHECK(mpirun_wire_launch_decode(longer, plen, &got, err, sizeof(err)) < 0 &&
              strstr(err, "version 99") != NULL, "%s", err);
        free(longer);
    }
    mpirun_wbuf_free(&w);
}

int main(void)
{
    check_frames();
    check_launch();
    return unit_done("test_mpirun_wire");
}
