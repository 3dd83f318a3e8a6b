/*
 * Minimal harness of the C unit tests: CHECK prints a FAIL line for each broken expectation,
 * unit_done() prints one PASS/FAIL summary line and gives the exit status.
 */
#ifndef UMPI_UNIT_H
#define UMPI_UNIT_H

#include <stdio.h>

static int unit_failures, unit_checks;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        unit_checks++;                                                                            \
        if (!(cond)) {                                                                            \
            unit_failures++;                                                                      \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                \
            printf(__VA_ARGS__);                                                                  \
            printf("\n");                                                                         \
        }                                                                                         \
    } while (0)

/* One line per group of checks, so the log shows what was covered. */
#define SECTION(name)                                                                             \
    for (int unit__f0 = unit_failures, unit__once = 1; unit__once;                               \
         unit__once = 0, printf("%s %s\n", unit_failures == unit__f0 ? "PASS" : "FAIL", name))

static inline int unit_done(const char *prog)
{
    printf("%s %s: %d checks, %d failed\n", unit_failures ? "FAIL" : "PASS", prog, unit_checks,
           unit_failures);
    return unit_failures ? 1 : 0;
}

#endif
