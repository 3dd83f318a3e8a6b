/* Hardware resources of this process (umpi_hw.h). */
#include "api/umpi_hw.h"
#include "core/umpi.h"
#include "pmi/umpi_pmi.h"

#include <hwloc.h>
#include <strings.h>

const char *const umpi_hw_level_names[UMPI_HW_NLEVELS] = {
    "Machine", "Package", "NUMANode", "L3Cache", "L2Cache", "L1Cache", "Core", "PU",
};

/* The loaded topology and this process's binding; 0 on success. */
static int umpi__hw_open(hwloc_topology_t *topo, hwloc_bitmap_t *bind)
{
    if (hwloc_topology_init(topo) != 0)
        return -1;
    if (hwloc_topology_load(*topo) != 0) {
        hwloc_topology_destroy(*topo);
        return -1;
    }
    *bind = hwloc_bitmap_alloc();
    if (*bind == NULL) {
        hwloc_topology_destroy(*topo);
        return -1;
    }
    /* Not bound, or the binding cannot be read: the whole machine. */
    if (hwloc_get_cpubind(*topo, *bind, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(*bind))
        hwloc_bitmap_copy(*bind, hwloc_topology_get_topology_cpuset(*topo));
    return 0;
}

static void umpi__hw_close(hwloc_topology_t topo, hwloc_bitmap_t bind)
{
    hwloc_bitmap_free(bind);
    hwloc_topology_destroy(topo);
}

static int umpi__hw_find(hwloc_topology_t topo, hwloc_const_bitmap_t bind, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned) i);
        if (o != NULL && o->cpuset != NULL && hwloc_bitmap_isincluded(bind, o->cpuset)) {
            int node = umpi_pmi_node_of(umpi_global.rank);
            return (node < 0 ? 0 : node) * 65536 + (int) (o->logical_index & 0xffff);
        }
    }
    return -1;
}

int umpi_hw_resource(const char *type, int *id)
{
    hwloc_obj_type_t t;
    hwloc_topology_t topo;
    hwloc_bitmap_t bind;
    /* hwloc also takes abbreviations ("no" for NUMANode): only the full name names a type */
    if (hwloc_type_sscanf(type, &t, NULL, 0) != 0 || strcasecmp(type, hwloc_obj_type_string(t)) != 0)
        return -1;
    if (umpi__hw_open(&topo, &bind) != 0)
        return -1;
    *id = umpi__hw_find(topo, bind, t);
    umpi__hw_close(topo, bind);
    return 0;
}

void umpi_hw_levels(int id[UMPI_HW_NLEVELS])
{
    hwloc_topology_t topo;
    hwloc_bitmap_t bind;
    hwloc_obj_type_t t;
    int ok = umpi__hw_open(&topo, &bind) == 0;
    for (int l = 0; l < UMPI_HW_NLEVELS; l++)
        id[l] = ok && hwloc_type_sscanf(umpi_hw_level_names[l], &t, NULL, 0) == 0 ? umpi__hw_find(topo, bind, t) : -1;
    if (ok)
        umpi__hw_close(topo, bind);
}
