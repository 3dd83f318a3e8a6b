/* dtype_struct: ping-pong latency of an array of {int; double; int} structs; see dtype_bench.h. */
#include "dtype_bench.h"

int main(int argc, char **argv)
{
    return dtype_bench_latency_main(argc, argv, "struct");
}
