/* Unit test: the UCX tag layout (wildcard masks) and the MPI_Status byte-count encoding. */
#include "netmod/ucx/umpi_ucx.h"

#include <stdio.h>

static int failures;
#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                \
            failures++;                                                                           \
        }                                                                                         \
    } while (0)

static int matches(ucp_tag_t sent, ucp_tag_t want, ucp_tag_t mask)
{
    return (sent & mask) == (want & mask);
}

static void test_tags(void)
{
    ucp_tag_t t, m;
    ucp_tag_t sent = umpi_ucx_send_tag(6, 1234, 77);
    CHECK(umpi_ucx_tag_source(sent) == 1234);
    CHECK(umpi_ucx_tag_tag(sent) == 77);

    umpi_ucx_recv_tag(6, 1234, 77, &t, &m);
    CHECK(matches(sent, t, m));
    umpi_ucx_recv_tag(6, MPI_ANY_SOURCE, 77, &t, &m);
    CHECK(matches(sent, t, m));
    umpi_ucx_recv_tag(6, 1234, MPI_ANY_TAG, &t, &m);
    CHECK(matches(sent, t, m));
    umpi_ucx_recv_tag(6, MPI_ANY_SOURCE, MPI_ANY_TAG, &t, &m);
    CHECK(matches(sent, t, m));

    /* Other context, source or tag: no match, wildcards or not. */
    umpi_ucx_recv_tag(8, MPI_ANY_SOURCE, MPI_ANY_TAG, &t, &m);
    CHECK(!matches(sent, t, m));
    umpi_ucx_recv_tag(6, 1235, MPI_ANY_TAG, &t, &m);
    CHECK(!matches(sent, t, m));
    umpi_ucx_recv_tag(6, MPI_ANY_SOURCE, 78, &t, &m);
    CHECK(!matches(sent, t, m));

    /* The largest values fit their fields without spilling over. */
    int tag_ub = (1 << UMPI_UCX_TAG_BITS) - 1, src_max = UMPI_UCX_MAX_RANKS - 1;
    uint32_t ctx_max = (1u << UMPI_UCX_CONTEXT_BITS) - 1;
    sent = umpi_ucx_send_tag(ctx_max, src_max, tag_ub);
    CHECK(umpi_ucx_tag_source(sent) == src_max);
    CHECK(umpi_ucx_tag_tag(sent) == tag_ub);
    CHECK((sent & UMPI_UCX_INTERNAL_BIT) == 0);
    umpi_ucx_recv_tag(ctx_max, src_max, tag_ub, &t, &m);
    CHECK(matches(sent, t, m));
    umpi_ucx_recv_tag(ctx_max - 1, MPI_ANY_SOURCE, MPI_ANY_TAG, &t, &m);
    CHECK(!matches(sent, t, m));

    /* MPI_ANY_TAG never matches umpi's internal messages. */
    umpi_ucx_recv_tag(6, MPI_ANY_SOURCE, MPI_ANY_TAG, &t, &m);
    CHECK(!matches(umpi_ucx_send_tag(6, 3, 5) | UMPI_UCX_INTERNAL_BIT, t, m));
}

static void test_status_count(void)
{
    MPI_Status s = {0};
    MPI_Count values[] = {0, 1, 4096, 0x7fffffffLL, 0x80000000LL, 0x123456789aLL, (1LL << 62) + 5};
    for (unsigned i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        umpi_status_set_cancelled(&s, (int) (i & 1));
        umpi_status_set_bytes(&s, values[i]);
        CHECK(umpi_status_get_bytes(&s) == values[i]);
        CHECK(umpi_status_get_cancelled(&s) == (int) (i & 1));
    }
    umpi_status_set_empty(&s);
    CHECK(s.MPI_SOURCE == MPI_ANY_SOURCE && s.MPI_TAG == MPI_ANY_TAG && umpi_status_get_bytes(&s) == 0);
}

int main(void)
{
    test_tags();
    test_status_count();
    printf("%s test_tags\n", failures ? "FAIL" : "PASS");
    return failures != 0;
}
