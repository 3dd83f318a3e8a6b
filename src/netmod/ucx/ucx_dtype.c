/*
 * The UCX generic datatype behind every non-contiguous umpi datatype (umpi_ucx.h): UCX calls
 * back for packed bytes at an offset (sender) or hands over packed bytes at an offset
 * (receiver), and the pack engine moves them straight between the user's buffer and UCX's
 * fragments. The state is the umpi_request_t that UCX got as the buffer; nothing is allocated.
 */
#include "netmod/ucx/umpi_ucx.h"
#include "core/umpi_obj.h"

static MPI_Count umpi__packed(const umpi_request_t *r)
{
    return r->count * r->dt->size;
}

static void *umpi__start_pack(void *context, const void *buffer, size_t count)
{
    (void) context, (void) count;
    return (void *) buffer;
}

static void *umpi__start_unpack(void *context, void *buffer, size_t count)
{
    (void) context, (void) count;
    return buffer;
}

static size_t umpi__packed_size(void *state)
{
    return (size_t) umpi__packed(state);
}

static size_t umpi__pack(void *state, size_t offset, void *dest, size_t max_length)
{
    const umpi_request_t *r = state;
    MPI_Count left = umpi__packed(r) - (MPI_Count) offset;
    MPI_Count n = left < (MPI_Count) max_length ? left : (MPI_Count) max_length;
    umpi_dtype_pack_range(r->dt, r->buf, r->count, (MPI_Count) offset, dest, n);
    return (size_t) n;
}

static ucs_status_t umpi__unpack(void *state, size_t offset, const void *src, size_t length)
{
    const umpi_request_t *r = state;
    if ((MPI_Count) (offset + length) > umpi__packed(r))
        return UCS_ERR_MESSAGE_TRUNCATED;
    umpi_dtype_unpack_range(r->dt, (void *) r->buf, r->count, (MPI_Count) offset, src, (MPI_Count) length);
    return UCS_OK;
}

static void umpi__finish(void *state)
{
    (void) state;
}

umpi_status_t umpi_ucx_dtype_init(void)
{
    static const ucp_generic_dt_ops_t ops = {
        .start_pack = umpi__start_pack,
        .start_unpack = umpi__start_unpack,
        .packed_size = umpi__packed_size,
        .pack = umpi__pack,
        .unpack = umpi__unpack,
        .finish = umpi__finish,
    };
    ucs_status_t st = ucp_dt_create_generic(&ops, NULL, &umpi_ucx.dt_generic);
    return st == UCS_OK ? UMPI_OK : umpi_ucx_status(st, "ucp_dt_create_generic");
}

void umpi_ucx_dtype_finalize(void)
{
    if (umpi_ucx.dt_generic != 0) {
        ucp_dt_destroy(umpi_ucx.dt_generic);
        umpi_ucx.dt_generic = 0;
    }
}
