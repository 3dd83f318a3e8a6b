/*
 * PMI-2 client (umpi_pmi_impl.h), for `srun --mpi=pmi2` (Slurm's mpi/pmi2 plugin) and Hydra-style
 * launchers (mpiexec.hydra). It speaks the wire protocol itself; no libpmi2 is linked.
 *
 * The launcher hands each process a connected socket in PMI_FD (or a "host:port" in PMI_PORT to
 * connect to) and its rank in PMI_RANK (PMI_ID with PMI_PORT). Then:
 *
 *   client                                          server
 *   "cmd=init pmi_version=2 pmi_subversion=0\n"  -> (PMI-1 syntax: one line; negotiates the version)
 *                                                <- "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"
 *   from here every message is a 6-character decimal length, then "cmd=<name>;key=value;...;":
 *   "    38cmd=fullinit;pmirank=3;threaded=FALSE;" -> "...cmd=fullinit-response;rc=0;rank=3;size=8;appnum=0;..."
 *   "cmd=info-getjobattr;key=PMI_process_mapping;"  -> "...found=TRUE;value=(vector,(0,2,4));"
 *   "cmd=kvs-put;key=K;value=V;" ... "cmd=kvs-fence;" ... "cmd=kvs-get;srcid=R;key=K;" -> "...found=TRUE;value=V;"
 *   "cmd=abort;isworld=TRUE;..." (no reply)          "cmd=finalize;" -> "cmd=finalize-response;rc=0;"
 *
 * Replies are read as the protocol defines them, not as one server writes them: the length may be
 * padded on either side (Slurm "%-6d", Hydra "%6u"), fields come in any order, rc may be absent.
 * Values are size-limited and taboo for ';': umpi_pmi2.h says how binary values are encoded and split.
 * Requests are serialised by a mutex (the server sees one at a time, hence threaded=FALSE).
 */
#include "pmi/umpi_pmi2.h"
#include "pmi/umpi_pmi_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* Longest request: "cmd=kvs-put;key=<63>;value=<1023>;" with room to spare. */
#define UMPI__REQ_MAX 2048
#define UMPI__WHY_MAX 256
/* The key under which each rank publishes its hostname when the server gives no process mapping. */
#define UMPI__HOST_KEY "umpi.host"

static struct {
    int fd;
    int rank, size;
    pthread_mutex_t lock;
} umpi__pmi2 = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- socket ----------------------------------------------------------------------------------- */

static umpi_status_t umpi__io_error(const char *what)
{
    umpi_status_msg("PMI-2: %s the process manager (fd %d) failed: %s", what, umpi__pmi2.fd,
                    errno ? strerror(errno) : "connection closed");
    return UMPI_ERR_PMI;
}

static umpi_status_t umpi__write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(umpi__pmi2.fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return umpi__io_error("writing to");
        buf += n;
        len -= (size_t)n;
    }
    return UMPI_OK;
}

static umpi_status_t umpi__read_all(char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(umpi__pmi2.fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            return umpi__io_error("reading from");
        }
        buf += n;
        len -= (size_t)n;
    }
    return UMPI_OK;
}

/* The socket PMI_FD names, or a connection to PMI_PORT ("host:port"). These variables are the
 * launcher's protocol, not umpi knobs, hence read here. */
static umpi_status_t umpi__connect(void)
{
    const char *fdstr = getenv("PMI_FD"), *port = getenv("PMI_PORT");
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    char host[256];
    const char *colon;
    int rc, fd = -1;

    if (fdstr != NULL && *fdstr != '\0') {
        char *end;
        long v = strtol(fdstr, &end, 10);

        if (*end != '\0' || v < 0 || v > 1 << 20 || fcntl((int)v, F_GETFD) < 0) {
            umpi_status_msg("PMI_FD='%s' is not an open file descriptor", fdstr);
            return UMPI_ERR_PMI;
        }
        umpi__pmi2.fd = (int)v;
        /* Programs the rank starts must not inherit the connection. */
        fcntl(umpi__pmi2.fd, F_SETFD, FD_CLOEXEC);
        return UMPI_OK;
    }
    colon = port != NULL ? strrchr(port, ':') : NULL;
    if (colon == NULL || colon == port || (size_t)(colon - port) >= sizeof(host) || colon[1] == '\0') {
        umpi_status_msg("neither PMI_FD nor a PMI_PORT of the form host:port ('%s') is set",
                        port ? port : "");
        return UMPI_ERR_PMI;
    }
    memcpy(host, port, (size_t)(colon - port));
    host[colon - port] = '\0';
    rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        umpi_status_msg("PMI_PORT='%s': %s", port, gai_strerror(rc));
        return UMPI_ERR_PMI;
    }
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        umpi_status_msg("PMI_PORT='%s': cannot connect: %s", port, strerror(errno));
        return UMPI_ERR_PMI;
    }
    umpi__pmi2.fd = fd;
    return UMPI_OK;
}

/* ---- messages --------------------------------------------------------------------------------- */

/*
 * Sends one request and reads its reply, which must be cmd=<expect> with rc 0 (or no rc).
 * *reply is malloc'ed and holds the strings of m; the caller frees it. Holds the lock throughout, so
 * that replies meet their requests.
 */
static umpi_status_t umpi__call(const char *req, const char *expect, char **reply, struct umpi_pmi2_msg *m)
{
    size_t len = strlen(req);
    char head[7], why[UMPI__WHY_MAX], *buf = NULL, *end;
    const char *rc;
    long n;
    umpi_status_t st;

    *reply = NULL;
    if (len > 999999) {
        umpi_status_msg("PMI-2 request of %zu bytes exceeds the 6-digit length field", len);
        return UMPI_ERR_INTERN;
    }
    snprintf(head, sizeof(head), "%6zu", len);
    pthread_mutex_lock(&umpi__pmi2.lock);
    st = umpi__write_all(head, 6);
    if (st == UMPI_OK)
        st = umpi__write_all(req, len);
    if (st == UMPI_OK)
        st = umpi__read_all(head, 6);
    if (st != UMPI_OK)
        goto out;
    head[6] = '\0';
    n = strtol(head, &end, 10);
    while (*end == ' ')
        end++;
    if (*end != '\0' || n <= 0) {
        umpi_status_msg("PMI-2: the reply to '%.40s' has no valid length ('%s')", req, head);
        st = UMPI_ERR_PMI;
        goto out;
    }
    buf = malloc((size_t)n + 1);
    if (buf == NULL) {
        umpi_status_msg("no memory for a PMI-2 reply of %ld bytes", n);
        st = UMPI_ERR_NOMEM;
        goto out;
    }
    st = umpi__read_all(buf, (size_t)n);
    if (st != UMPI_OK)
        goto out;
    buf[n] = '\0';
    umpi_debug(3, "pmi2: '%s' -> '%s'", req, buf);
    if (umpi_pmi2_msg_parse(buf, m, why, sizeof(why)) != 0) {
        umpi_status_msg("PMI-2: malformed reply to '%.40s': %s", req, why);
        st = UMPI_ERR_PMI;
        goto out;
    }
    if (strcmp(m->cmd, expect) != 0) {
        umpi_status_msg("PMI-2: expected %s, the process manager answered %s", expect, m->cmd);
        st = UMPI_ERR_PMI;
        goto out;
    }
    rc = umpi_pmi2_msg_get(m, "rc");
    if (rc != NULL && strcmp(rc, "0") != 0) {
        const char *msg = umpi_pmi2_msg_get(m, "errmsg");

        umpi_status_msg("PMI-2: %s failed with rc=%s%s%s", expect, rc, msg ? ": " : "", msg ? msg : "");
        st = UMPI_ERR_PMI;
        goto out;
    }
out:
    pthread_mutex_unlock(&umpi__pmi2.lock);
    if (st != UMPI_OK)
        free(buf);
    else
        *reply = buf;
    return st;
}

/* A numeric field of a reply. */
static umpi_status_t umpi__field_int(const struct umpi_pmi2_msg *m, const char *key, int *out)
{
    const char *v = umpi_pmi2_msg_get(m, key);
    char *end;
    long n;

    if (v == NULL) {
        umpi_status_msg("PMI-2: %s has no field '%s'", m->cmd, key);
        return UMPI_ERR_PMI;
    }
    n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < -1 || n > 1 << 30) {
        umpi_status_msg("PMI-2: %s has %s='%s', not a number", m->cmd, key, v);
        return UMPI_ERR_PMI;
    }
    *out = (int)n;
    return UMPI_OK;
}

/* The version handshake, in PMI-1 syntax: one line each way. */
static umpi_status_t umpi__handshake(void)
{
    static const char hello[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    char line[256];
    size_t len = 0;
    int version = -1, rc = 0, ok = 0;
    umpi_status_t st = umpi__write_all(hello, sizeof(hello) - 1);

    /* One byte at a time: nothing after the newline is ours to take. */
    while (st == UMPI_OK && len < sizeof(line) - 1) {
        st = umpi__read_all(&line[len], 1);
        if (st == UMPI_OK && line[len++] == '\n')
            break;
    }
    if (st != UMPI_OK)
        return st;
    line[len] = '\0';
    if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
    for (char *save = NULL, *tok = strtok_r(line, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
        if (strcmp(tok, "cmd=response_to_init") == 0)
            ok = 1;
        else if (strncmp(tok, "pmi_version=", 12) == 0)
            version = atoi(tok + 12);
        else if (strncmp(tok, "rc=", 3) == 0)
            rc = atoi(tok + 3);
    }
    if (!ok || rc != 0 || version != 2) {
        umpi_status_msg("the process manager does not speak PMI-2 (its answer to 'cmd=init pmi_version=2': "
                        "pmi_version=%d rc=%d%s); umpi needs PMI-2 or PMIx", version, rc,
                        ok ? "" : ", not a response_to_init");
        return UMPI_ERR_PMI;
    }
    return UMPI_OK;
}

/* A job attribute: 1 and a malloc'ed *value when the server has it, 0 when not. */
static int umpi__job_attr(const char *key, char **value, umpi_status_t *st)
{
    char req[UMPI__REQ_MAX], *reply;
    struct umpi_pmi2_msg m;
    const char *found, *v;

    snprintf(req, sizeof(req), "cmd=info-getjobattr;key=%s;", key);
    *st = umpi__call(req, "info-getjobattr-response", &reply, &m);
    if (*st != UMPI_OK)
        return 0;
    found = umpi_pmi2_msg_get(&m, "found");
    v = umpi_pmi2_msg_get(&m, "value");
    if (found == NULL || strcasecmp(found, "TRUE") != 0 || v == NULL) {
        free(reply);
        return 0;
    }
    *value = strdup(v);
    free(reply);
    if (*value == NULL) {
        umpi_status_msg("no memory for the job attribute %s", key);
        *st = UMPI_ERR_NOMEM;
        return 0;
    }
    return 1;
}

/* ---- node map --------------------------------------------------------------------------------- */

/* Without PMI_process_mapping: every rank publishes its hostname, and a node's id is the rank order
 * of its first appearance (the same on every process). One more fence, only on such servers. */
static umpi_status_t umpi__nodes_by_hostname(int *node_of)
{
    char host[256];
    char **name = calloc((size_t)umpi__pmi2.size, sizeof(*name));
    umpi_status_t st = UMPI_OK;

    if (name == NULL) {
        umpi_status_msg("no memory for %d hostnames", umpi__pmi2.size);
        return UMPI_ERR_NOMEM;
    }
    if (gethostname(host, sizeof(host)) != 0)
        umpi_strlcpy(host, "localhost", sizeof(host));
    host[sizeof(host) - 1] = '\0';
    st = umpi_pmi2_put(UMPI__HOST_KEY, host, strlen(host) + 1);
    if (st == UMPI_OK)
        st = umpi_pmi2_fence();
    for (int r = 0; st == UMPI_OK && r < umpi__pmi2.size; r++) {
        size_t len = 0;
        int k = 0;

        st = umpi_pmi2_get(r, UMPI__HOST_KEY, (void **)&name[r], &len);
        if (st != UMPI_OK)
            break;
        if (len == 0 || name[r][len - 1] != '\0') {
            umpi_status_msg("PMI-2: the hostname rank %d published is not a string", r);
            st = UMPI_ERR_PMI;
            break;
        }
        while (strcmp(name[k], name[r]) != 0)
            k++;
        node_of[r] = k == r ? r : node_of[k];
    }
    for (int r = 0; r < umpi__pmi2.size; r++)
        free(name[r]);
    free(name);
    return st;
}

static umpi_status_t umpi__node_map(int **out)
{
    char *mapping = NULL, why[UMPI__WHY_MAX];
    int *node_of = malloc((size_t)umpi__pmi2.size * sizeof(int));
    umpi_status_t st = UMPI_OK;
    int got = 0;

    if (node_of == NULL) {
        umpi_status_msg("no memory for the node map of %d ranks", umpi__pmi2.size);
        return UMPI_ERR_NOMEM;
    }
    if (umpi__job_attr("PMI_process_mapping", &mapping, &st)) {
        got = umpi_pmi2_parse_mapping(mapping, umpi__pmi2.size, node_of, why, sizeof(why));
        if (got < 0) {
            umpi_status_msg("%s", why);
            st = UMPI_ERR_PMI;
        } else {
            umpi_debug(1, "pmi2: PMI_process_mapping %s%s", mapping,
                       got ? "" : " (empty: node of every rank from the hostnames)");
        }
        free(mapping);
    } else if (st == UMPI_OK) {
        umpi_debug(1, "pmi2: no PMI_process_mapping: node of every rank from the hostnames");
    }
    if (st == UMPI_OK && got == 0)
        st = umpi__nodes_by_hostname(node_of);
    if (st != UMPI_OK) {
        free(node_of);
        return st;
    }
    *out = node_of;
    return UMPI_OK;
}

/* ---- the interface ---------------------------------------------------------------------------- */

umpi_status_t umpi_pmi2_init(struct umpi_pmi_info *info, int **node_of)
{
    const char *id = getenv("PMI_RANK"), *jobid = getenv("PMI_JOBID");
    char req[UMPI__REQ_MAX], *reply = NULL, *universe = NULL;
    struct umpi_pmi2_msg m;
    umpi_status_t st;
    int len;

    if (id == NULL || *id == '\0')
        id = getenv("PMI_ID");
    if (id == NULL || *id == '\0' || strspn(id, "0123456789") != strlen(id) || strlen(id) > 9) {
        umpi_status_msg("PMI-2: the launcher gave no rank (PMI_RANK or PMI_ID='%s')", id ? id : "");
        return UMPI_ERR_PMI;
    }
    st = umpi__connect();
    if (st == UMPI_OK)
        st = umpi__handshake();
    if (st != UMPI_OK)
        goto fail;

    /* Slurm requires pmijobid (the PMI_JOBID it set) and threaded; Hydra sets no PMI_JOBID. */
    len = snprintf(req, sizeof(req), "cmd=fullinit;pmirank=%s;threaded=FALSE;", id);
    if (jobid != NULL && strchr(jobid, ';') == NULL)
        snprintf(req + len, sizeof(req) - (size_t)len, "pmijobid=%.200s;", jobid);
    st = umpi__call(req, "fullinit-response", &reply, &m);
    if (st != UMPI_OK)
        goto fail;
    *info = (struct umpi_pmi_info){ .appnum = -1 };
    st = umpi__field_int(&m, "rank", &info->rank);
    if (st == UMPI_OK)
        st = umpi__field_int(&m, "size", &info->size);
    /* appnum -1 (Slurm) means unknown: MPI_APPNUM is then absent. */
    if (st == UMPI_OK && umpi_pmi2_msg_get(&m, "appnum") != NULL)
        st = umpi__field_int(&m, "appnum", &info->appnum);
    free(reply);
    if (st != UMPI_OK)
        goto fail;
    if (info->size < 1 || info->rank < 0 || info->rank >= info->size) {
        umpi_status_msg("PMI-2 reports rank %d in a job of size %d", info->rank, info->size);
        st = UMPI_ERR_PMI;
        goto fail;
    }
    umpi__pmi2.rank = info->rank;
    umpi__pmi2.size = info->size;

    info->universe_size = info->size;
    if (umpi__job_attr("universeSize", &universe, &st)) {
        int u = atoi(universe);

        info->universe_size = u > info->size ? u : info->size;
        free(universe);
    }
    if (st == UMPI_OK)
        st = umpi__node_map(node_of);
    if (st != UMPI_OK)
        goto fail;
    info->node_id = (*node_of)[info->rank];
    umpi_pmi2_local(*node_of, info->size, info->rank, &info->local_rank, &info->local_size);
    return UMPI_OK;

fail:
    if (umpi__pmi2.fd >= 0)
        close(umpi__pmi2.fd);
    umpi__pmi2.fd = -1;
    return st;
}

/* Keys travel verbatim inside "key=...;": they keep to characters no server treats specially. */
static umpi_status_t umpi__check_key(const char *key)
{
    if (key[0] == '\0' || strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(key)) {
        umpi_status_msg("PMI key '%s' has characters other than letters, digits, '.', '_' and '-'", key);
        return UMPI_ERR_INTERN;
    }
    return UMPI_OK;
}

umpi_status_t umpi_pmi2_put(const char *key, const void *value, size_t len)
{
    int nparts = umpi_pmi2_nparts(len);
    size_t chars = umpi_pmi2_encoded_len(len);
    char *text = NULL, *reply, pkey[UMPI_PMI2_KEY_MAX + 1], req[UMPI__REQ_MAX];
    struct umpi_pmi2_msg m;
    umpi_status_t st = umpi__check_key(key);

    if (st != UMPI_OK)
        return st;
    if (nparts < 0 || umpi_pmi2_part_key(pkey, sizeof(pkey), key, umpi__pmi2.size - 1, nparts - 1) != 0) {
        umpi_status_msg("PMI-2: key '%s' with a value of %zu bytes does not fit the limits of %d-character keys "
                        "and %d parts", key, len, UMPI_PMI2_KEY_MAX, UMPI_PMI2_MAX_PARTS);
        return UMPI_ERR_INTERN;
    }
    text = malloc(chars + 1);
    if (text == NULL) {
        umpi_status_msg("no memory to encode PMI key '%s' (%zu bytes)", key, len);
        return UMPI_ERR_NOMEM;
    }
    umpi_pmi2_encode(value, len, text);
    for (int p = 0; st == UMPI_OK && p < nparts; p++) {
        size_t off = (size_t)p * UMPI_PMI2_PART_CHARS;
        int n = (int)(chars - off < UMPI_PMI2_PART_CHARS ? chars - off : UMPI_PMI2_PART_CHARS);

        umpi_pmi2_part_key(pkey, sizeof(pkey), key, umpi__pmi2.rank, p);
        if (p == 0)
            snprintf(req, sizeof(req), "cmd=kvs-put;key=%s;value=%d.%.*s;", pkey, nparts, n, text + off);
        else
            snprintf(req, sizeof(req), "cmd=kvs-put;key=%s;value=%.*s;", pkey, n, text + off);
        st = umpi__call(req, "kvs-put-response", &reply, &m);
        free(reply);
    }
    if (st == UMPI_OK && nparts > 1)
        umpi_debug(2, "pmi2: put '%s': %zu bytes in %d parts", key, len, nparts);
    free(text);
    return st;
}

umpi_status_t umpi_pmi2_fence(void)
{
    char *reply;
    struct umpi_pmi2_msg m;
    umpi_status_t st = umpi__call("cmd=kvs-fence;", "kvs-fence-response", &reply, &m);

    free(reply);
    return st;
}

/* One part: its text appended to *text (grown as needed). */
static umpi_status_t umpi__get_part(int rank, const char *key, int part, char **text, size_t *chars, int *nparts)
{
    char pkey[UMPI_PMI2_KEY_MAX + 1], req[UMPI__REQ_MAX], *reply, *grown, *end;
    struct umpi_pmi2_msg m;
    const char *found, *v;
    size_t n;
    umpi_status_t st;

    if (umpi_pmi2_part_key(pkey, sizeof(pkey), key, rank, part) != 0) {
        umpi_status_msg("PMI-2: key '%s' of rank %d is too long", key, rank);
        return UMPI_ERR_INTERN;
    }
    snprintf(req, sizeof(req), "cmd=kvs-get;srcid=%d;key=%s;", rank, pkey);
    st = umpi__call(req, "kvs-get-response", &reply, &m);
    if (st != UMPI_OK)
        return st;
    found = umpi_pmi2_msg_get(&m, "found");
    v = umpi_pmi2_msg_get(&m, "value");
    if (found == NULL || strcasecmp(found, "TRUE") != 0 || v == NULL) {
        /* After kvs-fence the server holds every rank's puts (Slurm's and Hydra's fences gather
         * them on every node), so its "no" is final, as the PMIx server's is (pmix.c). */
        char answer[48];

        if (found != NULL && strcasecmp(found, "TRUE") == 0)
            snprintf(answer, sizeof(answer), "found=%s without a value", found);
        else
            snprintf(answer, sizeof(answer), "found=%.16s", found != NULL ? found : "(missing)");
        if (part == 0)
            umpi_status_msg("rank %d published no key '%s' (PMI-2 kvs-get of '%s': the server answers %s)", rank,
                            key, pkey, answer);
        else
            umpi_status_msg("PMI-2: part %d of key '%s' of rank %d is missing (kvs-get of '%s': %s)", part, key,
                            rank, pkey, answer);
        free(reply);
        return part ? UMPI_ERR_PMI : UMPI_ERR_NOT_FOUND;
    }
    if (part == 0) { /* "<nparts>.<text>" */
        long np = strtol(v, &end, 10);

        if (end == v || *end != '.' || np < 1 || np > UMPI_PMI2_MAX_PARTS) {
            umpi_status_msg("PMI-2: the value of key '%s' of rank %d was not written by umpi ('%.20s')", pkey, rank, v);
            free(reply);
            return UMPI_ERR_PMI;
        }
        *nparts = (int)np;
        v = end + 1;
    }
    n = strlen(v);
    grown = realloc(*text, *chars + n + 1);
    if (grown == NULL) {
        umpi_status_msg("no memory for PMI key '%s' of rank %d", key, rank);
        free(reply);
        return UMPI_ERR_NOMEM;
    }
    memcpy(grown + *chars, v, n + 1);
    *text = grown;
    *chars += n;
    free(reply);
    return UMPI_OK;
}

umpi_status_t umpi_pmi2_get(int rank, const char *key, void **value, size_t *len)
{
    char *text = NULL;
    size_t chars = 0;
    int nparts = 1;
    long n;
    umpi_status_t st = umpi__check_key(key);

    for (int p = 0; st == UMPI_OK && p < nparts; p++)
        st = umpi__get_part(rank, key, p, &text, &chars, &nparts);
    if (st != UMPI_OK) {
        free(text);
        return st;
    }
    *value = malloc(chars / 4 * 3 + 3);
    if (*value == NULL) {
        free(text);
        umpi_status_msg("no memory for PMI key '%s' of rank %d", key, rank);
        return UMPI_ERR_NOMEM;
    }
    n = umpi_pmi2_decode(text, chars, *value);
    free(text);
    if (n < 0) {
        free(*value);
        *value = NULL;
        umpi_status_msg("PMI-2: the value of key '%s' of rank %d is damaged (not umpi's encoding)", key, rank);
        return UMPI_ERR_PMI;
    }
    *len = (size_t)n;
    return UMPI_OK;
}

void umpi_pmi2_abort(int code, const char *msg)
{
    char req[UMPI__REQ_MAX], text[400];
    size_t i = 0;
    int len;

    /* Neither Slurm nor Hydra prints the message of a PMI-2 abort: the rank says it itself, and
     * gives the launcher's output forwarding a moment to pass it on before the job is killed (a
     * launcher that reads the abort first kills the rank with the line still in its pipe). */
    if (msg != NULL && msg[0] != '\0') {
        fprintf(stderr, "%s\n", msg);
        fflush(stderr);
        usleep(100 * 1000);
    }
    /* Another thread in the middle of a request owns the socket: the exit status alone must do. */
    if (umpi__pmi2.fd < 0 || pthread_mutex_trylock(&umpi__pmi2.lock) != 0)
        return;
    for (; msg != NULL && msg[i] != '\0' && i < sizeof(text) - 1; i++)
        text[i] = msg[i] == ';' || (unsigned char)msg[i] < ' ' ? ' ' : msg[i];
    text[i] = '\0';
    /* The fields of the protocol's two generations: isworld/msg (Slurm) and exitcode/message. */
    len = snprintf(req + 6, sizeof(req) - 6, "cmd=abort;isworld=TRUE;exitcode=%d;message=%s;msg=%s;", code, text, text);
    if (len > 0 && (size_t)len < sizeof(req) - 6) {
        char head[7];

        snprintf(head, sizeof(head), "%6d", len);
        memcpy(req, head, 6);
        umpi__write_all(req, 6 + (size_t)len);
    }
    pthread_mutex_unlock(&umpi__pmi2.lock);
}

umpi_status_t umpi_pmi2_finalize(void)
{
    char *reply = NULL;
    struct umpi_pmi2_msg m;
    umpi_status_t st = umpi__call("cmd=finalize;", "finalize-response", &reply, &m);

    free(reply);
    close(umpi__pmi2.fd);
    umpi__pmi2.fd = -1;
    return st;
}
