/* Knob access: `umpi_config.<name>` holds the value in force, read once from UMPI_* at MPI_Init. */
#ifndef UMPI_KNOBS_H
#define UMPI_KNOBS_H

#include <stddef.h>

#define UMPI_KNOB_CTYPE_INT    int
#define UMPI_KNOB_CTYPE_SIZE   size_t
#define UMPI_KNOB_CTYPE_BOOL   int
#define UMPI_KNOB_CTYPE_STRING const char *

struct umpi_config {
#define UMPI_KNOB(name, type, def, doc) UMPI_KNOB_CTYPE_##type name;
#include "core/umpi_knobs.def"
#undef UMPI_KNOB
};
extern struct umpi_config umpi_config;

typedef enum { UMPI_KNOB_INT, UMPI_KNOB_SIZE, UMPI_KNOB_BOOL, UMPI_KNOB_STRING } umpi_knob_type_t;

/* One row of the table, for umpi_info and MPI_T. */
struct umpi_knob_info {
    const char *name;        /* "UMPI_DEBUG" */
    umpi_knob_type_t type;
    const char *type_name;   /* "INT" */
    const char *default_str; /* the default, as text */
    const char *doc;
    void *value;             /* into umpi_config */
};

/* Reads every UMPI_* variable into umpi_config; a malformed value is reported and the default kept. */
void umpi_knobs_load(void) __attribute__((visibility("default")));
/* The table, `*count` rows. Exported (umpi_ prefix, default visibility) for umpi_info. */
const struct umpi_knob_info *umpi_knobs_table(int *count) __attribute__((visibility("default")));
/* Formats the current value of a knob into buf. */
void umpi_knob_format(const struct umpi_knob_info *k, char *buf, size_t len) __attribute__((visibility("default")));

#endif
