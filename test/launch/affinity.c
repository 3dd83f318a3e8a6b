/* Each rank prints the cpus it may run on, read with sched_getaffinity, in the two forms of
 * mpirun --report-bindings ("cpus 0-1,4", "mask 0x13"), so that bind.sh can check the report
 * against what the kernel applied. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    static const char hex[] = "0123456789abcdef";
    char list[4096] = "", mask[2048] = "0x";
    size_t nl = 0, nm = 2;
    int rank, last = -1;
    cpu_set_t set;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        perror("sched_getaffinity");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        last = c;
        if (c > 0 && CPU_ISSET(c - 1, &set) && c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, &set))
            continue;   /* inside a range */
        if (c > 0 && CPU_ISSET(c - 1, &set))
            nl += (size_t)snprintf(list + nl, sizeof(list) - nl, "-%d", c);
        else
            nl += (size_t)snprintf(list + nl, sizeof(list) - nl, "%s%d", nl ? "," : "", c);
    }
    /* hex digits from the highest one with a set bit down, as taskset and hwloc write them */
    for (int d = last < 0 ? 0 : last / 4; d >= 0 && nm + 1 < sizeof(mask); d--) {
        int v = 0;

        for (int b = 0; b < 4; b++)
            v |= CPU_ISSET(d * 4 + b, &set) ? 1 << b : 0;
        mask[nm++] = hex[v];
    }
    mask[nm] = '\0';
    printf("affinity of rank %d: cpus %s, mask %s\n", rank, list, mask);
    MPI_Finalize();
    return 0;
}
