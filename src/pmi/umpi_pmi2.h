/*
 * PMI-2 pieces that need no connection (pmi2_format.c), so that the unit tests can check them
 * alone: the PMI_process_mapping parser, the value encoding and the wire message parser.
 *
 * Limits of the protocol that the client must respect. PMI-2 has no "get_maxes" query; the sizes
 * below are the de-facto standard (PMI2_MAX_KEYLEN / PMI2_MAX_VALLEN in MPICH's pmi2.h, copied by
 * Slurm's mpi/pmi2 plugin and by Hydra), both counting the terminating NUL. Hydra keeps a value in a
 * fixed array of that size and silently cuts a longer one (checked with mpiexec.hydra 4.0.2), so a
 * long value must be split by the client, never trusted to the server.
 */
#ifndef UMPI_PMI2_H
#define UMPI_PMI2_H

#include <stddef.h>

#define UMPI_PMI2_KEY_MAX   63   /* characters of a key */
#define UMPI_PMI2_VALUE_MAX 1023 /* characters of a value */

/* ---- PMI_process_mapping ---------------------------------------------------------------------- */

/*
 * The job attribute PMI_process_mapping says which node each rank runs on, as a vector of blocks:
 *
 *     (vector,(start,nodes,ppn),(start,nodes,ppn),...)
 *
 * A block gives ppn consecutive ranks to node `start`, the next ppn to node start+1, and so on for
 * `nodes` nodes. Blocks follow one another in rank order; when the ranks outnumber what the vector
 * describes, it starts over from its first block (a cyclic distribution over 2 nodes is
 * "(vector,(0,2,1))": rank 0 on node 0, 1 on node 1, 2 on node 0, ...). Spaces between tokens are
 * allowed. An empty value means the process manager has no mapping to give (it did not fit in a
 * value).
 *
 * Fills node_of[0..size-1]. Returns 1 when it did, 0 for an empty mapping (node_of untouched),
 * -1 on a malformed one with the reason in why.
 */
int umpi_pmi2_parse_mapping(const char *mapping, int size, int *node_of, char *why, size_t whylen);

/* Local rank (ranks before it on its node) and local size (ranks on its node) of rank. */
void umpi_pmi2_local(const int *node_of, int size, int rank, int *local_rank, int *local_size);

/* ---- values ------------------------------------------------------------------------------------ */

/*
 * Binary values travel as base64 with the URL alphabet (A-Z a-z 0-9 - _) and no padding: none of
 * these characters means anything to a PMI-2 parser (';' ends a value, '=' and spaces confuse some
 * servers), and 4 characters carry 3 bytes.
 */
size_t umpi_pmi2_encoded_len(size_t nbytes);
/* Writes umpi_pmi2_encoded_len(n) characters and a NUL. */
void umpi_pmi2_encode(const void *src, size_t n, char *dst);
/* Decodes n characters into dst (room for n * 3 / 4 bytes); -1 on a character outside the alphabet
 * or an impossible length. */
long umpi_pmi2_decode(const char *src, size_t n, void *dst);

/*
 * A value longer than one PMI-2 value is split into parts under keys derived from the caller's key
 * and the rank (keys are global in PMI-2, so the rank must be part of them):
 *
 *     <key>-<rank>       "<nparts>." followed by the first UMPI_PMI2_PART_CHARS characters
 *     <key>-<rank>-<i>   the next UMPI_PMI2_PART_CHARS characters, i = 1 .. nparts-1
 *
 * '.' is outside the encoding alphabet, so the header cannot be confused with data. A part holds a
 * multiple of 4 characters, so each part decodes on its own.
 */
#define UMPI_PMI2_PART_CHARS 1008
#define UMPI_PMI2_MAX_PARTS  99999 /* "99999." is the longest header; 1008 + 6 < UMPI_PMI2_VALUE_MAX */
int umpi_pmi2_nparts(size_t nbytes);
/* Key of part `part` of key for rank; -1 when it would exceed UMPI_PMI2_KEY_MAX. */
int umpi_pmi2_part_key(char *buf, size_t len, const char *key, int rank, int part);

/* ---- wire messages ----------------------------------------------------------------------------- */

/*
 * A PMI-2 message after its 6-character length: "cmd=<name>;<key>=<value>;...". Values may contain
 * anything but ';' (no escape is defined that every server honours, so the client never sends one).
 * Parsing cuts buf in place.
 */
#define UMPI_PMI2_MAX_PAIRS 32
struct umpi_pmi2_msg {
    const char *cmd;
    int npairs;
    const char *key[UMPI_PMI2_MAX_PAIRS];
    const char *val[UMPI_PMI2_MAX_PAIRS];
};
/* 0, or -1 with the reason in why. */
int umpi_pmi2_msg_parse(char *buf, struct umpi_pmi2_msg *m, char *why, size_t whylen);
/* The value of key, or NULL. */
const char *umpi_pmi2_msg_get(const struct umpi_pmi2_msg *m, const char *key);

#endif
