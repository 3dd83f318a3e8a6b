/*
 * PMI-2 formats that need no connection (umpi_pmi2.h): the process mapping, the value encoding
 * and splitting, and the parser of the server's messages.
 */
#include "pmi/umpi_pmi2.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void umpi__why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void umpi__why(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || whylen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}

/* ---- PMI_process_mapping ---------------------------------------------------------------------- */

/* Node ids, node counts and ranks per node above this are taken for garbage: no machine is near. */
#define UMPI__MAP_NUM_MAX (1 << 24)

struct umpi__block {
    int start, nodes, ppn;
};

static const char *umpi__skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Expects character c (after spaces); returns the position after it, or NULL. */
static const char *umpi__expect(const char *p, char c)
{
    p = umpi__skip_spaces(p);
    return *p == c ? p + 1 : NULL;
}

/* A decimal number in [lo, UMPI__MAP_NUM_MAX] (after spaces); returns the position after it, or NULL. */
static const char *umpi__number(const char *p, int lo, int *out)
{
    char *end;
    long v;

    p = umpi__skip_spaces(p);
    if (!isdigit((unsigned char)*p))
        return NULL;
    errno = 0;
    v = strtol(p, &end, 10);
    if (errno != 0 || v < lo || v > UMPI__MAP_NUM_MAX)
        return NULL;
    *out = (int)v;
    return end;
}

int umpi_pmi2_parse_mapping(const char *mapping, int size, int *node_of, char *why, size_t whylen)
{
    struct umpi__block *blocks = NULL;
    const char *p = umpi__skip_spaces(mapping);
    int nblocks = 0, cap = 0, rank = 0;

    if (*p == '\0')
        return 0;
    p = umpi__expect(p, '(');
    if (p != NULL) {
        p = umpi__skip_spaces(p);
        p = strncmp(p, "vector", 6) == 0 ? p + 6 : NULL;
    }
    if (p == NULL) {
        umpi__why(why, whylen, "PMI_process_mapping '%s' does not start with '(vector'", mapping);
        return -1;
    }
    for (;;) {
        const char *q = umpi__expect(p, ')');
        struct umpi__block b;

        if (q != NULL) { /* end of the vector */
            p = q;
            break;
        }
        q = umpi__expect(p, ',');
        if (q != NULL)
            q = umpi__expect(q, '(');
        if (q != NULL)
            q = umpi__number(q, 0, &b.start);
        if (q != NULL)
            q = umpi__expect(q, ',');
        if (q != NULL)
            q = umpi__number(q, 1, &b.nodes);
        if (q != NULL)
            q = umpi__expect(q, ',');
        if (q != NULL)
            q = umpi__number(q, 1, &b.ppn);
        if (q != NULL)
            q = umpi__expect(q, ')');
        if (q == NULL || b.start > UMPI__MAP_NUM_MAX - b.nodes) {
            umpi__why(why, whylen,
                      "PMI_process_mapping '%s': block %d at offset %d is not '(start,nodes,ranks per node)' "
                      "with nodes and ranks per node at least 1", mapping, nblocks + 1, (int)(p - mapping));
            free(blocks);
            return -1;
        }
        if (nblocks == cap) {
            struct umpi__block *nb;

            cap = cap ? 2 * cap : 8;
            nb = realloc(blocks, (size_t)cap * sizeof(*nb));
            if (nb == NULL) {
                umpi__why(why, whylen, "no memory for the %d blocks of PMI_process_mapping", cap);
                free(blocks);
                return -1;
            }
            blocks = nb;
        }
        blocks[nblocks++] = b;
        p = q;
    }
    p = umpi__skip_spaces(p);
    if (*p != '\0' || nblocks == 0) {
        umpi__why(why, whylen, "PMI_process_mapping '%s': %s", mapping,
                  nblocks == 0 ? "no blocks" : "text after the closing ')'");
        free(blocks);
        return -1;
    }
    /* Every block gives at least one rank, so each pass over the vector makes progress. */
    while (rank < size) {
        for (int i = 0; i < nblocks && rank < size; i++) {
            for (int n = 0; n < blocks[i].nodes && rank < size; n++) {
                for (int k = 0; k < blocks[i].ppn && rank < size; k++)
                    node_of[rank++] = blocks[i].start + n;
            }
        }
    }
    free(blocks);
    return 1;
}

void umpi_pmi2_local(const int *node_of, int size, int rank, int *local_rank, int *local_size)
{
    int before = 0, count = 0;

    for (int r = 0; r < size; r++) {
        if (node_of[r] != node_of[rank])
            continue;
        count++;
        if (r < rank)
            before++;
    }
    *local_rank = before;
    *local_size = count;
}

/* ---- values ------------------------------------------------------------------------------------ */

/* A part decodes on its own, and the first one fits one value with its "<nparts>." header. */
_Static_assert(UMPI_PMI2_PART_CHARS % 4 == 0, "a part must hold whole groups of 4 characters");
_Static_assert(UMPI_PMI2_PART_CHARS + sizeof("99999.") - 1 <= UMPI_PMI2_VALUE_MAX && UMPI_PMI2_MAX_PARTS <= 99999,
               "the first part and its header must fit one PMI-2 value");

static const char umpi__b64[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t umpi_pmi2_encoded_len(size_t n)
{
    return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

void umpi_pmi2_encode(const void *src, size_t n, char *dst)
{
    const unsigned char *s = src;
    size_t i = 0;

    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *dst++ = umpi__b64[v >> 18];
        *dst++ = umpi__b64[v >> 12 & 63];
        *dst++ = umpi__b64[v >> 6 & 63];
        *dst++ = umpi__b64[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        *dst++ = umpi__b64[v >> 18];
        *dst++ = umpi__b64[v >> 12 & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        *dst++ = umpi__b64[v >> 18];
        *dst++ = umpi__b64[v >> 12 & 63];
        *dst++ = umpi__b64[v >> 6 & 63];
    }
    *dst = '\0';
}

static int umpi__b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

long umpi_pmi2_decode(const char *src, size_t n, void *dst)
{
    unsigned char *d = dst;
    uint32_t v = 0;
    size_t bits = 0;
    long out = 0;

    if (n % 4 == 1) /* 6 bits cannot end a byte */
        return -1;
    for (size_t i = 0; i < n; i++) {
        int c = umpi__b64_value(src[i]);

        if (c < 0)
            return -1;
        v = v << 6 | (uint32_t)c;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            d[out++] = (unsigned char)(v >> bits);
            v &= (1u << bits) - 1;
        }
    }
    return out;
}

int umpi_pmi2_nparts(size_t nbytes)
{
    size_t chars = umpi_pmi2_encoded_len(nbytes);
    size_t parts = chars == 0 ? 1 : (chars + UMPI_PMI2_PART_CHARS - 1) / UMPI_PMI2_PART_CHARS;

    return parts > UMPI_PMI2_MAX_PARTS ? -1 : (int)parts;
}

int umpi_pmi2_part_key(char *buf, size_t len, const char *key, int rank, int part)
{
    int n = part == 0 ? snprintf(buf, len, "%s-%d", key, rank) : snprintf(buf, len, "%s-%d-%d", key, rank, part);

    return n < 0 || (size_t)n >= len || n > UMPI_PMI2_KEY_MAX ? -1 : 0;
}

/* ---- wire messages ----------------------------------------------------------------------------- */

int umpi_pmi2_msg_parse(char *buf, struct umpi_pmi2_msg *m, char *why, size_t whylen)
{
    char *p = buf;

    m->cmd = NULL;
    m->npairs = 0;
    if (strncmp(p, "cmd=", 4) != 0) {
        umpi__why(why, whylen, "message does not start with 'cmd=': '%.80s'", buf);
        return -1;
    }
    while (*p != '\0') {
        char *eq = strchr(p, '='), *end;

        if (eq == NULL) { /* a trailing token without '=' (some servers end with a space) */
            while (*p == ' ')
                p++;
            if (*p == '\0')
                break;
            umpi__why(why, whylen, "no '=' after '%.40s' in '%.80s'", p, buf);
            return -1;
        }
        end = strchr(eq + 1, ';');
        *eq = '\0';
        if (end != NULL)
            *end = '\0';
        if (m->cmd == NULL) {
            m->cmd = eq + 1;
        } else if (m->npairs == UMPI_PMI2_MAX_PAIRS) {
            umpi__why(why, whylen, "more than %d fields in a message", UMPI_PMI2_MAX_PAIRS);
            return -1;
        } else {
            m->key[m->npairs] = p;
            m->val[m->npairs++] = eq + 1;
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}

const char *umpi_pmi2_msg_get(const struct umpi_pmi2_msg *m, const char *key)
{
    for (int i = 0; i < m->npairs; i++) {
        if (strcmp(m->key[i], key) == 0)
            return m->val[i];
    }
    return NULL;
}
