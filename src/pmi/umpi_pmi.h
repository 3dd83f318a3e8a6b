/*
 * Process-management interface: who am I, who else is in the job, where each rank runs, and a
 * key-value exchange. Behind it is a PMIx client (our mpirun, srun --mpi=pmix) or a PMI-2 client
 * (srun --mpi=pmi2, mpiexec.hydra), chosen at init from UMPI_PMI and the environment (pmi.c says
 * how); without a process manager the process is a singleton (rank 0 of 1) and every call below
 * still works locally.
 */
#ifndef UMPI_PMI_H
#define UMPI_PMI_H

#include "core/umpi.h"

struct umpi_pmi_info {
    int rank;           /* in the job (= MPI_COMM_WORLD) */
    int size;
    int appnum;         /* application number, 0 for a single-program job */
    int universe_size;  /* slots available to the job, >= size */
    int local_rank;     /* among the ranks on this node */
    int local_size;
    int node_id;        /* 0..nnodes-1 */
    int singleton;      /* 1 when no process manager was found */
};

enum umpi_pmi_kind { UMPI_PMI_SINGLETON, UMPI_PMI_PMIX, UMPI_PMI_PMI2 };

/* Which client umpi_pmi_init would use here (an enum umpi_pmi_kind in *kind), with a line saying
 * why in how; UMPI_ERR_PMI with the reason in how when MPI_Init must fail instead (UMPI_PMI names an
 * absent or unknown interface, or a launcher started several processes without a usable PMI).
 * Reads only the environment and umpi_config (umpi_info calls it without MPI_Init). */
umpi_status_t umpi_pmi_choose(int *kind, char *how, size_t len) UMPI_EXPORT;

/* Connects to the process manager (or decides singleton). Fills info. */
umpi_status_t umpi_pmi_init(struct umpi_pmi_info *info);

/* Publishes a binary value under key for the other ranks; visible to them after umpi_pmi_fence(). */
umpi_status_t umpi_pmi_put(const char *key, const void *value, size_t len);

/* Commits the puts and waits until every rank of the job has reached the fence (collecting data). */
umpi_status_t umpi_pmi_fence(void);

/* Reads the value rank published under key before the last fence. *value is malloc'ed; the caller
 * frees it. UMPI_ERR_NOT_FOUND when rank did not publish key, UMPI_ERR_PMI when the process manager
 * could not answer; the cause names the rank, the key and the process manager's answer. For a rank
 * of this node a missing key is answered at once; for a rank of another node the process manager
 * may first ask that node (PMIx direct modex), for at most UMPI_PMI_TIMEOUT seconds. So a key that
 * ranks may leave out is read only of the ranks of this node (as the affinity masks are). */
umpi_status_t umpi_pmi_get(int rank, const char *key, void **value, size_t *len);

/* Node id of a rank (for MPI_COMM_TYPE_SHARED, the hierarchical collectives and intra-node paths),
 * the same on every process; -1 if unknown. A table lookup, callable from any thread. */
int umpi_pmi_node_of(int rank);

/* Asks the launcher to end the whole job with exit code `code`, printing msg. Does not return
 * while a launcher exists; as a singleton it prints msg and calls _exit(code). */
void umpi_pmi_abort(int code, const char *msg) __attribute__((noreturn));

/* Tells the launcher this rank finalized cleanly; disconnects. */
umpi_status_t umpi_pmi_finalize(void);

#endif
