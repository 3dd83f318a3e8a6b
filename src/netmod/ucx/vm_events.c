/*
 * Address-space events from UCX's memory hooks (libucm): a caller learns of every mapping and
 * unmapping in the process, whoever makes it (the application, malloc, the CUDA driver reserving
 * addresses for GPU memory). UCX installs these hooks for its own registration cache; umpi's GPU
 * buffer classification uses them to keep its caches right (src/cuda/classify.c).
 */
#include "netmod/ucx/umpi_ucx.h"

#include <ucm/api/ucm.h>

static void (*umpi__changed)(uintptr_t start, size_t len);

/* Runs inside mmap, munmap, mremap, shmat... of any thread: it only forwards the range. */
static void umpi__event(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    void (*changed)(uintptr_t, size_t) = __atomic_load_n(&umpi__changed, __ATOMIC_ACQUIRE);
    (void) arg;
    if (changed == NULL)
        return;
    if (type == UCM_EVENT_VM_MAPPED)
        changed((uintptr_t) event->vm_mapped.address, event->vm_mapped.size);
    else if (type == UCM_EVENT_VM_UNMAPPED)
        changed((uintptr_t) event->vm_unmapped.address, event->vm_unmapped.size);
}

umpi_status_t umpi_ucx_vm_watch(void (*changed)(uintptr_t start, size_t len))
{
    __atomic_store_n(&umpi__changed, changed, __ATOMIC_RELEASE);
    ucs_status_t st = ucm_set_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED, 0, umpi__event, NULL);
    if (st != UCS_OK) {
        __atomic_store_n(&umpi__changed, NULL, __ATOMIC_RELEASE);
        return umpi_ucx_status(st, "installing UCX's memory event hooks");
    }
    return UMPI_OK;
}

void umpi_ucx_vm_unwatch(void)
{
    if (__atomic_load_n(&umpi__changed, __ATOMIC_ACQUIRE) == NULL)
        return;
    ucm_unset_event_handler(UCM_EVENT_VM_MAPPED | UCM_EVENT_VM_UNMAPPED, umpi__event, NULL);
    __atomic_store_n(&umpi__changed, NULL, __ATOMIC_RELEASE);
}
