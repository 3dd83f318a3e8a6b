/*
 * Point-to-point's start and end (umpi_p2p.h): what the netmod hands up to it, and the device
 * protocol's (umpi_p2p_gpu.h) setup and teardown, in order.
 */
#include "pt2pt/umpi_p2p.h"
#include "pt2pt/umpi_p2p_gpu.h"

/* The netmod's completions that need point-to-point (umpi_ucx.h, struct umpi_ucx_upcalls). */
static const struct umpi_ucx_upcalls umpi__upcalls = {
    .complete_slow = umpi_p2p_complete_slow,
    .envelope = umpi_p2p_gpu_envelope_matched,
};

umpi_status_t umpi_p2p_init(int world_size)
{
    umpi_ucx_set_upcalls(&umpi__upcalls);
    return umpi_p2p_gpu_init(world_size);
}

void umpi_p2p_start(void)
{
    umpi_p2p_gpu_late_start();
}

void umpi_p2p_finalize(void)
{
    umpi_p2p_gpu_late_finalize();
    umpi_p2p_gpu_held_finalize();
    umpi_p2p_gpu_finalize();
}
