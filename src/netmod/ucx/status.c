/* The one place UCX's statuses become umpi's (the message keeps UCX's cause). */
#include "netmod/ucx/umpi_ucx.h"

umpi_status_t umpi_ucx_status(ucs_status_t st, const char *what)
{
    if (st == UCS_OK)
        return UMPI_OK;
    umpi_status_msg("%s: %s", what, ucs_status_string(st));
    switch (st) {
    case UCS_ERR_NO_MEMORY:
        return UMPI_ERR_NOMEM;
    case UCS_ERR_MESSAGE_TRUNCATED:
        return UMPI_ERR_TRUNCATE;
    case UCS_ERR_CANCELED:
        return UMPI_ERR_CANCELED;
    default:
        return UMPI_ERR_TRANSPORT;
    }
}
