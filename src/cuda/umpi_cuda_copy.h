/*
 * Copies between host and device memory through the driver (copy.c), for point-to-point and the
 * collective schedules on device buffers. Callers hold the big lock.
 */
#ifndef UMPI_CUDA_COPY_H
#define UMPI_CUDA_COPY_H

#include "cuda/umpi_cuda.h"
#include "core/umpi_obj.h"

/* Makes a context current in this thread if none is: the primary context of `device` (-1: 0). */
umpi_status_t umpi_cuda_ctx_ensure(int device);
/* umpi's copy stream (created on first use, a context made current). */
umpi_status_t umpi_cuda_copy_stream(CUstream *s);
/* n bytes from src to dst, either of them host or device memory, finished when it returns. */
umpi_status_t umpi_cuda_copy(void *dst, const void *src, size_t n);
/* The same, started on the copy stream with ev recorded behind it (poll ev with cuEventQuery). */
umpi_status_t umpi_cuda_copy_start(void *dst, const void *src, size_t n, CUevent ev);
/*
 * A fence against the application's legacy-stream work: returns once the work the application
 * queued on the legacy default stream before the call is done (an event recorded on umpi's blocking
 * copy stream: umpi_cuda.h, UMPI_CUDA_STREAM_FLAGS); one host-side query when nothing is queued.
 * umpi's own copies need no fence, being ordered after that work by their stream; another process
 * that reads or writes this process's buffers through CUDA IPC is not, so a process passes its
 * fence before it lets the others at its buffers.
 */
umpi_status_t umpi_cuda_fence(void);
/* The first `bytes` of the packed stream of count elements of dt at device address buf into host
 * memory dst, and the inverse (host packed bytes into the typed device buffer). Contiguous types
 * are one copy; other types are the slow path of copy.c (counted: dtype_staged). */
umpi_status_t umpi_cuda_pack(const umpi_dtype_t *dt, const void *buf, MPI_Count count, void *dst, size_t bytes);
umpi_status_t umpi_cuda_unpack(const umpi_dtype_t *dt, void *buf, MPI_Count count, const void *src, size_t bytes);
/* Whether [ptr, ptr+len) is device memory (managed and pinned host memory are not: the CPU may
 * touch them); *st an error when classification failed (then 0). */
int umpi_cuda_is_device_buf(const void *ptr, size_t len, int *device, umpi_status_t *st);
/* Records "<what> failed: <CUDA error>" as the cause; returns UMPI_ERR_OTHER. */
umpi_status_t umpi_cuda_fail(const char *what, CUresult r);
/* Releases the primary contexts retained (MPI_Finalize). */
void umpi_cuda_copy_finalize(void);

#endif /* UMPI_CUDA_COPY_H */
