/* CPU sets as bytes and their compact PMI form (umpi_cpuset.h). */
#include "api/umpi_cpuset.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* The most CPUs a set may name: what the affinity probe below goes up to. */
#define UMPI__CPUSET_MAX_CPUS (1 << 20)
#define UMPI__CPUSET_MAX_BYTES (UMPI__CPUSET_MAX_CPUS / 8)

int umpi_cpuset_own(unsigned char **set, size_t *len)
{
    *set = NULL;
    *len = 0;
    /* Sized for the CPUs this machine may have, not glibc's fixed 1024: EINVAL means too small. */
    for (int ncpu = CPU_SETSIZE; ncpu <= UMPI__CPUSET_MAX_CPUS; ncpu *= 2) {
        size_t size = CPU_ALLOC_SIZE(ncpu);
        cpu_set_t *cs = CPU_ALLOC(ncpu);
        unsigned char *bytes;

        if (cs == NULL)
            return -1;
        if (sched_getaffinity(0, size, cs) != 0) {
            int err = errno;

            CPU_FREE(cs);
            if (err == EINVAL)
                continue;
            errno = err;
            return -1;
        }
        bytes = calloc((size_t) ncpu / 8, 1);
        if (bytes == NULL) {
            CPU_FREE(cs);
            return -1;
        }
        for (int c = 0; c < ncpu; c++) {
            if (CPU_ISSET_S(c, size, cs))
                bytes[c / 8] |= (unsigned char) (1u << (c % 8));
        }
        CPU_FREE(cs);
        *set = bytes;
        *len = (size_t) ncpu / 8;
        return 0;
    }
    errno = EINVAL;
    return -1;
}

int umpi_cpuset_count(const unsigned char *set, size_t len)
{
    int n = 0;

    for (size_t i = 0; i < len; i++)
        n += __builtin_popcount(set[i]);
    return n;
}

unsigned char *umpi_cpuset_encode(const unsigned char *set, size_t len, size_t *outlen)
{
    size_t first = 0, end = len;
    unsigned char *out;

    while (first < len && set[first] == 0)
        first++;
    while (end > first && set[end - 1] == 0)
        end--;
    if (first == end)
        first = end = 0;
    *outlen = UMPI_CPUSET_HDR + (end - first);
    out = malloc(*outlen);
    if (out == NULL)
        return NULL;
    for (int b = 0; b < UMPI_CPUSET_HDR; b++)
        out[b] = (unsigned char) ((uint32_t) first >> (8 * b));
    memcpy(out + UMPI_CPUSET_HDR, set + first, end - first);
    return out;
}

int umpi_cpuset_merge(unsigned char **acc, size_t *acclen, const void *value, size_t len)
{
    const unsigned char *v = value;
    uint32_t first = 0;
    size_t n, need;

    if (len < UMPI_CPUSET_HDR)
        return -1;
    for (int b = 0; b < UMPI_CPUSET_HDR; b++)
        first |= (uint32_t) v[b] << (8 * b);
    n = len - UMPI_CPUSET_HDR;
    if (first > UMPI__CPUSET_MAX_BYTES || n > UMPI__CPUSET_MAX_BYTES - first)
        return -1;
    need = (size_t) first + n;
    if (need > *acclen) {
        unsigned char *grown = realloc(*acc, need);

        if (grown == NULL)
            return -2;
        memset(grown + *acclen, 0, need - *acclen);
        *acc = grown;
        *acclen = need;
    }
    for (size_t i = 0; i < n; i++)
        (*acc)[first + i] |= v[UMPI_CPUSET_HDR + i];
    return 0;
}
