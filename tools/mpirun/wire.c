/* The tree's message encoding (wire.h has the layout). */
#include "wire.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(struct mpirun_wbuf *b, size_t more)
{
    size_t cap;
    char *p;

    if (b->oom || b->len + more <= b->cap)
        return;
    cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void mpirun_wbuf_bytes(struct mpirun_wbuf *b, const void *p, size_t len)
{
    reserve(b, len);
    if (b->oom || len == 0)
        return;
    memcpy(b->p + b->len, p, len);
    b->len += len;
}

void mpirun_wbuf_u8(struct mpirun_wbuf *b, uint8_t v)
{
    mpirun_wbuf_bytes(b, &v, 1);
}

void mpirun_wbuf_u32(struct mpirun_wbuf *b, uint32_t v)
{
    uint32_t n = htonl(v);

    mpirun_wbuf_bytes(b, &n, sizeof(n));
}

void mpirun_wbuf_str(struct mpirun_wbuf *b, const char *s)
{
    size_t len = s != NULL ? strlen(s) : 0;

    mpirun_wbuf_u32(b, (uint32_t)len);
    mpirun_wbuf_bytes(b, s, len);
}

void mpirun_wbuf_start(struct mpirun_wbuf *b, uint32_t type, uint32_t dest)
{
    memset(b, 0, sizeof(*b));
    mpirun_wbuf_u32(b, 0);
    mpirun_wbuf_u32(b, type);
    mpirun_wbuf_u32(b, dest);
}

int mpirun_wbuf_finish(struct mpirun_wbuf *b)
{
    uint32_t n;

    if (b->oom || b->len - MPIRUN_HDR_LEN > MPIRUN_MAX_MSG) {
        mpirun_wbuf_free(b);
        return -1;
    }
    n = htonl((uint32_t)(b->len - MPIRUN_HDR_LEN));
    memcpy(b->p, &n, sizeof(n));
    return 0;
}

void mpirun_wbuf_free(struct mpirun_wbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

void mpirun_wire_header(const char *p, uint32_t *len, uint32_t *type, uint32_t *dest)
{
    uint32_t v[3];

    memcpy(v, p, sizeof(v));
    *len = ntohl(v[0]);
    *type = ntohl(v[1]);
    *dest = ntohl(v[2]);
}

static const char *take(struct mpirun_rbuf *r, size_t n)
{
    const char *p;

    if (r->bad || r->len - r->off < n) {
        r->bad = 1;
        return NULL;
    }
    p = r->p + r->off;
    r->off += n;
    return p;
}

uint8_t mpirun_rbuf_u8(struct mpirun_rbuf *r)
{
    const char *p = take(r, 1);

    return p != NULL ? (uint8_t)p[0] : 0;
}

uint32_t mpirun_rbuf_u32(struct mpirun_rbuf *r)
{
    const char *p = take(r, 4);
    uint32_t v;

    if (p == NULL)
        return 0;
    memcpy(&v, p, 4);
    return ntohl(v);
}

char *mpirun_rbuf_str(struct mpirun_rbuf *r)
{
    uint32_t len = mpirun_rbuf_u32(r);
    const char *p = take(r, len);
    char *s;

    if (p == NULL)
        return NULL;
    s = strndup(p, len);
    if (s == NULL || strlen(s) != len) {
        /* out of memory, or a NUL inside: neither can be used */
        free(s);
        r->bad = 1;
        return NULL;
    }
    return s;
}

const char *mpirun_rbuf_rest(struct mpirun_rbuf *r, size_t *len)
{
    *len = r->bad ? 0 : r->len - r->off;
    return take(r, *len);
}

/* ---- the job description ---------------------------------------------------------------------- */

static int count(char **v)
{
    int n = 0;

    while (v != NULL && v[n] != NULL)
        n++;
    return n;
}

static void put_strv(struct mpirun_wbuf *b, char **v)
{
    int n = count(v);

    mpirun_wbuf_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++)
        mpirun_wbuf_str(b, v[i]);
}

static char **get_strv(struct mpirun_rbuf *r)
{
    uint32_t n = mpirun_rbuf_u32(r);
    char **v;

    /* every string takes at least its 4-byte length: a larger count is a lie */
    if (r->bad || n > (r->len - r->off) / 4) {
        r->bad = 1;
        return NULL;
    }
    v = calloc((size_t)n + 1, sizeof(char *));
    if (v == NULL) {
        r->bad = 1;
        return NULL;
    }
    for (uint32_t i = 0; i < n && !r->bad; i++)
        v[i] = mpirun_rbuf_str(r);
    return v;
}

static void free_strv(char **v)
{
    for (int i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

int mpirun_wire_launch_encode(struct mpirun_wbuf *b, const struct mpirun_launch_desc *d)
{
    mpirun_wbuf_start(b, MPIRUN_MSG_LAUNCH, MPIRUN_TO_ALL);
    mpirun_wbuf_u32(b, MPIRUN_WIRE_VERSION);
    mpirun_wbuf_str(b, d->nspace);
    mpirun_wbuf_u32(b, (uint32_t)d->np);
    mpirun_wbuf_u32(b, (uint32_t)d->mapping.policy);
    mpirun_wbuf_u32(b, (uint32_t)d->mapping.ppr);
    mpirun_wbuf_u32(b, (uint32_t)d->mapping.oversubscribe);
    mpirun_wbuf_u32(b, (uint32_t)d->hosts.n);
    for (int h = 0; h < d->hosts.n; h++) {
        mpirun_wbuf_str(b, d->hosts.hosts[h].name);
        mpirun_wbuf_u32(b, (uint32_t)d->hosts.hosts[h].slots);
        mpirun_wbuf_u32(b, (uint32_t)d->hosts.hosts[h].max_slots);
    }
    mpirun_wbuf_u32(b, (uint32_t)(d->head_node + 1));
    mpirun_wbuf_u32(b, (uint32_t)d->fanout);
    mpirun_wbuf_u32(b, (uint32_t)d->timeout_s);
    put_strv(b, d->agent);
    mpirun_wbuf_str(b, d->daemon_path);
    mpirun_wbuf_str(b, d->token);
    mpirun_wbuf_str(b, d->cwd);
    mpirun_wbuf_str(b, d->path);
    put_strv(b, d->argv);
    put_strv(b, d->env);
    put_strv(b, d->bind_args);
    return mpirun_wbuf_finish(b);
}

int mpirun_wire_launch_decode(const char *p, size_t len, struct mpirun_launch_desc *d, char *err,
                              size_t errlen)
{
    struct mpirun_rbuf r = { .p = p, .len = len };
    uint32_t version, nhosts;

    memset(d, 0, sizeof(*d));
    version = mpirun_rbuf_u32(&r);
    if (version != MPIRUN_WIRE_VERSION) {
        snprintf(err, errlen, "the head speaks version %u of the launch protocol, this daemon %d "
                 "(is the same umpi installed on every host?)", version, MPIRUN_WIRE_VERSION);
        return -1;
    }
    d->nspace = mpirun_rbuf_str(&r);
    d->np = (int)mpirun_rbuf_u32(&r);
    d->mapping.policy = (enum mpirun_map_policy)mpirun_rbuf_u32(&r);
    d->mapping.ppr = (int)mpirun_rbuf_u32(&r);
    d->mapping.oversubscribe = (int)mpirun_rbuf_u32(&r);
    nhosts = mpirun_rbuf_u32(&r);
    if (!r.bad && (nhosts < 1 || nhosts > MPIRUN_MAX_HOSTS || nhosts > (len - r.off) / 12))
        r.bad = 1;
    if (!r.bad && (d->hosts.hosts = calloc(nhosts, sizeof(struct mpirun_host))) == NULL)
        r.bad = 1;
    for (uint32_t h = 0; h < nhosts && !r.bad; h++) {
        d->hosts.hosts[h].name = mpirun_rbuf_str(&r);
        d->hosts.hosts[h].slots = (int)mpirun_rbuf_u32(&r);
        d->hosts.hosts[h].max_slots = (int)mpirun_rbuf_u32(&r);
        d->hosts.n = (int)h + 1;
    }
    d->head_node = (int)mpirun_rbuf_u32(&r) - 1;
    d->fanout = (int)mpirun_rbuf_u32(&r);
    d->timeout_s = (int)mpirun_rbuf_u32(&r);
    d->agent = get_strv(&r);
    d->daemon_path = mpirun_rbuf_str(&r);
    d->token = mpirun_rbuf_str(&r);
    d->cwd = mpirun_rbuf_str(&r);
    d->path = mpirun_rbuf_str(&r);
    d->argv = get_strv(&r);
    d->env = get_strv(&r);
    d->bind_args = get_strv(&r);
    if (!r.bad && (d->np < 1 || d->np > MPIRUN_MAX_RANKS || d->fanout < 1 ||
                   d->mapping.policy > MPIRUN_MAP_PPR || count(d->agent) < 1 ||
                   count(d->argv) < 1 || r.off != len))
        r.bad = 1;
    if (r.bad) {
        snprintf(err, errlen, "malformed job description from the head");
        mpirun_wire_launch_free(d);
        return -1;
    }
    return 0;
}

void mpirun_wire_launch_free(struct mpirun_launch_desc *d)
{
    free(d->nspace);
    mpirun_hosts_free(&d->hosts);
    free_strv(d->agent);
    free(d->daemon_path);
    free(d->token);
    free(d->cwd);
    free(d->path);
    free_strv(d->argv);
    free_strv(d->env);
    free_strv(d->bind_args);
    memset(d, 0, sizeof(*d));
}
