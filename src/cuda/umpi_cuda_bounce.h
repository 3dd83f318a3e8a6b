/*
 * Pinned host buffers for small device data (bounce.c says why pinned and how they are pooled):
 * the host side of a small device message, a small collective's host copies.
 */
#ifndef UMPI_CUDA_BOUNCE_H
#define UMPI_CUDA_BOUNCE_H

#include "cuda/umpi_cuda.h"

/* The largest request served by pinned memory; larger ones get malloc'ed memory. */
#define UMPI_CUDA_BOUNCE_MAX ((size_t) 64 << 10)

/* A host buffer of at least n bytes (pinned when n <= UMPI_CUDA_BOUNCE_MAX), and its return with
 * the same n. Needs CUDA active and a current context (umpi_cuda_ctx_ensure). */
umpi_status_t umpi_cuda_bounce_get(size_t n, void **p);
void umpi_cuda_bounce_put(void *p, size_t n);
/* Buffers handed out and not returned (leak checks). */
size_t umpi_cuda_bounce_out(void);
/* Frees the pool (start.c, at finalize). */
void umpi_cuda_bounce_finalize(void);

#endif /* UMPI_CUDA_BOUNCE_H */
