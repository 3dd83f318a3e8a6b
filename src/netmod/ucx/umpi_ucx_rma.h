/*
 * UCX remote memory access for one-sided communication (src/rma): memory registration, packed
 * remote keys, put/get and endpoint flush. The requests returned complete through
 * umpi_ucx_test_send (or umpi_ucx_wait); NULL means complete already.
 */
#ifndef UMPI_UCX_RMA_H
#define UMPI_UCX_RMA_H

#include "netmod/ucx/umpi_ucx.h"

/* Registers len bytes at base and packs its remote key (*rkey_buf, *rkey_len; freed by unmap). */
umpi_status_t umpi_ucx_mem_map(void *base, size_t len, ucp_mem_h *memh, void **rkey_buf, size_t *rkey_len);
void umpi_ucx_mem_unmap(ucp_mem_h memh, void *rkey_buf);
/* The remote key of world_rank's memory from its packed form (the endpoint is made if it was not). */
umpi_status_t umpi_ucx_rkey_unpack(int world_rank, const void *rkey_buf, ucp_rkey_h *rkey);
void umpi_ucx_rkey_destroy(ucp_rkey_h rkey);
/* len bytes from buf to raddr at world_rank (complete: buf may be reused) / from raddr into buf. */
umpi_status_t umpi_ucx_put(int world_rank, const void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey,
                           void **ucx_req);
umpi_status_t umpi_ucx_get(int world_rank, void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey,
                           void **ucx_req);
/* Completes at the target everything put to world_rank so far. */
umpi_status_t umpi_ucx_ep_flush(int world_rank, void **ucx_req);

#endif
