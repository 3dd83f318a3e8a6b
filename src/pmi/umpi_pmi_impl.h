/*
 * The two process-manager clients behind umpi_pmi.h, for pmi.c only: PMIx (pmix.c) and PMI-2
 * (pmi2.c). pmi.c picks one at MPI_Init and forwards every call to it; the singleton needs neither.
 *
 * init fills info and a malloc'ed table node_of[rank] (the node of every rank, ids equal on every
 * process of the job), which pmi.c owns from then on. Keys and values are those of umpi_pmi.h.
 */
#ifndef UMPI_PMI_IMPL_H
#define UMPI_PMI_IMPL_H

#include "pmi/umpi_pmi.h"

umpi_status_t umpi_pmix_init(struct umpi_pmi_info *info, int **node_of);
umpi_status_t umpi_pmix_put(const char *key, const void *value, size_t len);
umpi_status_t umpi_pmix_fence(void);
umpi_status_t umpi_pmix_get(int rank, const char *key, void **value, size_t *len);
void umpi_pmix_abort(int code, const char *msg); /* returns when the server could not end the job */
umpi_status_t umpi_pmix_finalize(void);

umpi_status_t umpi_pmi2_init(struct umpi_pmi_info *info, int **node_of);
umpi_status_t umpi_pmi2_put(const char *key, const void *value, size_t len);
umpi_status_t umpi_pmi2_fence(void);
umpi_status_t umpi_pmi2_get(int rank, const char *key, void **value, size_t *len);
void umpi_pmi2_abort(int code, const char *msg); /* returns; the caller exits */
umpi_status_t umpi_pmi2_finalize(void);

#endif
