/*
 * CPU sets as bytes, for telling the ranks of a node which CPUs each may run on (node_cpus.c: the
 * node's usable CPUs are the union of its ranks' affinity masks).
 *
 * A set is an array of bytes, CPU i being bit i % 8 of byte i / 8. On the wire (a PMI value) it
 * travels compactly, without its leading and trailing zero bytes:
 *
 *    0                4
 *    +----------------+--------------------------------------+
 *    | first (u32 LE) | bytes first .. last nonzero byte      |
 *    +----------------+--------------------------------------+
 *
 * so a rank bound to one core sends 5 bytes whatever the CPU's number, an unbound rank on a
 * 64-CPU node 12. An empty set is just the 4-byte header (first = 0).
 */
#ifndef UMPI_CPUSET_H
#define UMPI_CPUSET_H

#include <stddef.h>
#include <stdint.h>

#define UMPI_CPUSET_HDR 4
_Static_assert(UMPI_CPUSET_HDR == sizeof(uint32_t), "the header is one u32");

/* This process's affinity mask (sched_getaffinity, sized for the machine): a malloc'ed byte set in
 * *set of *len bytes. 0, or -1 (errno set; *set NULL). */
int umpi_cpuset_own(unsigned char **set, size_t *len);

/* Number of CPUs in a set. */
int umpi_cpuset_count(const unsigned char *set, size_t len);

/* The compact form of a set: a malloc'ed value of *outlen bytes, or NULL when out of memory. */
unsigned char *umpi_cpuset_encode(const unsigned char *set, size_t len, size_t *outlen);

/* ORs a compact value into the set *acc of *acclen bytes (grown, realloc'ed, as needed).
 * 0, -1 for a malformed value (nothing changed), -2 out of memory. */
int umpi_cpuset_merge(unsigned char **acc, size_t *acclen, const void *value, size_t len);

#endif
