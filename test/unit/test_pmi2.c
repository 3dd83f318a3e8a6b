/*
 * The PMI-2 client (src/pmi/pmi2.c, pmi2_format.c) without a launcher: the PMI_process_mapping
 * parser, the value encoding and splitting, the message parser, and the whole client against fake
 * servers on a socketpair (or a TCP port, for PMI_PORT) that behave like Hydra (right-aligned lengths,
 * values silently cut at 1023 characters) or like Slurm's mpi/pmi2 plugin (left-aligned lengths,
 * rc first, fullinit needing pmijobid and threaded, appnum -1), and that fail in the ways servers do.
 *
 * Then, where Debian's mpiexec.hydra is installed, the same binary runs itself under it with
 * --live (3 ranks on two fake hosts, over PMI_FD and over PMI_PORT): the client against a real
 * server, with values long enough to be split.
 */
#include "pmi/umpi_pmi2.h"
#include "pmi/umpi_pmi_impl.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- PMI_process_mapping ---------------------------------------------------------------------- */

static int map_is(const char *mapping, int size, const int *want)
{
    int got[64];
    char why[256] = "";

    if (umpi_pmi2_parse_mapping(mapping, size, got, why, sizeof(why)) != 1)
        return 0;
    for (int r = 0; r < size; r++) {
        if (got[r] != want[r])
            return 0;
    }
    return 1;
}

static void test_mapping(void)
{
    SECTION("PMI_process_mapping: blocks, several blocks, wrap-around, spaces") {
        CHECK(map_is("(vector,(0,1,4))", 4, (int[]){ 0, 0, 0, 0 }), "one node");
        CHECK(map_is("(vector,(0,2,2))", 4, (int[]){ 0, 0, 1, 1 }), "block over two nodes");
        CHECK(map_is("(vector,(0,2,1))", 5, (int[]){ 0, 1, 0, 1, 0 }), "cyclic (Hydra -hosts a,b)");
        CHECK(map_is("(vector,(0,2,1),(0,2,1))", 4, (int[]){ 0, 1, 0, 1 }), "cyclic written out (Slurm)");
        CHECK(map_is("(vector,(0,1,2),(1,1,1))", 5, (int[]){ 0, 0, 1, 0, 0 }), "hosts a:2,b:1, wrapped");
        CHECK(map_is("(vector,(0,2,2))", 5, (int[]){ 0, 0, 1, 1, 0 }), "-ppn 2 with 5 ranks");
        CHECK(map_is("(vector,(2,1,1),(0,2,2))", 5, (int[]){ 2, 0, 0, 1, 1 }), "blocks out of node order");
        CHECK(map_is(" ( vector , (0, 3, 1) ,(3,1,2) ) ", 5, (int[]){ 0, 1, 2, 3, 3 }), "spaces");
        CHECK(map_is("(vector,(0,4,2))", 3, (int[]){ 0, 0, 1 }), "more described than ranks");
        CHECK(map_is("(vector,(7,1,3))", 3, (int[]){ 7, 7, 7 }), "node ids as given");
    }
    SECTION("PMI_process_mapping: empty means no mapping, malformed ones are errors that say why") {
        static const char *bad[] = {
            "vector,(0,1,1))", "(vectr,(0,1,1))", "(vector)", "(vector,(0,1,1)", "(vector,(0,1,1),)",
            "(vector,(0,0,1))", "(vector,(0,1,0))", "(vector,(-1,1,1))", "(vector,(0,1,1)) x",
            "(vector,(0,1))", "(vector,(0,1,1,1))", "(vector,(a,1,1))", "(vector,(0,99999999999,1))",
            "(vector,(16777215,2,1))", "(vector,(1.5,1,1))",
        };
        int node_of[4] = { 9, 9, 9, 9 };
        char why[256];

        CHECK(umpi_pmi2_parse_mapping("", 4, node_of, why, sizeof(why)) == 0, "empty");
        CHECK(umpi_pmi2_parse_mapping("  ", 4, node_of, why, sizeof(why)) == 0, "blank");
        CHECK(node_of[0] == 9, "an empty mapping leaves the table alone");
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(bad); i++) {
            why[0] = '\0';
            CHECK(umpi_pmi2_parse_mapping(bad[i], 4, node_of, why, sizeof(why)) == -1, "'%s' accepted", bad[i]);
            CHECK(strstr(why, "PMI_process_mapping") != NULL && strstr(why, bad[i]) != NULL,
                  "the reason names the attribute and the value: '%s'", why);
        }
    }
    SECTION("local rank and local size from the node table") {
        int node_of[] = { 0, 1, 0, 1, 0 }, lr, ls;

        umpi_pmi2_local(node_of, 5, 4, &lr, &ls);
        CHECK(lr == 2 && ls == 3, "rank 4: %d of %d", lr, ls);
        umpi_pmi2_local(node_of, 5, 1, &lr, &ls);
        CHECK(lr == 0 && ls == 2, "rank 1: %d of %d", lr, ls);
    }
}

/* ---- values ------------------------------------------------------------------------------------ */

static void test_values(void)
{
    SECTION("encoding: every length round-trips, only characters no PMI-2 parser minds") {
        unsigned char src[300], back[300];
        char text[401];
        int ok = 1;

        for (size_t i = 0; i < sizeof(src); i++)
            src[i] = (unsigned char)(i * 131 + 7);
        for (size_t n = 0; n <= sizeof(src) && ok; n++) {
            size_t len = umpi_pmi2_encoded_len(n);

            umpi_pmi2_encode(src, n, text);
            ok = strlen(text) == len && strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                     "0123456789-_") == len &&
                 umpi_pmi2_decode(text, len, back) == (long)n && memcmp(src, back, n) == 0;
            CHECK(ok, "length %zu", n);
        }
        umpi_pmi2_encode("\xfb\xff", 2, text);
        CHECK(strcmp(text, "-_8") == 0, "URL alphabet: %s", text);
        CHECK(umpi_pmi2_decode("ab;d", 4, back) == -1, "a ';' is rejected");
        CHECK(umpi_pmi2_decode("abcde", 5, back) == -1, "a length of 4k+1 is rejected");
        CHECK(umpi_pmi2_decode("ab=", 3, back) == -1, "padding is not umpi's encoding");
    }
    SECTION("splitting: parts of at most one value, keys within the key limit") {
        char key[80];

        CHECK(umpi_pmi2_nparts(0) == 1, "an empty value is one part");
        CHECK(umpi_pmi2_nparts(UMPI_PMI2_PART_CHARS / 4 * 3) == 1, "one full part");
        CHECK(umpi_pmi2_nparts(UMPI_PMI2_PART_CHARS / 4 * 3 + 1) == 2, "one byte more");
        CHECK(umpi_pmi2_nparts(5000) == 7, "5000 bytes: %d parts", umpi_pmi2_nparts(5000));
        CHECK(umpi_pmi2_nparts((size_t)UMPI_PMI2_PART_CHARS / 4 * 3 * (UMPI_PMI2_MAX_PARTS + 1)) == -1, "too many");
        CHECK(UMPI_PMI2_PART_CHARS % 4 == 0 && UMPI_PMI2_PART_CHARS + 6 <= UMPI_PMI2_VALUE_MAX,
              "a part with its header fits one value");
        CHECK(umpi_pmi2_part_key(key, sizeof(key), "umpi.ucx.addr", 12, 0) == 0 && strcmp(key, "umpi.ucx.addr-12") == 0,
              "%s", key);
        CHECK(umpi_pmi2_part_key(key, sizeof(key), "umpi.ucx.addr", 12, 3) == 0 && strcmp(key, "umpi.ucx.addr-12-3") == 0,
              "%s", key);
        CHECK(umpi_pmi2_part_key(key, sizeof(key), "k23456789012345678901234567890123456789012345678901234567", 1234567,
                                 1) == -1, "a key past 63 characters is refused");
    }
    SECTION("messages: fields in any order, '=' inside values, malformed ones refused") {
        char a[] = "cmd=kvs-get-response;found=TRUE;value=x=y:z;rc=0;", b[] = "cmd=x;rc=0; ", c[] = "rc=0;cmd=x;",
             d[] = "cmd=x;novalue;";
        struct umpi_pmi2_msg m;
        char why[128];

        CHECK(umpi_pmi2_msg_parse(a, &m, why, sizeof(why)) == 0 && strcmp(m.cmd, "kvs-get-response") == 0, "parse");
        CHECK(strcmp(umpi_pmi2_msg_get(&m, "value"), "x=y:z") == 0 && strcmp(umpi_pmi2_msg_get(&m, "rc"), "0") == 0 &&
              umpi_pmi2_msg_get(&m, "nope") == NULL, "fields");
        CHECK(umpi_pmi2_msg_parse(b, &m, why, sizeof(why)) == 0, "a trailing space is tolerated");
        CHECK(umpi_pmi2_msg_parse(c, &m, why, sizeof(why)) == -1, "cmd must come first");
        CHECK(umpi_pmi2_msg_parse(d, &m, why, sizeof(why)) == -1 && strstr(why, "novalue") != NULL, "%s", why);
    }
}

/* ---- fake servers ------------------------------------------------------------------------------ */

struct fake {
    /* how it behaves */
    int slurm;             /* left-aligned lengths, rc first, appnum -1, fullinit needs pmijobid+threaded */
    int pmi1_only;         /* answers the version handshake with pmi_version=1 */
    int size;
    const char *mapping;   /* NULL: PMI_process_mapping not found */
    const char *universe;  /* NULL: universeSize not found */
    int fail_put;          /* kvs-put answers rc=7 */
    int hangup_after;      /* closes the connection after this many requests (0: never) */
    int listen_fd;         /* >= 0: accept the client on this TCP socket first (PMI_PORT) */
    /* what it saw */
    int fd;
    int nreq, truncated, longest_value, fences, finalized;
    char abort_req[1024];
    char kv_key[64][64];
    char kv_val[64][1024];
    int nkv;
};

static int fake_read(int fd, char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, buf, len);

        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static void fake_reply(struct fake *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fake_reply(struct fake *f, const char *fmt, ...)
{
    char body[2048], msg[2100];
    va_list ap;
    int n;

    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    n = snprintf(msg, sizeof(msg), f->slurm ? "%-6d%s" : "%6d%s", (int)strlen(body), body);
    if (write(f->fd, msg, (size_t)n) != n)
        return;
}

/* The value of field key in a request body (copied to out), or NULL. Independent of the client's parser. */
static const char *fake_field(const char *body, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);

    for (const char *p = body; p != NULL; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
        if (strncmp(p, key, k) == 0 && p[k] == '=') {
            size_t n = strcspn(p + k + 1, ";");

            if (n >= len)
                n = len - 1;
            memcpy(out, p + k + 1, n);
            out[n] = '\0';
            return out;
        }
    }
    return NULL;
}

static void *fake_serve(void *arg)
{
    struct fake *f = arg;
    char line[256], body[4096], key[256], val[4096], head[7], rank[32];
    size_t len = 0;

    if (f->listen_fd >= 0)
        f->fd = accept(f->listen_fd, NULL, NULL);
    while (len < sizeof(line) - 1 && read(f->fd, &line[len], 1) == 1 && line[len++] != '\n')
        ;
    line[len] = '\0';
    if (strcmp(line, "cmd=init pmi_version=2 pmi_subversion=0\n") != 0)
        goto out;
    if (f->pmi1_only)
        snprintf(line, sizeof(line), "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    else if (f->slurm)
        snprintf(line, sizeof(line), "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n");
    else
        snprintf(line, sizeof(line), "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
    if (write(f->fd, line, strlen(line)) < 0 || f->pmi1_only)
        goto out;
    while (fake_read(f->fd, head, 6) == 0) {
        int n;

        head[6] = '\0';
        n = atoi(head);
        if (n <= 0 || n >= (int)sizeof(body) || fake_read(f->fd, body, (size_t)n) != 0)
            break;
        body[n] = '\0';
        if (f->hangup_after && ++f->nreq > f->hangup_after)
            break;
        if (strncmp(body, "cmd=fullinit;", 13) == 0) {
            if (!fake_field(body, "pmirank", rank, sizeof(rank)) ||
                (f->slurm && (!fake_field(body, "pmijobid", key, sizeof(key)) ||
                              !fake_field(body, "threaded", key, sizeof(key)))))
                fake_reply(f, "cmd=fullinit-response;rc=3;");
            else if (f->slurm)
                fake_reply(f, "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%s;size=%d;appnum=-1;"
                              "debugged=FALSE;pmiverbose=FALSE;", rank, f->size);
            else
                fake_reply(f, "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=%s;size=%d;appnum=0;"
                              "debugged=FALSE;pmiverbose=FALSE;rc=0;", rank, f->size);
        } else if (strncmp(body, "cmd=info-getjobattr;", 20) == 0) {
            const char *v = NULL;

            fake_field(body, "key", key, sizeof(key));
            if (strcmp(key, "PMI_process_mapping") == 0)
                v = f->mapping;
            else if (strcmp(key, "universeSize") == 0)
                v = f->universe;
            if (v != NULL)
                fake_reply(f, "cmd=info-getjobattr-response;found=TRUE;value=%s;rc=0;", v);
            else
                fake_reply(f, "cmd=info-getjobattr-response;found=FALSE;rc=0;");
        } else if (strncmp(body, "cmd=kvs-put;", 12) == 0) {
            int i = 0;

            fake_field(body, "key", key, sizeof(key));
            fake_field(body, "value", val, sizeof(val));
            if (f->fail_put || strlen(key) > UMPI_PMI2_KEY_MAX || f->nkv == 64) {
                fake_reply(f, "cmd=kvs-put-response;rc=7;errmsg=the fake refuses %s;", key);
                continue;
            }
            if ((int)strlen(val) > f->longest_value)
                f->longest_value = (int)strlen(val);
            if (strlen(val) > UMPI_PMI2_VALUE_MAX) { /* as Hydra does: cut, say nothing */
                val[UMPI_PMI2_VALUE_MAX] = '\0';
                f->truncated++;
            }
            while (i < f->nkv && strcmp(f->kv_key[i], key) != 0)
                i++;
            snprintf(f->kv_key[i], sizeof(f->kv_key[i]), "%s", key);
            memcpy(f->kv_val[i], val, strlen(val) + 1); /* at most UMPI_PMI2_VALUE_MAX + 1 bytes */
            f->nkv += i == f->nkv;
            fake_reply(f, f->slurm ? "cmd=kvs-put-response;rc=0;" : "cmd=kvs-put-response;rc=0;");
        } else if (strncmp(body, "cmd=kvs-fence;", 14) == 0) {
            f->fences++;
            fake_reply(f, "cmd=kvs-fence-response;rc=0;");
        } else if (strncmp(body, "cmd=kvs-get;", 12) == 0) {
            int i = 0;

            fake_field(body, "key", key, sizeof(key));
            while (i < f->nkv && strcmp(f->kv_key[i], key) != 0)
                i++;
            if (i < f->nkv)
                fake_reply(f, f->slurm ? "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;"
                                       : "cmd=kvs-get-response;found=TRUE;value=%s;rc=0;", f->kv_val[i]);
            else
                fake_reply(f, "cmd=kvs-get-response;found=FALSE;rc=0;");
        } else if (strncmp(body, "cmd=abort;", 10) == 0) {
            size_t k = strlen(body) < sizeof(f->abort_req) ? strlen(body) : sizeof(f->abort_req) - 1;

            memcpy(f->abort_req, body, k);
            f->abort_req[k] = '\0';
        } else if (strncmp(body, "cmd=finalize;", 13) == 0) {
            f->finalized = 1;
            fake_reply(f, "cmd=finalize-response;rc=0;");
            break;
        } else {
            fake_reply(f, "cmd=unknown-command-response;rc=1;errmsg=unknown;");
        }
    }
out:
    close(f->fd);
    return NULL;
}

/* Starts f on a socketpair and points PMI_FD at the client's end; rank is PMI_RANK. */
static pthread_t fake_start(struct fake *f, const char *rank)
{
    int sv[2];
    char num[16];
    pthread_t t;

    f->listen_fd = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        exit(1);
    }
    f->fd = sv[1];
    snprintf(num, sizeof(num), "%d", sv[0]);
    setenv("PMI_FD", num, 1);
    setenv("PMI_RANK", rank, 1);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("PMI_JOBID");
    pthread_create(&t, NULL, fake_serve, f);
    return t;
}

/* Stores a value as a client of rank `rank` would have put it (one part), for gets from "other" ranks. */
static void fake_preload(struct fake *f, const char *key, int rank, const void *value, size_t len)
{
    char text[1000];

    umpi_pmi2_encode(value, len, text);
    snprintf(f->kv_key[f->nkv], sizeof(f->kv_key[0]), "%s-%d", key, rank);
    snprintf(f->kv_val[f->nkv++], sizeof(f->kv_val[0]), "1.%s", text);
}

static void test_client(void)
{
    SECTION("client vs a Hydra-like server: init, mapping, long values split and joined, finalize") {
        struct fake f = { .size = 4, .mapping = "(vector,(0,2,2))" };
        pthread_t t = fake_start(&f, "2");
        struct umpi_pmi_info info;
        int *node_of = NULL;
        unsigned char big[5000], *back = NULL;
        size_t len = 0;
        void *none = NULL;

        for (size_t i = 0; i < sizeof(big); i++)
            big[i] = (unsigned char)(i * 7 + i / 256);
        CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_OK, "init: %s", umpi_status_last_msg());
        CHECK(info.rank == 2 && info.size == 4 && info.appnum == 0 && info.universe_size == 4, "rank %d size %d appnum %d "
              "universe %d", info.rank, info.size, info.appnum, info.universe_size);
        CHECK(node_of != NULL && node_of[0] == 0 && node_of[1] == 0 && node_of[2] == 1 && node_of[3] == 1, "node map");
        CHECK(info.node_id == 1 && info.local_rank == 0 && info.local_size == 2, "node %d local %d of %d", info.node_id,
              info.local_rank, info.local_size);
        CHECK(umpi_pmi2_put("umpi.test", big, sizeof(big)) == UMPI_OK, "put: %s", umpi_status_last_msg());
        CHECK(umpi_pmi2_put("umpi.empty", "", 0) == UMPI_OK, "empty put");
        CHECK(umpi_pmi2_fence() == UMPI_OK && f.fences == 1, "fence");
        CHECK(f.truncated == 0 && f.longest_value <= UMPI_PMI2_VALUE_MAX, "no value over %d characters (longest %d)",
              UMPI_PMI2_VALUE_MAX, f.longest_value);
        CHECK(f.nkv == 7 + 1, "5000 bytes in 7 parts, and the empty one: %d keys", f.nkv);
        CHECK(umpi_pmi2_get(2, "umpi.test", (void **)&back, &len) == UMPI_OK && len == sizeof(big) &&
              memcmp(back, big, len) == 0, "the long value comes back whole (%zu bytes)", len);
        free(back);
        back = NULL;
        CHECK(umpi_pmi2_get(2, "umpi.empty", (void **)&back, &len) == UMPI_OK && len == 0, "the empty value");
        free(back);
        CHECK(umpi_pmi2_get(1, "umpi.test", &none, &len) == UMPI_ERR_NOT_FOUND &&
              strstr(umpi_status_last_msg(), "rank 1 published no key 'umpi.test'") != NULL &&
              strstr(umpi_status_last_msg(), "'umpi.test-1'") != NULL &&
              strstr(umpi_status_last_msg(), "found=FALSE") != NULL, "a missing key: %s", umpi_status_last_msg());
        CHECK(umpi_pmi2_put("bad key;", "x", 1) == UMPI_ERR_INTERN && strstr(umpi_status_last_msg(), "bad key;"),
              "a key with ';' is refused: %s", umpi_status_last_msg());
        CHECK(umpi_pmi2_finalize() == UMPI_OK, "finalize: %s", umpi_status_last_msg());
        pthread_join(t, NULL);
        CHECK(f.finalized, "the server saw finalize");
        free(node_of);
    }
    SECTION("client vs a Slurm-like server: left-aligned lengths, rc first, pmijobid, appnum -1, universeSize") {
        struct fake f = { .slurm = 1, .size = 3, .mapping = "(vector,(0,1,2),(1,1,1))", .universe = "8" };
        pthread_t t = fake_start(&f, "1");
        struct umpi_pmi_info info;
        int *node_of = NULL;
        char *back = NULL;
        size_t len;

        setenv("PMI_JOBID", "1234.0", 1);
        CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_OK, "init: %s", umpi_status_last_msg());
        CHECK(info.rank == 1 && info.size == 3 && info.appnum == -1 && info.universe_size == 8,
              "rank %d size %d appnum %d universe %d", info.rank, info.size, info.appnum, info.universe_size);
        CHECK(info.node_id == 0 && info.local_rank == 1 && info.local_size == 2, "node %d local %d of %d",
              info.node_id, info.local_rank, info.local_size);
        CHECK(umpi_pmi2_put("umpi.ucx.addr", "address;with=odd\nbytes", 23) == UMPI_OK, "put");
        CHECK(umpi_pmi2_fence() == UMPI_OK, "fence");
        CHECK(umpi_pmi2_get(1, "umpi.ucx.addr", (void **)&back, &len) == UMPI_OK && len == 23 &&
              memcmp(back, "address;with=odd\nbytes", 23) == 0, "bytes that PMI-2 cannot carry raw");
        free(back);
        umpi_pmi2_abort(5, "umpi: rank 1: it; went wrong\n");
        CHECK(umpi_pmi2_finalize() == UMPI_OK, "finalize");
        pthread_join(t, NULL);
        CHECK(strstr(f.abort_req, "isworld=TRUE;") != NULL && strstr(f.abort_req, "exitcode=5;") != NULL &&
              strstr(f.abort_req, "msg=umpi: rank 1: it  went wrong ;") != NULL, "abort: '%s'", f.abort_req);
        unsetenv("PMI_JOBID");
        free(node_of);
    }
    SECTION("client without PMI_process_mapping: the node of every rank from the hostnames") {
        struct fake f = { .size = 3 };
        pthread_t t = fake_start(&f, "0");
        struct umpi_pmi_info info;
        int *node_of = NULL;
        char host[256];

        gethostname(host, sizeof(host));
        fake_preload(&f, "umpi.host", 1, "some-other-host", 16);
        fake_preload(&f, "umpi.host", 2, host, strlen(host) + 1);
        CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_OK, "init: %s", umpi_status_last_msg());
        CHECK(f.fences == 1, "one fence to exchange the hostnames");
        CHECK(node_of != NULL && node_of[0] == 0 && node_of[1] == 1 && node_of[2] == 0, "node map %d %d %d",
              node_of ? node_of[0] : -9, node_of ? node_of[1] : -9, node_of ? node_of[2] : -9);
        CHECK(info.local_rank == 0 && info.local_size == 2, "local %d of %d", info.local_rank, info.local_size);
        CHECK(umpi_pmi2_finalize() == UMPI_OK, "finalize");
        pthread_join(t, NULL);
        free(node_of);
    }
    SECTION("client over PMI_PORT (host:port, rank in PMI_ID)") {
        struct fake f = { .size = 2, .mapping = "(vector,(0,1,2))" };
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t alen = sizeof(a);
        struct umpi_pmi_info info;
        int *node_of = NULL;
        char port[64];
        pthread_t t;

        f.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
        bind(f.listen_fd, (struct sockaddr *)&a, sizeof(a));
        listen(f.listen_fd, 1);
        getsockname(f.listen_fd, (struct sockaddr *)&a, &alen);
        snprintf(port, sizeof(port), "localhost:%d", ntohs(a.sin_port));
        unsetenv("PMI_FD");
        unsetenv("PMI_RANK");
        setenv("PMI_PORT", port, 1);
        setenv("PMI_ID", "1", 1);
        pthread_create(&t, NULL, fake_serve, &f);
        CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_OK, "init over %s: %s", port, umpi_status_last_msg());
        CHECK(info.rank == 1 && info.size == 2 && info.local_size == 2, "rank %d of %d", info.rank, info.size);
        CHECK(umpi_pmi2_finalize() == UMPI_OK, "finalize");
        pthread_join(t, NULL);
        close(f.listen_fd);
        unsetenv("PMI_PORT");
        unsetenv("PMI_ID");
        free(node_of);
    }
    SECTION("failures: PMI-1-only server, rc errors, a server that hangs up, no rank, bad PMI_FD, bad mapping") {
        struct umpi_pmi_info info;
        int *node_of = NULL;

        {
            struct fake f = { .pmi1_only = 1, .size = 1 };
            pthread_t t = fake_start(&f, "0");

            CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_ERR_PMI &&
                  strstr(umpi_status_last_msg(), "does not speak PMI-2") != NULL, "%s", umpi_status_last_msg());
            pthread_join(t, NULL);
        }
        {
            struct fake f = { .slurm = 1, .size = 1 }; /* no PMI_JOBID: Slurm answers rc=3 */
            pthread_t t = fake_start(&f, "0");

            CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_ERR_PMI &&
                  strstr(umpi_status_last_msg(), "fullinit-response failed with rc=3") != NULL, "%s",
                  umpi_status_last_msg());
            pthread_join(t, NULL); /* the client closed its end, which ends the server */
        }
        {
            struct fake f = { .size = 1, .mapping = "(vector,(0,1,1))", .fail_put = 1 };
            pthread_t t = fake_start(&f, "0");

            CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_OK, "init");
            CHECK(umpi_pmi2_put("umpi.x", "v", 1) == UMPI_ERR_PMI &&
                  strstr(umpi_status_last_msg(), "rc=7: the fake refuses umpi.x-0") != NULL, "%s", umpi_status_last_msg());
            umpi_pmi2_finalize();
            pthread_join(t, NULL);
            free(node_of);
        }
        {
            struct fake f = { .size = 1, .mapping = "(vector,(0,1,1))", .hangup_after = 3 };
            pthread_t t = fake_start(&f, "0");
            void *v = NULL;
            size_t len;

            CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_OK, "init");
            CHECK(umpi_pmi2_get(0, "umpi.x", &v, &len) == UMPI_ERR_PMI &&
                  strstr(umpi_status_last_msg(), "connection closed") != NULL, "%s", umpi_status_last_msg());
            pthread_join(t, NULL);
            umpi_pmi2_finalize();
            free(node_of);
        }
        {
            struct fake f = { .size = 2, .mapping = "(vector,(0,1,1)" };
            pthread_t t = fake_start(&f, "0");

            CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_ERR_PMI &&
                  strstr(umpi_status_last_msg(), "PMI_process_mapping '(vector,(0,1,1)'") != NULL, "%s",
                  umpi_status_last_msg());
            pthread_join(t, NULL);
        }
        setenv("PMI_FD", "999", 1);
        unsetenv("PMI_RANK");
        CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_ERR_PMI && strstr(umpi_status_last_msg(), "PMI_RANK") != NULL,
              "%s", umpi_status_last_msg());
        setenv("PMI_RANK", "0", 1);
        CHECK(umpi_pmi2_init(&info, &node_of) == UMPI_ERR_PMI &&
              strstr(umpi_status_last_msg(), "PMI_FD='999' is not an open file descriptor") != NULL, "%s",
              umpi_status_last_msg());
        unsetenv("PMI_FD");
        unsetenv("PMI_RANK");
    }
}

/* ---- against mpiexec.hydra -------------------------------------------------------------------- */

/* Run by Hydra, 3 ranks on fake hosts ha,hb: rank r on node r % 2. */
static int live(void)
{
    struct umpi_pmi_info info;
    int *node_of = NULL;
    unsigned char mine[3000];
    int bad = 0;

    if (umpi_pmi2_init(&info, &node_of) != UMPI_OK) {
        printf("live: init failed: %s\n", umpi_status_last_msg());
        return 1;
    }
    for (size_t i = 0; i < sizeof(mine); i++)
        mine[i] = (unsigned char)(i * 13 + info.rank);
    bad |= info.size != 3 || info.node_id != info.rank % 2 || info.local_size != (info.rank % 2 ? 1 : 2);
    for (int r = 0; r < info.size; r++)
        bad |= node_of[r] != r % 2;
    bad |= umpi_pmi2_put("umpi.live", mine, sizeof(mine)) != UMPI_OK;
    bad |= umpi_pmi2_fence() != UMPI_OK;
    for (int r = 0; r < info.size && !bad; r++) {
        unsigned char *v = NULL;
        size_t len = 0;

        bad |= umpi_pmi2_get(r, "umpi.live", (void **)&v, &len) != UMPI_OK || len != sizeof(mine);
        for (size_t i = 0; !bad && i < len; i++)
            bad |= v[i] != (unsigned char)(i * 13 + r);
        free(v);
    }
    bad |= umpi_pmi2_fence() != UMPI_OK || umpi_pmi2_finalize() != UMPI_OK;
    printf("live: rank %d of %d, node %d, local %d of %d: %s\n", info.rank, info.size, info.node_id, info.local_rank,
           info.local_size, bad ? "FAIL" : "ok");
    free(node_of);
    return bad;
}

static void test_hydra(const char *self)
{
    static const char *const modes[][2] = { { "PMI_FD", NULL }, { "PMI_PORT", "-pmi-port" } };

    if (system("command -v mpiexec.hydra >/dev/null 2>&1") != 0) {
        printf("SKIP against mpiexec.hydra: not installed (Debian package mpich)\n");
        return;
    }
    for (size_t m = 0; m < UMPI_ARRAY_SIZE(modes); m++) {
        SECTION(modes[m][0]) {
            char cmd[4096 + 256];
            int st;

            snprintf(cmd, sizeof(cmd), "timeout 60 mpiexec.hydra %s -launcher fork -hosts ha,hb -n 3 %s --live",
                     modes[m][1] ? modes[m][1] : "", self);
            st = system(cmd);
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d", cmd, st);
        }
    }
}

int main(int argc, char **argv)
{
    char self[4096];
    ssize_t n;

    if (argc > 1 && strcmp(argv[1], "--live") == 0)
        return live();
    signal(SIGPIPE, SIG_IGN);
    alarm(120); /* a client that waits forever on a fake server must not hang the suite */
    test_mapping();
    test_values();
    test_client();
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        fflush(stdout);
        test_hydra(self);
    }
    return unit_done("test_pmi2");
}
