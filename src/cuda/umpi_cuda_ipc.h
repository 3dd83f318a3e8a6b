/*
 * CUDA IPC: a device buffer of one process read or written directly by another process on the
 * same node. Point-to-point's envelope protocol uses it (src/pt2pt/gpu_*.c); see ipc_cache.c for
 * the design and README.md, "GPU buffers".
 *
 *   sender                                              receiver
 *   umpi_cuda_ipc_export(buf, len, &desc)               umpi_cuda_ipc_open(peer, &desc, len, &ptr, &ref)
 *     classify -> allocation [base, base+size), id        cached (peer, base, id)?  reuse the mapping
 *     validate (id still the allocation's?)               else cuIpcOpenMemHandle once, cache it
 *     cached handle of (base, id)? else                   ... copy from/to ptr (= mapping + offset) ...
 *       cuIpcGetMemHandle(base)                         umpi_cuda_ipc_release(ref)
 *     desc = handle, base, size, id, offset = buf-base
 *     ---------------- desc (104 bytes) goes to the receiver in a UCX active message ----------------
 *
 * Why the key is (peer, allocation base, buffer id) and the handle bytes, not the buffer pointer:
 * the driver maps one exported allocation at most once per context; opening a handle of an
 * allocation this context already has open fails with CUDA_ERROR_ALREADY_MAPPED. Caches keyed by
 * the sender's buffer pointer meet that error as soon as two buffers inside one allocation are
 * sent (two keys, one allocation, two opens), and caches keyed by address alone either reuse the
 * mapping of a freed allocation when the peer allocates again at the same address (wrong data), or
 * reopen it while the old mapping is still open. Here every pointer is first reduced to its
 * allocation's base (cuIpcGetMemHandle names the whole allocation anyway), so one allocation is
 * one entry and opened once; and the driver's buffer id, unique per allocation for the life of the
 * peer process, tells a reallocation at the same base apart: a new id is a new allocation, so its
 * handle is not open here, and the stale entry is closed first (or, while a transfer still uses
 * it, taken out of the cache and closed at its last release). The handle bytes are compared too,
 * so that a sender that reports no id (0) is still told apart.
 */
#ifndef UMPI_CUDA_IPC_H
#define UMPI_CUDA_IPC_H

#include "cuda/umpi_cuda.h"

/* What the sender tells the receiver (wire format, little-endian, the peer runs the same build):
 *
 *   0        64       72       80       88       96      100     104
 *   | handle | base   | size   | id     | offset | device | pad   |
 */
struct umpi_cuda_ipc_desc {
    CUipcMemHandle handle;  /* cuIpcGetMemHandle of the allocation at base */
    uint64_t base;          /* the sender's address of the allocation (a key, never dereferenced) */
    uint64_t size;          /* the allocation's size */
    uint64_t buffer_id;     /* the driver's id of the allocation (CU_POINTER_ATTRIBUTE_BUFFER_ID) */
    uint64_t offset;        /* of the buffer from base */
    int32_t device;         /* the sender's device ordinal */
    int32_t pad;
};
_Static_assert(sizeof(CUipcMemHandle) == 64, "CUipcMemHandle is 64 bytes");
_Static_assert(sizeof(struct umpi_cuda_ipc_desc) == 104, "the IPC descriptor is 104 bytes on the wire");

/* An open mapping in use by one transfer. */
typedef struct umpi_cuda_ipc_entry umpi_cuda_ipc_ref_t;

/**
 * Sender: describes [buf, buf+len) for a peer on this node. *usable = 1 and desc filled when CUDA
 * IPC can carry it; *usable = 0 when it cannot (host or managed memory, VMM or pool allocations,
 * the driver refusing the handle): then the slow path was counted (ipc_fallback) with its reason.
 * Returns an error only when classification itself fails.
 */
umpi_status_t umpi_cuda_ipc_export(const void *buf, size_t len, struct umpi_cuda_ipc_desc *desc, int *usable);

/**
 * Receiver: maps the peer's buffer described by desc, of which len bytes from desc->offset are
 * used. *ptr = the local address of the buffer and *ref the mapping to release when the transfer
 * is over; *ptr = NULL when the handle could not be opened (counted as ipc_fallback with the
 * reason; the caller moves the data another way, and this allocation is not tried again until
 * the peer exports a new one). Needs the receiving device's context current. Returns
 * UMPI_ERR_INTERN when len runs past the end of the described allocation (a protocol error).
 */
umpi_status_t umpi_cuda_ipc_open(int peer, const struct umpi_cuda_ipc_desc *desc, size_t len, void **ptr,
                                 umpi_cuda_ipc_ref_t **ref);
void umpi_cuda_ipc_release(umpi_cuda_ipc_ref_t *ref);

/* Closes every mapping of a peer that is not in use (the peer has gone); those in use close at
 * their release. */
void umpi_cuda_ipc_forget_peer(int peer);

/* Counts for tests and umpi_info: open mappings (in use or cached) and cached exports. */
void umpi_cuda_ipc_counts(size_t *mappings, size_t *in_use, size_t *exports);

/* Closes every mapping and forgets every export: at finalize (after the last transfer). */
void umpi_cuda_ipc_finalize(void);

#endif /* UMPI_CUDA_IPC_H */
