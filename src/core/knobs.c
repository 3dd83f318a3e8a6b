/*
 * Knobs: umpi_knobs.def -> defaults, UMPI_* parsing, the table for umpi_info and MPI_T.
 *
 * This file is the only place in umpi that reads the environment for settings (shared/DESIGN.md:
 * "no stray getenv"). Everything here is generated from the one X-macro list.
 */
#include "core/umpi.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

struct umpi_config umpi_config = {
#define UMPI_KNOB(name, type, def, doc) .name = (def),
#include "core/umpi_knobs.def"
#undef UMPI_KNOB
};

enum {
#define UMPI_KNOB(name, type, def, doc) UMPI__KNOB_ROW_##name,
#include "core/umpi_knobs.def"
#undef UMPI_KNOB
    UMPI__NKNOBS
};

/* "UMPI_" + upper-cased field name; filled once by umpi__knobs_names(). */
#define UMPI__NAME_MAX 64
static char umpi__knob_names[UMPI__NKNOBS][UMPI__NAME_MAX];

static struct umpi_knob_info umpi__knobs[UMPI__NKNOBS] = {
#define UMPI_KNOB(name, type, def, doc)                                                           \
    [UMPI__KNOB_ROW_##name] = { umpi__knob_names[UMPI__KNOB_ROW_##name], UMPI_KNOB_##type, #type, \
                                #def, doc, &umpi_config.name },
#include "core/umpi_knobs.def"
#undef UMPI_KNOB
};

static const char *const umpi__field_names[UMPI__NKNOBS] = {
#define UMPI_KNOB(name, type, def, doc) [UMPI__KNOB_ROW_##name] = #name,
#include "core/umpi_knobs.def"
#undef UMPI_KNOB
};

static pthread_once_t umpi__names_once = PTHREAD_ONCE_INIT;

static void umpi__knobs_names(void)
{
    for (int i = 0; i < UMPI__NKNOBS; i++) {
        char *dst = umpi__knob_names[i];
        int n = snprintf(dst, UMPI__NAME_MAX, "UMPI_%s", umpi__field_names[i]);
        for (int j = 5; j < n && dst[j]; j++)
            dst[j] = (char) toupper((unsigned char) dst[j]);
    }
}

/* ---- parsers: 0 on success, -1 with *why set ---------------------------------------------------- */

static int umpi__parse_int(const char *s, int *out, const char **why)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    while (isspace((unsigned char) *end))
        end++;
    if (end == s || *end != '\0') {
        *why = "not an integer";
        return -1;
    }
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
        *why = "out of range for an int";
        return -1;
    }
    *out = (int) v;
    return 0;
}

/* Bytes, with an optional binary suffix: k/K = 2^10, m/M = 2^20, g/G = 2^30, t/T = 2^40,
 * optionally followed by "b" or "ib" ("64k", "1M", "2GiB", "4096"). */
static int umpi__parse_size(const char *s, size_t *out, const char **why)
{
    char *end;
    while (isspace((unsigned char) *s))
        s++;
    if (*s == '-') {
        *why = "negative size";
        return -1;
    }
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s) {
        *why = "not a size";
        return -1;
    }
    unsigned shift = 0;
    switch (tolower((unsigned char) *end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    case 't': shift = 40; end++; break;
    default: break;
    }
    if (shift != 0) {
        if (tolower((unsigned char) *end) == 'i' && tolower((unsigned char) end[1]) == 'b')
            end += 2;
        else if (tolower((unsigned char) *end) == 'b')
            end++;
    }
    while (isspace((unsigned char) *end))
        end++;
    if (*end != '\0') {
        *why = "not a size (use a number with an optional k, m, g or t suffix)";
        return -1;
    }
    if (errno == ERANGE || (shift && v > (SIZE_MAX >> shift))) {
        *why = "too large";
        return -1;
    }
    *out = (size_t) (v << shift);
    return 0;
}

static int umpi__parse_bool(const char *s, int *out, const char **why)
{
    static const char *const yes[] = { "1", "yes", "on", "true", "y" };
    static const char *const no[] = { "0", "no", "off", "false", "n" };
    for (size_t i = 0; i < UMPI_ARRAY_SIZE(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    *why = "not a boolean (use 0/1, yes/no, on/off, true/false)";
    return -1;
}

/* Parses s into the knob's value; on failure reports it and leaves the value alone. */
static void umpi__knob_parse(const struct umpi_knob_info *k, const char *s)
{
    const char *why = NULL;
    int rc = 0;

    switch (k->type) {
    case UMPI_KNOB_INT: rc = umpi__parse_int(s, (int *) k->value, &why); break;
    case UMPI_KNOB_SIZE: rc = umpi__parse_size(s, (size_t *) k->value, &why); break;
    case UMPI_KNOB_BOOL: rc = umpi__parse_bool(s, (int *) k->value, &why); break;
    case UMPI_KNOB_STRING: {
        /* Copied: the program may change its environment after MPI_Init. Kept for the life of
         * the process, like the table itself. */
        char *copy = strdup(s);
        if (copy == NULL) {
            why = "out of memory";
            rc = -1;
            break;
        }
        *(const char **) k->value = copy;
        break;
    }
    }
    if (rc != 0) {
        char cur[64];
        umpi_knob_format(k, cur, sizeof(cur));
        umpi_log("warning", "%s=\"%s\": %s; keeping %s", k->name, s, why, cur);
    }
}

void umpi_knobs_load(void)
{
    pthread_once(&umpi__names_once, umpi__knobs_names);
    for (int i = 0; i < UMPI__NKNOBS; i++) {
        const char *s = getenv(umpi__knobs[i].name);
        if (s != NULL)
            umpi__knob_parse(&umpi__knobs[i], s);
    }
    /* A misspelled knob silently does nothing; say so when the user asked for diagnostics. */
    if (umpi_config.debug >= 1 && environ != NULL) {
        for (char **e = environ; *e != NULL; e++) {
            if (strncmp(*e, "UMPI_", 5) != 0)
                continue;
            size_t len = strcspn(*e, "=");
            int known = 0;
            for (int i = 0; i < UMPI__NKNOBS && !known; i++)
                known = strlen(umpi__knobs[i].name) == len &&
                        strncmp(umpi__knobs[i].name, *e, len) == 0;
            if (!known)
                umpi_log("warning", "%.*s is not an umpi knob (umpi_info --all lists them)",
                         (int) len, *e);
        }
    }
}

const struct umpi_knob_info *umpi_knobs_table(int *count)
{
    pthread_once(&umpi__names_once, umpi__knobs_names);
    *count = UMPI__NKNOBS;
    return umpi__knobs;
}

void umpi_knob_format(const struct umpi_knob_info *k, char *buf, size_t len)
{
    switch (k->type) {
    case UMPI_KNOB_INT: snprintf(buf, len, "%d", *(const int *) k->value); break;
    case UMPI_KNOB_SIZE: snprintf(buf, len, "%zu", *(const size_t *) k->value); break;
    case UMPI_KNOB_BOOL: snprintf(buf, len, "%s", *(const int *) k->value ? "yes" : "no"); break;
    case UMPI_KNOB_STRING: {
        const char *s = *(const char *const *) k->value;
        snprintf(buf, len, "%s", s ? s : "");
        break;
    }
    }
}
