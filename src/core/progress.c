/* Progress hooks beyond UCX (collective schedules and GPU pipelines register here). */
#include "core/umpi_progress.h"

#define UMPI_PROGRESS_MAX_HOOKS 8

int umpi_progress_nhooks;
static umpi_progress_hook_t umpi__hooks[UMPI_PROGRESS_MAX_HOOKS];

unsigned umpi_progress_hooks(void)
{
    unsigned n = 0;
    for (int i = 0; i < umpi_progress_nhooks; i++)
        n += umpi__hooks[i]();
    return n;
}

int umpi_progress_register(umpi_progress_hook_t hook)
{
    if (umpi_progress_nhooks == UMPI_PROGRESS_MAX_HOOKS)
        return -1;
    umpi__hooks[umpi_progress_nhooks++] = hook;
    return 0;
}
