/*
 * UCX context, worker, endpoints and the tagged operations of the netmod (see umpi_ucx.h). The
 * netmod includes no header of the layers above it: arrows that run back up only where a callback
 * table makes the direction explicit (struct umpi_ucx_upcalls, filled by pt2pt).
 */
#include "netmod/ucx/umpi_ucx.h"
#include "core/umpi_knobs.h"

#include <stdlib.h>
#include <string.h>

#define UMPI_UCX_ADDR_KEY "umpi.ucx.addr"

struct umpi_ucx umpi_ucx;
static struct umpi_ucx_upcalls umpi__up;

void umpi_ucx_set_upcalls(const struct umpi_ucx_upcalls *up)
{
    umpi__up = *up;
}

const char *umpi_ucx_version(void)
{
    return ucp_get_version_string();
}

umpi_status_t umpi_ucx_init(int thread_level, int world_size)
{
    ucp_config_t *config = NULL;
    ucp_worker_attr_t wattr = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    umpi_status_t rc;
    ucs_status_t st;

    umpi_ucx.nranks = world_size;
    umpi_ucx.eps = calloc((size_t) world_size, sizeof(ucp_ep_h));
    if (umpi_ucx.eps == NULL)
        return UMPI_ERR_NOMEM;

    st = ucp_config_read("UMPI", NULL, &config);
    if (st != UCS_OK) {
        rc = umpi_ucx_status(st, "ucp_config_read");
        goto fail;
    }
    /* Eager up to and including our threshold (UCX's counts from the first rendezvous size), unless
     * the user tuned UCX directly: UCX's own variable wins. Measured here, 2 ranks: eager 128 KiB
     * and 256 KiB messages take 3.6 and 7.1 us where rendezvous (CMA) takes 15 and 25 us. */
    const char *ucx_thresh = getenv("UCX_RNDV_THRESH");
    char thresh[32];
    snprintf(thresh, sizeof(thresh), "%zu", umpi_config.rndv_thresh + 1);
    if (ucx_thresh == NULL)
        ucp_config_modify(config, "RNDV_THRESH", thresh);

    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_TAG | (umpi_config.rma_ucx ? UCP_FEATURE_RMA : 0), /* src/rma */
        .mt_workers_shared = 0,
        .estimated_num_eps = (size_t) world_size,
    };
    st = ucp_init(&params, config, &umpi_ucx.context);
    ucp_config_release(config);
    if (st != UCS_OK) {
        rc = umpi_ucx_status(st, "ucp_init");
        goto fail;
    }

    /* Our big lock serialises every UCX call under THREAD_MULTIPLE, so UCX needs no lock of its own;
     * SERIALIZED only tells it that calls may come from different threads. */
    ucp_worker_params_t wparams = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = thread_level >= MPI_THREAD_SERIALIZED ? UCS_THREAD_MODE_SERIALIZED
                                                             : UCS_THREAD_MODE_SINGLE,
    };
    rc = umpi_ucx_dtype_init();
    if (rc != UMPI_OK)
        goto fail;
    st = ucp_worker_create(umpi_ucx.context, &wparams, &umpi_ucx.worker);
    if (st != UCS_OK) {
        rc = umpi_ucx_status(st, "ucp_worker_create");
        goto fail;
    }
    umpi_progress_set_net(ucp_worker_progress, umpi_ucx.worker);   /* the engine polls it from now on */
    st = ucp_worker_query(umpi_ucx.worker, &wattr);
    if (st != UCS_OK) {
        rc = umpi_ucx_status(st, "ucp_worker_query");
        goto fail;
    }
    umpi_debug(1, "UCX %s: rendezvous from %s bytes (%s), eager below; worker thread mode %s",
               ucp_get_version_string(), ucx_thresh ? ucx_thresh : thresh,
               ucx_thresh ? "UCX_RNDV_THRESH" : "UMPI_RNDV_THRESH",
               wparams.thread_mode == UCS_THREAD_MODE_SERIALIZED ? "serialized" : "single");
    rc = umpi_pmi_put(UMPI_UCX_ADDR_KEY, wattr.address, wattr.address_length);
    ucp_worker_release_address(umpi_ucx.worker, wattr.address);
    if (rc != UMPI_OK)
        goto fail;
    return UMPI_OK;

fail:
    umpi_ucx_finalize();
    return rc;
}

/* A peer whose address the process manager cannot give (never published, lost, the server timed
 * out: the cause it recorded is kept) cannot be reached, whichever client (PMIx, PMI-2) asked. */
static umpi_status_t umpi__unreachable(int world_rank, umpi_status_t rc)
{
    char cause[384];
    if (rc == UMPI_ERR_NOMEM)
        return rc;
    umpi_strlcpy(cause, umpi_status_last_msg(), sizeof(cause));
    umpi_status_msg("no address for world rank %d: %s", world_rank, cause);
    return UMPI_ERR_UNREACHABLE;
}

umpi_status_t umpi_ucx_ep_create(int world_rank, ucp_ep_h *ep)
{
    void *addr = NULL;
    size_t len = 0;
    umpi_status_t rc = umpi_pmi_get(world_rank, UMPI_UCX_ADDR_KEY, &addr, &len);
    if (rc != UMPI_OK)
        return umpi__unreachable(world_rank, rc);
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = addr,
    };
    ucs_status_t st = ucp_ep_create(umpi_ucx.worker, &params, &umpi_ucx.eps[world_rank]);
    free(addr);
    if (st != UCS_OK)
        return umpi_ucx_status(st, "ucp_ep_create");
    umpi_debug(2, "connected to rank %d", world_rank);
    if (umpi_config.debug >= 2)
        ucp_ep_print_info(umpi_ucx.eps[world_rank], stderr); /* the transports UCX chose */
    *ep = umpi_ucx.eps[world_rank];
    return UMPI_OK;
}

umpi_status_t umpi_ucx_estimate(int world_rank, const size_t *sizes, double *us, int n)
{
    ucp_ep_h ep;
    umpi_status_t rc = umpi_ucx_ep(world_rank, &ep);
    if (rc != UMPI_OK)
        return rc;
    for (int i = 0; i < n; i++) {
        ucp_ep_evaluate_perf_param_t param = {.field_mask = UCP_EP_PERF_PARAM_FIELD_MESSAGE_SIZE,
                                              .message_size = sizes[i]};
        ucp_ep_evaluate_perf_attr_t attr = {.field_mask = UCP_EP_PERF_ATTR_FIELD_ESTIMATED_TIME};
        ucs_status_t st = ucp_ep_evaluate_perf(ep, &param, &attr);
        if (st != UCS_OK)
            return umpi_ucx_status(st, "ucp_ep_evaluate_perf");
        us[i] = attr.estimated_time * 1e6;
    }
    return UMPI_OK;
}

/* The worker's teardown waits here: the engine above has made its last pass. */
static void umpi__wait_ucx(void *req)
{
    if (req == NULL || UCS_PTR_IS_ERR(req))
        return;
    while (ucp_request_check_status(req) == UCS_INPROGRESS)
        ucp_worker_progress(umpi_ucx.worker);
    ucp_request_free(req);
}

void umpi_ucx_finalize(void)
{
    if (umpi_ucx.worker != NULL) {
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
        for (int i = 0; i < umpi_ucx.nranks; i++)
            if (umpi_ucx.eps[i] != NULL)
                umpi__wait_ucx(ucp_ep_close_nbx(umpi_ucx.eps[i], &p));
        umpi_progress_set_net(NULL, NULL);
        ucp_worker_destroy(umpi_ucx.worker);
        umpi_ucx.worker = NULL;
    }
    umpi_ucx_dtype_finalize();
    if (umpi_ucx.context != NULL) {
        ucp_cleanup(umpi_ucx.context);
        umpi_ucx.context = NULL;
    }
    free(umpi_ucx.eps);
    umpi_ucx.eps = NULL;
}

umpi_status_t umpi_ucx_flush_start(void **ucx_req)
{
    ucp_request_param_t p = {.op_attr_mask = 0};
    ucs_status_ptr_t sp = ucp_worker_flush_nbx(umpi_ucx.worker, &p);
    *ucx_req = UCS_PTR_IS_PTR(sp) ? sp : NULL;
    return UCS_PTR_IS_ERR(sp) ? umpi_ucx_status(UCS_PTR_STATUS(sp), "ucp_worker_flush_nbx") : UMPI_OK;
}

/* ---- completion callbacks: run inside ucp_worker_progress, i.e. under the big lock --------------- */

static void umpi__send_cb(void *ucx_req, ucs_status_t st, void *user_data)
{
    umpi_request_t *r = user_data;
    r->net_status = st;
    r->ucx_req = NULL;
    ucp_request_free(ucx_req);
    r->done = 1;
    if (umpi_unlikely(r->slow_done))
        umpi__up.complete_slow(r);
}

static void umpi__recv_fill(umpi_request_t *r, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    r->net_status = st;
    if (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED) {
        r->status.MPI_SOURCE = umpi_ucx_tag_source(info->sender_tag);
        r->status.MPI_TAG = umpi_ucx_tag_tag(info->sender_tag);
        umpi_status_set_bytes(&r->status, (MPI_Count) info->length);
    } else if (st == UCS_ERR_CANCELED) {
        umpi_status_set_cancelled(&r->status, 1);
    }
}

/* A receive matched a device message's envelope: its protocol completes r (upcall). Out of line,
 * so that the common callback keeps its registers. */
static __attribute__((noinline)) void umpi__recv_envelope(void *ucx_req, ucs_status_t st,
                                                          const ucp_tag_recv_info_t *info, umpi_request_t *r)
{
    ucp_tag_recv_info_t i = *info; /* info lives in ucx_req */
    r->ucx_req = NULL;
    ucp_request_free(ucx_req);
    umpi__up.envelope(r, st, &i);
}

static void umpi__recv_cb(void *ucx_req, ucs_status_t st, const ucp_tag_recv_info_t *info, void *user_data)
{
    umpi_request_t *r = user_data;
    if (umpi_unlikely(info->sender_tag & UMPI_UCX_INTERNAL_BIT) && (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED)) {
        umpi__recv_envelope(ucx_req, st, info, r);
        return;
    }
    umpi__recv_fill(r, st, info);
    r->ucx_req = NULL;
    ucp_request_free(ucx_req);
    r->done = 1;
    if (umpi_unlikely(r->slow_done))
        umpi__up.complete_slow(r);
}

/* ---- operations ---------------------------------------------------------------------------------- */

umpi_status_t umpi_ucx_send_dt(ucp_ep_h ep, const void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag,
                               int sync, umpi_request_t *req, void **ucx_req)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE, .datatype = dt};
    if (req != NULL) {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.send = umpi__send_cb;
        p.user_data = req;
    }
    ucs_status_ptr_t sp = sync ? ucp_tag_send_sync_nbx(ep, buf, len, tag, &p)
                               : ucp_tag_send_nbx(ep, buf, len, tag, &p);
    if (umpi_likely(sp == NULL)) {
        if (req != NULL)
            req->done = 1;
        *ucx_req = NULL;
        return UMPI_OK;
    }
    if (umpi_unlikely(UCS_PTR_IS_ERR(sp)))
        return umpi_ucx_status(UCS_PTR_STATUS(sp), sync ? "ucp_tag_send_sync_nbx" : "ucp_tag_send_nbx");
    *ucx_req = sp;
    if (req != NULL)
        req->ucx_req = sp;
    return UMPI_OK;
}

static umpi_status_t umpi__recv_result(ucs_status_ptr_t sp, umpi_request_t *req, void **ucx_req,
                                       const ucp_tag_recv_info_t *info, const char *what)
{
    *ucx_req = NULL;
    if (umpi_unlikely(UCS_PTR_IS_ERR(sp))) {
        /* A waiting message longer than the buffer fails at once: report it as the completion. */
        if (UCS_PTR_STATUS(sp) == UCS_ERR_MESSAGE_TRUNCATED) {
            req->net_status = UCS_ERR_MESSAGE_TRUNCATED;
            req->done = 1;
            return UMPI_OK;
        }
        return umpi_ucx_status(UCS_PTR_STATUS(sp), what);
    }
    if (sp == NULL) {
        /* Completed at once (only matched-message receives can): info holds the result. */
        umpi__recv_fill(req, UCS_OK, info);
        req->done = 1;
        return UMPI_OK;
    }
    /* The callback may already have run inside the call, and released sp. */
    if (!req->done) {
        *ucx_req = sp;
        req->ucx_req = sp;
    }
    return UMPI_OK;
}

/*
 * Tagged receives deny immediate completion (UCP_OP_ATTR_FLAG_NO_IMM_CMPL): UCX 1.13 returns NULL
 * for a receive matched at once without filling recv_info, so source, tag and length would be
 * lost. With the flag, a message that is already here completes through the callback before
 * ucp_tag_recv_nbx returns, and the callback always has the info.
 */
umpi_status_t umpi_ucx_recv_dt(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag, ucp_tag_t mask,
                               umpi_request_t *req, void **ucx_req)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
        .datatype = dt,
        .cb.recv = umpi__recv_cb,
        .user_data = req,
    };
    ucs_status_ptr_t sp = ucp_tag_recv_nbx(umpi_ucx.worker, buf, len, tag, mask, &p);
    return umpi__recv_result(sp, req, ucx_req, NULL, "ucp_tag_recv_nbx");
}

static void umpi__recv_wait_cb(void *ucx_req, ucs_status_t st, const ucp_tag_recv_info_t *info, void *user_data)
{
    struct umpi_ucx_recv_wait *w = user_data;
    w->status = st;
    if (info != NULL)
        w->info = *info;
    ucp_request_free(ucx_req);
    w->done = 1;
}

/* A receive of bytes that completes into w (umpi_ucx_recv_blocking, umpi_ucx_msg_recv_blocking). */
static inline ucp_request_param_t umpi__recv_wait_param(struct umpi_ucx_recv_wait *w, uint32_t more)
{
    return (ucp_request_param_t){
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | more,
        .datatype = UMPI_UCX_DT_BYTES,
        .cb.recv = umpi__recv_wait_cb,
        .user_data = w,
    };
}

umpi_status_t umpi_ucx_recv_blocking(void *buf, size_t len, ucp_tag_t tag, ucp_tag_t mask,
                                     struct umpi_ucx_recv_wait *w)
{
    ucp_request_param_t p = umpi__recv_wait_param(w, UCP_OP_ATTR_FLAG_NO_IMM_CMPL);
    w->done = 0;
    ucs_status_ptr_t sp = ucp_tag_recv_nbx(umpi_ucx.worker, buf, len, tag, mask, &p);
    w->ucx_req = UCS_PTR_IS_ERR(sp) ? NULL : sp;
    if (UCS_PTR_IS_ERR(sp)) {
        w->status = UCS_PTR_STATUS(sp);
        if (w->status != UCS_ERR_MESSAGE_TRUNCATED)
            return umpi_ucx_status(w->status, "ucp_tag_recv_nbx");
        w->info.sender_tag = tag;
        w->info.length = len;
        w->done = 1;
    }
    return UMPI_OK;
}

umpi_status_t umpi_ucx_msg_recv_blocking(void *buf, size_t len, ucp_tag_message_h msg, struct umpi_ucx_recv_wait *w)
{
    ucp_request_param_t p = umpi__recv_wait_param(w, UCP_OP_ATTR_FIELD_RECV_INFO);
    p.recv_info.tag_info = &w->info;
    w->done = 0;
    w->ucx_req = NULL;
    ucs_status_ptr_t sp = ucp_tag_msg_recv_nbx(umpi_ucx.worker, buf, len, msg, &p);
    if (UCS_PTR_IS_ERR(sp))
        return umpi_ucx_status(UCS_PTR_STATUS(sp), "ucp_tag_msg_recv_nbx");
    if (sp == NULL) {
        w->status = UCS_OK; /* completed at once: the data is in buf */
        w->done = 1;
    } else if (!w->done) {
        w->ucx_req = sp;
    }
    return UMPI_OK;
}

umpi_status_t umpi_ucx_msg_recv_dt(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_message_h msg,
                                   umpi_request_t *req, void **ucx_req, ucp_tag_recv_info_t *info)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_RECV_INFO,
        .datatype = dt,
        .recv_info.tag_info = info,
    };
    if (req != NULL) {
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.recv = umpi__recv_cb;
        p.user_data = req;
    }
    ucs_status_ptr_t sp = ucp_tag_msg_recv_nbx(umpi_ucx.worker, buf, len, msg, &p);
    return umpi__recv_result(sp, req, ucx_req, info, "ucp_tag_msg_recv_nbx");
}

void umpi_ucx_cancel(void *ucx_req)
{
    ucp_request_cancel(umpi_ucx.worker, ucx_req);
}

/* ---- operations with a completion callback -------------------------------------------------------- */

/* Any address that is no request: the operation is in flight, its callback has not run (it may
 * run inside the call that starts it). */
static char umpi__starting;

static void umpi__op_send_cb(void *ucx_req, ucs_status_t st, void *user_data)
{
    umpi_ucx_op_t *op = user_data;
    op->ucx_req = NULL;
    ucp_request_free(ucx_req);
    op->done(op, st, NULL);
}

static void umpi__op_recv_cb(void *ucx_req, ucs_status_t st, const ucp_tag_recv_info_t *info, void *user_data)
{
    umpi_ucx_op_t *op = user_data;
    ucp_tag_recv_info_t i;
    if (info != NULL)
        i = *info; /* info lives in ucx_req */
    op->ucx_req = NULL;
    ucp_request_free(ucx_req);
    op->done(op, st, info != NULL ? &i : NULL);
}

static umpi_status_t umpi__op_started(ucs_status_ptr_t sp, umpi_ucx_op_t *op, const ucp_tag_recv_info_t *info,
                                      const char *what)
{
    if (UCS_PTR_IS_ERR(sp)) {
        op->ucx_req = NULL;
        return umpi_ucx_status(UCS_PTR_STATUS(sp), what);
    }
    if (sp == NULL) {
        op->ucx_req = NULL;
        op->done(op, UCS_OK, info);
    } else if (op->ucx_req == &umpi__starting) {
        op->ucx_req = sp;
    }
    return UMPI_OK;
}

umpi_status_t umpi_ucx_send_op(ucp_ep_h ep, const void *buf, size_t len, ucp_tag_t tag, umpi_ucx_op_t *op)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.send = umpi__op_send_cb,
        .user_data = op,
    };
    op->ucx_req = &umpi__starting;
    return umpi__op_started(ucp_tag_send_nbx(ep, buf, len, tag, &p), op, NULL, "ucp_tag_send_nbx");
}

umpi_status_t umpi_ucx_recv_op(void *buf, size_t len, ucp_tag_t tag, ucp_tag_t mask, umpi_ucx_op_t *op)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
        .cb.recv = umpi__op_recv_cb,
        .user_data = op,
    };
    op->ucx_req = &umpi__starting;
    return umpi__op_started(ucp_tag_recv_nbx(umpi_ucx.worker, buf, len, tag, mask, &p), op, NULL,
                            "ucp_tag_recv_nbx");
}

umpi_status_t umpi_ucx_msg_recv_op(void *buf, size_t len, ucp_tag_message_h msg, const ucp_tag_recv_info_t *probed,
                                   umpi_ucx_op_t *op)
{
    ucp_tag_recv_info_t info = *probed;
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO,
        .cb.recv = umpi__op_recv_cb,
        .user_data = op,
        .recv_info.tag_info = &info,
    };
    op->ucx_req = &umpi__starting;
    return umpi__op_started(ucp_tag_msg_recv_nbx(umpi_ucx.worker, buf, len, msg, &p), op, probed,
                            "ucp_tag_msg_recv_nbx");
}

/* ---- light operations (collective schedules) ------------------------------------------------------ */

static inline void umpi__light_done(umpi_ucx_done_t *d, ucs_status_t st)
{
    if (umpi_unlikely(st != UCS_OK)) {
        d->status = st;
        d->counter->failed++;
    }
    d->counter->pending--;
}

static void umpi__light_send_cb(void *ucx_req, ucs_status_t st, void *user_data)
{
    ucp_request_free(ucx_req);
    umpi__light_done(user_data, st);
}

static void umpi__light_recv_cb(void *ucx_req, ucs_status_t st, const ucp_tag_recv_info_t *info, void *user_data)
{
    (void) info;
    ucp_request_free(ucx_req);
    umpi__light_done(user_data, st);
}

/* Counted as pending before the call: a callback run inside it then finds the count it expects. */
static umpi_status_t umpi__light_result(ucs_status_ptr_t sp, umpi_ucx_done_t *d, const char *what)
{
    if (umpi_likely(!UCS_PTR_IS_ERR(sp))) {
        if (sp == NULL)
            d->counter->pending--; /* completed at once */
        return UMPI_OK;
    }
    if (UCS_PTR_STATUS(sp) == UCS_ERR_MESSAGE_TRUNCATED) {
        /* a waiting message longer than the buffer: reported as the completion */
        umpi__light_done(d, UCS_ERR_MESSAGE_TRUNCATED);
        return UMPI_OK;
    }
    d->counter->pending--;
    return umpi_ucx_status(UCS_PTR_STATUS(sp), what);
}

umpi_status_t umpi_ucx_send_light(ucp_ep_h ep, const void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag,
                                  umpi_ucx_done_t *d)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .datatype = dt,
        .cb.send = umpi__light_send_cb,
        .user_data = d,
    };
    d->status = UCS_OK;
    d->counter->pending++;
    return umpi__light_result(ucp_tag_send_nbx(ep, buf, len, tag, &p), d, "ucp_tag_send_nbx");
}

/* Immediate completion allowed (unlike umpi_ucx_recv_dt): a schedule needs no source, tag or length. */
umpi_status_t umpi_ucx_recv_light(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag, umpi_ucx_done_t *d)
{
    void *ucx_req;
    return umpi_ucx_recv_light_req(buf, len, dt, tag, d, &ucx_req);
}

umpi_status_t umpi_ucx_recv_light_req(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag, umpi_ucx_done_t *d,
                                      void **ucx_req)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .datatype = dt,
        .cb.recv = umpi__light_recv_cb,
        .user_data = d,
    };
    d->status = UCS_OK;
    d->counter->pending++;
    ucs_status_ptr_t sp = ucp_tag_recv_nbx(umpi_ucx.worker, buf, len, tag, ~(ucp_tag_t) 0, &p);
    *ucx_req = UCS_PTR_IS_PTR(sp) ? sp : NULL;
    return umpi__light_result(sp, d, "ucp_tag_recv_nbx");
}
