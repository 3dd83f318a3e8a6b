/*
 * MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size: the "external32"
 * representation (MPI 4.1 sec. 19.3.10): every basic element big-endian, at its standard size,
 * with no holes. On x86-64 Linux the standard sizes are the native ones, so the packed size is the
 * type's size; what changes is the byte order of each basic element, and long double, which
 * external32 stores as IEEE binary128 where the machine has the x87 80-bit format.
 *
 * The conversion visits the basic elements one by one in type-map order (the compiled runs of
 * the pack engine merge elements of different widths, so they cannot be used here); it is the
 * portable path, not the fast one.
 */
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "mpi/gen/umpi_impl.h"

#include <string.h>
#include <wchar.h>

/* external32 sizes (MPI 4.1 Table 19.1) that this file takes as the native ones */
_Static_assert(sizeof(long) == 8 && sizeof(wchar_t) == 4 && sizeof(long double) == 16 && sizeof(MPI_Aint) == 8,
               "native sizes differ from external32: packing must convert widths");

struct umpi__x32 {
    char *p;       /* packed side, advancing */
    int unpack;
};

static int umpi__is_long_double(MPI_Datatype h)
{
    return h == MPI_LONG_DOUBLE || h == MPI_C_LONG_DOUBLE_COMPLEX || h == MPI_CXX_LONG_DOUBLE_COMPLEX ||
           h == MPI_REAL16 || h == MPI_COMPLEX32 || h == MPI_LONG_DOUBLE_INT;
}

static int umpi__is_complex(MPI_Datatype h)
{
    return h == MPI_C_FLOAT_COMPLEX || h == MPI_C_DOUBLE_COMPLEX || h == MPI_C_LONG_DOUBLE_COMPLEX ||
           h == MPI_CXX_FLOAT_COMPLEX || h == MPI_CXX_DOUBLE_COMPLEX || h == MPI_CXX_LONG_DOUBLE_COMPLEX ||
           h == MPI_COMPLEX || h == MPI_DOUBLE_COMPLEX || h == MPI_COMPLEX8 || h == MPI_COMPLEX16 ||
           h == MPI_COMPLEX32;
}

static void umpi__swap(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

/* One value of len bytes at mem: long double as binary128, others byte-reversed. */
static void umpi__unit(struct umpi__x32 *x, char *mem, size_t len, int long_double)
{
    if (long_double) {
        long double ld;
        __float128 q;
        if (x->unpack) {
            umpi__swap((char *) &q, x->p, 16);
            ld = (long double) q;
            memcpy(mem, &ld, sizeof(ld));
        } else {
            memcpy(&ld, mem, sizeof(ld));
            q = (__float128) ld;
            umpi__swap(x->p, (const char *) &q, 16);
        }
        x->p += 16;
        return;
    }
    if (x->unpack)
        umpi__swap(mem, x->p, len);
    else
        umpi__swap(x->p, mem, len);
    x->p += len;
}

static void umpi__basic(struct umpi__x32 *x, const umpi_dtype_t *t, char *base)
{
    int ld = umpi__is_long_double(t->handle);
    for (int b = 0; b < t->nblocks; b++) {
        size_t len = (size_t) t->blocks[b].len;
        char *mem = base + t->blocks[b].disp;
        if (len == 0)
            continue;
        if (t->nblocks == 2) { /* a pair with a hole: value, then the int */
            umpi__unit(x, mem, len, ld && b == 0);
        } else if (umpi__is_complex(t->handle) || t->n_basic == 2) { /* two halves, each a value */
            umpi__unit(x, mem, len / 2, ld);
            umpi__unit(x, mem + len / 2, len / 2, ld);
        } else {
            umpi__unit(x, mem, len, ld);
        }
    }
}

/* Every basic element of one element of t at base, in type-map order. */
static void umpi__walk(struct umpi__x32 *x, const umpi_dtype_t *t, char *base)
{
    if (t->builtin) {
        umpi__basic(x, t, base);
        return;
    }
    const MPI_Count *c = t->counts;
    const umpi_dtype_t *old = t->n_types ? t->types[0] : NULL;
    MPI_Count n = t->n_counts ? c[0] : 0;
    switch (t->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        umpi__walk(x, old, base);
        break;
    case MPI_COMBINER_DARRAY:
        umpi__walk(x, t->shadow, base);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        for (MPI_Count i = 0; i < c[0]; i++)
            umpi__walk(x, old, base + i * old->extent);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = t->combiner == MPI_COMBINER_VECTOR ? c[2] * old->extent : c[2];
        for (MPI_Count i = 0; i < c[0]; i++)
            for (MPI_Count j = 0; j < c[1]; j++)
                umpi__walk(x, old, base + i * stride + j * old->extent);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
        MPI_Aint unit = t->combiner == MPI_COMBINER_INDEXED ? old->extent : 1;
        for (MPI_Count i = 0; i < n; i++)
            for (MPI_Count j = 0; j < c[1 + i]; j++)
                umpi__walk(x, old, base + c[1 + n + i] * unit + j * old->extent);
        break;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
        MPI_Aint unit = t->combiner == MPI_COMBINER_INDEXED_BLOCK ? old->extent : 1;
        for (MPI_Count i = 0; i < n; i++)
            for (MPI_Count j = 0; j < c[1]; j++)
                umpi__walk(x, old, base + c[2 + i] * unit + j * old->extent);
        break;
    }
    case MPI_COMBINER_STRUCT:
        for (MPI_Count i = 0; i < n; i++)
            for (MPI_Count j = 0; j < c[1 + i]; j++)
                umpi__walk(x, t->types[i], base + c[1 + n + i] + j * t->types[i]->extent);
        break;
    case MPI_COMBINER_SUBARRAY: {
        /* odometer over the block, fastest dimension first */
        int nd = t->ints[0], fortran = t->ints[1] == MPI_ORDER_FORTRAN;
        MPI_Count idx[nd];
        memset(idx, 0, sizeof(idx));
        for (;;) {
            MPI_Aint off = 0, mult = 1;
            for (int i = 0; i < nd; i++) {
                int d = fortran ? i : nd - 1 - i;
                off += (c[2 * nd + d] + idx[d]) * mult;
                mult *= c[d];
            }
            umpi__walk(x, old, base + off * old->extent);
            int i = 0;
            for (; i < nd; i++) {
                int d = fortran ? i : nd - 1 - i;
                if (++idx[d] < c[nd + d])
                    break;
                idx[d] = 0;
            }
            if (i == nd)
                break;
        }
        break;
    }
    }
}

static int umpi__datarep(const char *datarep)
{
    if (strcmp(datarep, "external32") == 0)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "unknown data representation '%s' in argument 'datarep' (only "
                           "\"external32\")", datarep);
}

int umpi_impl_pack_external_size(const char *datarep, MPI_Count incount, umpi_dtype_t *datatype_ptr,
                                 MPI_Count *size)
{
    int err = umpi__datarep(datarep);
    if (err != MPI_SUCCESS)
        return err;
    if (incount < 0)
        return umpi_err_create(MPI_ERR_COUNT, "negative count %ld in argument 'incount'", (long) incount);
    *size = incount * datatype_ptr->size; /* standard sizes are the native ones here */
    return MPI_SUCCESS;
}

static int umpi__external(const char *datarep, char *buf, MPI_Count count, const umpi_dtype_t *dt, char *packed,
                          MPI_Count size, MPI_Count *position, int unpack, const char *count_arg)
{
    int err = umpi__datarep(datarep);
    if (err != MPI_SUCCESS)
        return err;
    if (count < 0)
        return umpi_err_create(MPI_ERR_COUNT, "negative count %ld in argument '%s'", (long) count, count_arg);
    MPI_Count bytes = count * dt->size;
    if (*position < 0 || *position > size || bytes > size - *position)
        return umpi_err_create(MPI_ERR_TRUNCATE, "%ld bytes at position %ld do not fit in a packed buffer of %ld "
                               "bytes", (long) bytes, (long) *position, (long) size);
    struct umpi__x32 x = {packed + *position, unpack};
    for (MPI_Count i = 0; i < count; i++)
        umpi__walk(&x, dt, buf + i * dt->extent);
    *position += bytes;
    return MPI_SUCCESS;
}

int umpi_impl_pack_external(const char *datarep, const void *inbuf, MPI_Count incount, umpi_dtype_t *datatype_ptr,
                            void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    return umpi__external(datarep, (char *) inbuf, incount, datatype_ptr, outbuf, outsize, position, 0, "incount");
}

int umpi_impl_unpack_external(const char *datarep, const void *inbuf, MPI_Count insize, MPI_Count *position,
                              void *outbuf, MPI_Count outcount, umpi_dtype_t *datatype_ptr)
{
    return umpi__external(datarep, outbuf, outcount, datatype_ptr, (char *) inbuf, insize, position, 1,
                          "outcount");
}
