/*
 * The messages of mpirun's tree (tree.h): one TCP connection between each daemon and its parent,
 * carrying frames:
 *
 *    0          4          8          12
 *    +----------+----------+----------+-------------------------+
 *    |  length  |   type   |   dest   |  payload (length bytes) |
 *    +----------+----------+----------+-------------------------+
 *
 * Each header field is an unsigned 32-bit integer in network byte order. dest is the vertex a
 * message going down the tree is for (MPIRUN_TO_ALL: every vertex below); messages going up are
 * all for the head and carry 0. Payload fields are u8, u32 (network order), strings (u32 length,
 * then the bytes, no NUL) and, last in a message, raw bytes up to its end.
 *
 *   up (daemon -> parent)                      down (parent -> daemons)
 *   HELLO      u32 vertex, str token           LAUNCH      the job description (below)
 *   FENCE_UP   u32 seq, bytes                  FENCE_DOWN  u32 seq, bytes
 *   IOF        u32 rank, u8 fd, u8 eol, bytes  STDIN       bytes (none: end of input)
 *   RANK_EXIT  u32 rank, pid, status, u8 conn, END         u32 signo, u32 grace_ms
 *              u8 finalized, u8 aborted        SIGNAL      u32 signo
 *   ABORT      u32 rank, pid, code, str msg    SHUTDOWN    (empty)
 *   STDIN_ACK  u32 more
 *   ERROR      u32 code, u32 lost vertex (0: none), str message
 *   BYE        (empty)
 *
 * The job description (LAUNCH): u32 version, str nspace, u32 np, u32 policy, u32 ppr,
 * u32 oversubscribe, u32 nhosts, then per host str name, u32 slots, u32 max_slots; u32 head_node
 * (+1, 0: none), u32 fanout, u32 timeout_s, u32 nagent, str agent[nagent], str daemon path,
 * str token, str cwd, str program path, u32 argc, str argv[argc], u32 envc, str env[envc].
 */
#ifndef MPIRUN_WIRE_H
#define MPIRUN_WIRE_H

#include "mpirun.h"

#include <stdint.h>

#define MPIRUN_WIRE_VERSION 1
#define MPIRUN_HDR_LEN      12
#define MPIRUN_MAX_MSG      (256u << 20)   /* a larger length means a broken or foreign peer */
#define MPIRUN_TO_ALL       0xffffffffu

_Static_assert(MPIRUN_HDR_LEN == 3 * sizeof(uint32_t), "header: three u32 fields");

enum mpirun_msg_type {
    /* up */
    MPIRUN_MSG_HELLO = 1,
    MPIRUN_MSG_FENCE_UP,
    MPIRUN_MSG_IOF,
    MPIRUN_MSG_RANK_EXIT,
    MPIRUN_MSG_ABORT,
    MPIRUN_MSG_STDIN_ACK,
    MPIRUN_MSG_ERROR,
    MPIRUN_MSG_BYE,
    /* down */
    MPIRUN_MSG_LAUNCH = 64,
    MPIRUN_MSG_FENCE_DOWN,
    MPIRUN_MSG_STDIN,
    MPIRUN_MSG_END,
    MPIRUN_MSG_SIGNAL,
    MPIRUN_MSG_SHUTDOWN,
};

/* A message being built: header first, its length filled in by mpirun_wbuf_finish. */
struct mpirun_wbuf {
    char *p;
    size_t len, cap;
    int oom;
};

void mpirun_wbuf_start(struct mpirun_wbuf *b, uint32_t type, uint32_t dest);
void mpirun_wbuf_u8(struct mpirun_wbuf *b, uint8_t v);
void mpirun_wbuf_u32(struct mpirun_wbuf *b, uint32_t v);
void mpirun_wbuf_str(struct mpirun_wbuf *b, const char *s);
void mpirun_wbuf_bytes(struct mpirun_wbuf *b, const void *p, size_t len);
/* 0 with the frame in b->p[0..b->len), or -1 (out of memory; b freed). */
int mpirun_wbuf_finish(struct mpirun_wbuf *b);
void mpirun_wbuf_free(struct mpirun_wbuf *b);

/* Reading a payload: a short or malformed one sets bad, and every later read gives 0 / "". */
struct mpirun_rbuf {
    const char *p;
    size_t len, off;
    int bad;
};

uint8_t mpirun_rbuf_u8(struct mpirun_rbuf *r);
uint32_t mpirun_rbuf_u32(struct mpirun_rbuf *r);
/* A malloc'ed copy with a NUL (NULL when bad or out of memory, which also sets bad). */
char *mpirun_rbuf_str(struct mpirun_rbuf *r);
/* The rest of the payload. */
const char *mpirun_rbuf_rest(struct mpirun_rbuf *r, size_t *len);

/* Reads the header at p (MPIRUN_HDR_LEN bytes). */
void mpirun_wire_header(const char *p, uint32_t *len, uint32_t *type, uint32_t *dest);

/* What a daemon learns from LAUNCH. */
struct mpirun_launch_desc {
    char *nspace;
    int np;
    struct mpirun_mapping mapping;
    struct mpirun_hostlist hosts;
    int head_node;        /* node the head forks, -1 for none */
    int fanout, timeout_s;
    char **agent;
    char *daemon_path, *token;
    char *cwd, *path;
    char **argv, **env;
    char **bind_args;     /* mpirun's binding options, which each daemon applies to its node */
};

int mpirun_wire_launch_encode(struct mpirun_wbuf *b, const struct mpirun_launch_desc *d);
/* 0, or -1 with a reason in err. */
int mpirun_wire_launch_decode(const char *p, size_t len, struct mpirun_launch_desc *d, char *err,
                              size_t errlen);
void mpirun_wire_launch_free(struct mpirun_launch_desc *d);

#endif
