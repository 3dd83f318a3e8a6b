/* dtype_vector: ping-pong latency of a strided vector (8-byte blocks, 16-byte stride); see dtype_bench.h. */
#include "dtype_bench.h"

int main(int argc, char **argv)
{
    return dtype_bench_latency_main(argc, argv, "vector");
}
