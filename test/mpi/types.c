/*
 * Send/Recv of every predefined C datatype (and MPI_BYTE, MPI_PACKED, the pair types, fixed-size
 * integers, complex, MPI_AINT/OFFSET/COUNT) at several counts, eager and rendezvous sizes: the data
 * arrives intact and the status says who, which tag and how many elements.
 */
#include "mtest.h"
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

typedef struct { float v; int i; } float_int;
typedef struct { double v; int i; } double_int;
typedef struct { long v; int i; } long_int;
typedef struct { int v; int i; } int_int;
typedef struct { short v; int i; } short_int;
typedef struct { long double v; int i; } long_double_int;

/* The value of element i in a buffer filled by rank r; small enough for every type. */
#define VAL(i, r) (((i) * 7 + (r) * 3 + 1) % 101)

/* Compares values, not bytes: long double and the pair types have padding that need not travel. */
#define SCALAR(T)                                                                                \
    static void fill_##T(void *b, int n, int r) { for (int i = 0; i < n; i++) ((T *)b)[i] = (T)VAL(i, r); } \
    static int bad_##T(const void *b, int n, int r)                                              \
    {                                                                                            \
        for (int i = 0; i < n; i++)                                                              \
            if (((const T *)b)[i] != (T)VAL(i, r)) return i + 1;                                 \
        return 0;                                                                                \
    }
#define COMPLEX(T, BASE)                                                                         \
    static void fill_##T(void *b, int n, int r)                                                  \
    { for (int i = 0; i < n; i++) ((T *)b)[i] = (BASE)VAL(i, r) + (BASE)VAL(i, r + 1) * I; }    \
    static int bad_##T(const void *b, int n, int r)                                              \
    {                                                                                            \
        for (int i = 0; i < n; i++)                                                              \
            if (((const T *)b)[i] != (BASE)VAL(i, r) + (BASE)VAL(i, r + 1) * I) return i + 1;   \
        return 0;                                                                                \
    }
#define PAIR(T, VT)                                                                              \
    static void fill_##T(void *b, int n, int r)                                                  \
    { for (int i = 0; i < n; i++) { ((T *)b)[i].v = (VT)VAL(i, r); ((T *)b)[i].i = VAL(i, r + 2); } } \
    static int bad_##T(const void *b, int n, int r)                                              \
    {                                                                                            \
        for (int i = 0; i < n; i++)                                                              \
            if (((const T *)b)[i].v != (VT)VAL(i, r) || ((const T *)b)[i].i != VAL(i, r + 2)) return i + 1; \
        return 0;                                                                                \
    }

typedef char char_t; typedef signed char schar_t; typedef unsigned char uchar_t; typedef wchar_t wchar_tt;
typedef unsigned short ushort_t; typedef unsigned uint_t; typedef unsigned long ulong_t;
typedef long long llong_t; typedef unsigned long long ullong_t; typedef long double ldouble_t;
typedef float _Complex fcomplex_t; typedef double _Complex dcomplex_t; typedef long double _Complex lcomplex_t;
typedef bool bool_t; typedef MPI_Aint aint_t; typedef MPI_Offset offset_t; typedef MPI_Count count_t;

SCALAR(char_t) SCALAR(schar_t) SCALAR(uchar_t) SCALAR(wchar_tt) SCALAR(short) SCALAR(ushort_t) SCALAR(int)
SCALAR(uint_t) SCALAR(long) SCALAR(ulong_t) SCALAR(llong_t) SCALAR(ullong_t) SCALAR(float) SCALAR(double)
SCALAR(ldouble_t) SCALAR(int8_t) SCALAR(int16_t) SCALAR(int32_t) SCALAR(int64_t) SCALAR(uint8_t)
SCALAR(uint16_t) SCALAR(uint32_t) SCALAR(uint64_t) SCALAR(aint_t) SCALAR(offset_t) SCALAR(count_t)
COMPLEX(fcomplex_t, float) COMPLEX(dcomplex_t, double) COMPLEX(lcomplex_t, long double)
PAIR(float_int, float) PAIR(double_int, double) PAIR(long_int, long) PAIR(int_int, int) PAIR(short_int, short)
PAIR(long_double_int, long double)

static void fill_bool_t(void *b, int n, int r) { for (int i = 0; i < n; i++) ((bool *)b)[i] = VAL(i, r) & 1; }
static int bad_bool_t(const void *b, int n, int r)
{
    for (int i = 0; i < n; i++)
        if (((const bool *)b)[i] != (bool)(VAL(i, r) & 1)) return i + 1;
    return 0;
}

#define T(mpi, ctype) { mpi, #mpi, sizeof(ctype), 1, fill_##ctype, bad_##ctype }
#define P(mpi, ctype) { mpi, #mpi, sizeof(ctype), 2, fill_##ctype, bad_##ctype } /* two basic elements */
static const struct {
    MPI_Datatype type;
    const char *name;
    size_t size;
    int elems;
    void (*fill)(void *, int, int);
    int (*bad)(const void *, int, int);
} types[] = {
    T(MPI_CHAR, char_t), T(MPI_SIGNED_CHAR, schar_t), T(MPI_UNSIGNED_CHAR, uchar_t), T(MPI_BYTE, uchar_t),
    T(MPI_PACKED, uchar_t), T(MPI_WCHAR, wchar_tt), T(MPI_SHORT, short), T(MPI_UNSIGNED_SHORT, ushort_t),
    T(MPI_INT, int), T(MPI_UNSIGNED, uint_t), T(MPI_LONG, long), T(MPI_UNSIGNED_LONG, ulong_t),
    T(MPI_LONG_LONG_INT, llong_t), T(MPI_LONG_LONG, llong_t), T(MPI_UNSIGNED_LONG_LONG, ullong_t),
    T(MPI_FLOAT, float), T(MPI_DOUBLE, double), T(MPI_LONG_DOUBLE, ldouble_t), T(MPI_INT8_T, int8_t),
    T(MPI_INT16_T, int16_t), T(MPI_INT32_T, int32_t), T(MPI_INT64_T, int64_t), T(MPI_UINT8_T, uint8_t),
    T(MPI_UINT16_T, uint16_t), T(MPI_UINT32_T, uint32_t), T(MPI_UINT64_T, uint64_t), T(MPI_C_BOOL, bool_t),
    T(MPI_C_FLOAT_COMPLEX, fcomplex_t), T(MPI_C_COMPLEX, fcomplex_t), T(MPI_C_DOUBLE_COMPLEX, dcomplex_t),
    T(MPI_C_LONG_DOUBLE_COMPLEX, lcomplex_t), T(MPI_AINT, aint_t), T(MPI_OFFSET, offset_t),
    T(MPI_COUNT, count_t), P(MPI_FLOAT_INT, float_int), P(MPI_DOUBLE_INT, double_int),
    P(MPI_LONG_INT, long_int), P(MPI_2INT, int_int), P(MPI_SHORT_INT, short_int),
    P(MPI_LONG_DOUBLE_INT, long_double_int),
};

int main(int argc, char **argv)
{
    /* 0, tiny, around 1 KiB, and past any eager limit (64 Ki elements of up to 32 bytes). */
    static const int counts[] = { 0, 1, 7, 100, 65536 };
    const int ntypes = (int)(sizeof(types) / sizeof(types[0]));

    mt_init(&argc, &argv);
    /* Pairs 0-1, 2-3, ...; a rank without a partner (odd size) talks to itself. */
    int peer = (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    size_t maxbytes = 65536 * 32 + 64;
    char *sbuf = malloc(maxbytes), *rbuf = malloc(maxbytes);

    for (int t = 0; t < ntypes; t++) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int n = counts[c], tag = t * 10 + (int)c, count = -1, elems = -1;
            MPI_Request req;
            MPI_Status st;

            types[t].fill(sbuf, n, mt_rank);
            memset(rbuf, 0xee, maxbytes);
            MPI_Irecv(rbuf, n + 3, types[t].type, peer, tag, MPI_COMM_WORLD, &req);
            if (t % 2)
                MPI_Send(sbuf, n, types[t].type, peer, tag, MPI_COMM_WORLD);
            else {
                MPI_Request sreq;
                MPI_Isend(sbuf, n, types[t].type, peer, tag, MPI_COMM_WORLD, &sreq);
                MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            }
            MPI_Wait(&req, &st);
            MPI_Get_count(&st, types[t].type, &count);
            /* Pair types are checked in status.c: MPICH 4.0.2 crashes there and Open MPI 4.1 miscounts. */
            if (types[t].elems == 1)
                MPI_Get_elements(&st, types[t].type, &elems);
            else
                elems = n * types[t].elems;
            int bad = types[t].bad(rbuf, n, peer);
            MT_CHECK(bad == 0, "%s count %d: element %d differs", types[t].name, n, bad - 1);
            MT_CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag && count == n,
                     "%s count %d: status source %d tag %d count %d", types[t].name, n, st.MPI_SOURCE,
                     st.MPI_TAG, count);
            MT_CHECK(elems == n * types[t].elems, "%s count %d: MPI_Get_elements %d", types[t].name, n, elems);
            /* Nothing past the message was written. */
            unsigned char *tailp = (unsigned char *)rbuf + (size_t)n * types[t].size;
            MT_CHECK(tailp[0] == 0xee, "%s count %d: receive wrote past the message", types[t].name, n);
        }
    }
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
