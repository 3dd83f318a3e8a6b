/*
 * Hardware resources of this process for MPI_Comm_split_type (hw.c, hwloc): which instance of a
 * resource type (a NUMA node, a package, a cache, a core...) holds the process's CPU binding. An
 * unbound process is bound to the whole machine, so it is held only by resources that span it.
 */
#ifndef UMPI_HW_H
#define UMPI_HW_H

/* The levels MPI_COMM_TYPE_HW_UNGUIDED tries, largest first (hwloc type names). */
#define UMPI_HW_NLEVELS 8
extern const char *const umpi_hw_level_names[UMPI_HW_NLEVELS];

/* For type (an hwloc type name such as "NUMANode", "Package", "L3Cache"; case ignored): sets *id
 * to a number, unique within the job, of the instance that holds this process (the node, then
 * the instance's logical index), or -1 when no single instance does. Returns -1 when type names
 * no hwloc type or hwloc fails, else 0. */
int umpi_hw_resource(const char *type, int *id);

/* umpi_hw_resource for every level of umpi_hw_level_names, with one topology load. */
void umpi_hw_levels(int id[UMPI_HW_NLEVELS]);

#include "core/umpi.h"

/* The CPUs this node's ranks share (node_cpus.c), which resolve UMPI_SPIN_COUNT = -1 (auto) and
 * the progress engine's view of oversubscription: at MPI_Init before the fence (publishes this
 * process's affinity mask), ... */
umpi_status_t umpi_node_cpus_publish(int local_ranks);
/* ... and after it (the union of the masks of the node's ranks; logs the decision). */
void umpi_node_cpus_count(void);

#endif
