/* UCX remote memory access (umpi_ucx_rma.h). */
#include "netmod/ucx/umpi_ucx_rma.h"

umpi_status_t umpi_ucx_mem_map(void *base, size_t len, ucp_mem_h *memh, void **rkey_buf, size_t *rkey_len)
{
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = base,
        .length = len,
    };
    ucs_status_t s = ucp_mem_map(umpi_ucx.context, &mp, memh);
    if (s != UCS_OK)
        return umpi_ucx_status(s, "ucp_mem_map");
    s = ucp_rkey_pack(umpi_ucx.context, *memh, rkey_buf, rkey_len);
    if (s != UCS_OK) {
        ucp_mem_unmap(umpi_ucx.context, *memh);
        return umpi_ucx_status(s, "ucp_rkey_pack");
    }
    return UMPI_OK;
}

void umpi_ucx_mem_unmap(ucp_mem_h memh, void *rkey_buf)
{
    if (rkey_buf != NULL)
        ucp_rkey_buffer_release(rkey_buf);
    ucp_mem_unmap(umpi_ucx.context, memh);
}

umpi_status_t umpi_ucx_rkey_unpack(int world_rank, const void *rkey_buf, ucp_rkey_h *rkey)
{
    ucp_ep_h ep;
    umpi_status_t st = umpi_ucx_ep(world_rank, &ep);
    if (st != UMPI_OK)
        return st;
    ucs_status_t s = ucp_ep_rkey_unpack(ep, rkey_buf, rkey);
    return s == UCS_OK ? UMPI_OK : umpi_ucx_status(s, "ucp_ep_rkey_unpack");
}

void umpi_ucx_rkey_destroy(ucp_rkey_h rkey)
{
    ucp_rkey_destroy(rkey);
}

static umpi_status_t umpi__req(ucs_status_ptr_t sp, const char *what, void **ucx_req)
{
    *ucx_req = UCS_PTR_IS_PTR(sp) ? sp : NULL;
    return UCS_PTR_IS_ERR(sp) ? umpi_ucx_status(UCS_PTR_STATUS(sp), what) : UMPI_OK;
}

umpi_status_t umpi_ucx_put(int world_rank, const void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey,
                           void **ucx_req)
{
    ucp_ep_h ep;
    umpi_status_t st = umpi_ucx_ep(world_rank, &ep);
    if (st != UMPI_OK)
        return st;
    ucp_request_param_t p = { .op_attr_mask = 0 };
    return umpi__req(ucp_put_nbx(ep, buf, len, raddr, rkey, &p), "ucp_put_nbx", ucx_req);
}

umpi_status_t umpi_ucx_get(int world_rank, void *buf, size_t len, uint64_t raddr, ucp_rkey_h rkey,
                           void **ucx_req)
{
    ucp_ep_h ep;
    umpi_status_t st = umpi_ucx_ep(world_rank, &ep);
    if (st != UMPI_OK)
        return st;
    ucp_request_param_t p = { .op_attr_mask = 0 };
    return umpi__req(ucp_get_nbx(ep, buf, len, raddr, rkey, &p), "ucp_get_nbx", ucx_req);
}

umpi_status_t umpi_ucx_ep_flush(int world_rank, void **ucx_req)
{
    ucp_ep_h ep;
    umpi_status_t st = umpi_ucx_ep(world_rank, &ep);
    if (st != UMPI_OK)
        return st;
    ucp_request_param_t p = { .op_attr_mask = 0 };
    return umpi__req(ucp_ep_flush_nbx(ep, &p), "ucp_ep_flush_nbx", ucx_req);
}
