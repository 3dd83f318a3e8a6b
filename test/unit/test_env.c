/* Unit test of the environment inquiries (src/api/env.c) that need no running job. */
#include "core/umpi_obj.h"
#include "core/umpi_err.h"
#include "mpi/gen/umpi_impl.h"
#include "unit.h"

#include <stdint.h>
#include <string.h>

int main(void)
{
    int flag, a, b;

    SECTION("state") {
        umpi_global.state = UMPI_STATE_PRE_INIT;
        CHECK(umpi_impl_initialized(&flag) == MPI_SUCCESS && !flag, "not initialized yet");
        CHECK(umpi_impl_finalized(&flag) == MPI_SUCCESS && !flag, "not finalized yet");
        umpi_global.state = UMPI_STATE_INITIALIZED;
        CHECK(umpi_impl_initialized(&flag) == MPI_SUCCESS && flag, "initialized");
        umpi_global.state = UMPI_STATE_FINALIZED;
        CHECK(umpi_impl_initialized(&flag) == MPI_SUCCESS && flag, "still initialized after finalize");
        CHECK(umpi_impl_finalized(&flag) == MPI_SUCCESS && flag, "finalized");
        umpi_global.state = UMPI_STATE_INITIALIZED;
    }

    SECTION("threads and versions") {
        umpi_global.thread_level = MPI_THREAD_FUNNELED;
        umpi_global.main_thread = pthread_self();
        CHECK(umpi_impl_query_thread(&a) == MPI_SUCCESS && a == MPI_THREAD_FUNNELED, "query_thread");
        CHECK(umpi_impl_is_thread_main(&flag) == MPI_SUCCESS && flag, "main thread");
        CHECK(umpi_impl_get_version(&a, &b) == MPI_SUCCESS && a == 4 && b == 1, "MPI %d.%d", a, b);
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        CHECK(umpi_impl_get_library_version(v, &a) == MPI_SUCCESS && a == (int) strlen(v) &&
              strncmp(v, "umpi ", 5) == 0 && strstr(v, "UCX") && strstr(v, "PMIx"), "'%s'", v);
        printf("library version: %s\n", v);
        char name[MPI_MAX_PROCESSOR_NAME];
        CHECK(umpi_impl_get_processor_name(name, &a) == MPI_SUCCESS && strcmp(name, "unit-host") == 0 && a == 9,
              "'%s' %d", name, a);
    }

    SECTION("clocks") {
        double t0 = umpi_impl_wtime(), tick = umpi_impl_wtick();
        CHECK(tick > 0 && tick <= 1e-6, "tick %g", tick);
        double t1;
        do
            t1 = umpi_impl_wtime();
        while (t1 == t0);
        CHECK(t1 > t0 && t1 - t0 < 0.1, "monotonic %g -> %g", t0, t1);
    }

    SECTION("comm rank and size") {
        CHECK(umpi_impl_comm_rank(&umpi_comm_world, &a) == MPI_SUCCESS && a == 0, "rank");
        CHECK(umpi_impl_comm_size(&umpi_comm_world, &a) == MPI_SUCCESS && a == 1, "size");
    }

    SECTION("alloc_mem") {
        void *p = NULL;
        CHECK(umpi_impl_alloc_mem(1000, MPI_INFO_NULL, &p) == MPI_SUCCESS && p != NULL &&
              ((uintptr_t) p % 64) == 0, "aligned block");
        memset(p, 1, 1000);
        CHECK(umpi_impl_free_mem(p) == MPI_SUCCESS, "free");
        p = NULL;
        CHECK(umpi_impl_alloc_mem(0, MPI_INFO_NULL, &p) == MPI_SUCCESS && p != NULL, "size 0");
        umpi_impl_free_mem(p);
        int code = umpi_impl_alloc_mem((MPI_Aint) 1 << 62, MPI_INFO_NULL, &p);
        CHECK(umpi_err_class(code) == MPI_ERR_NO_MEM, "huge: class %d", umpi_err_class(code));
    }
    return unit_done("test_env");
}
