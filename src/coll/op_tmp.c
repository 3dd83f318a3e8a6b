/* TEMPORARY (replaced by the ops work at merge): SUM/PROD/MAX/MIN on contiguous int, long, float, double. */
#include "coll/umpi_op.h"
#include "core/umpi_err.h"

struct umpi_op {
    MPI_Op handle;
};
static struct umpi_op umpi__ops[16];

umpi_op_t *umpi_op_get(MPI_Op h)
{
    if (!umpi_op_valid(h))
        return NULL;
    umpi_op_t *op = &umpi__ops[UMPI_HANDLE_INDEX(h)];
    op->handle = h;
    return op;
}
int umpi_op_is_commutative(const umpi_op_t *op)
{
    (void) op;
    return 1;
}
int umpi_op_check(const umpi_op_t *op, const umpi_dtype_t *dt, const char *ctx)
{
    (void) ctx;
    if (op->handle != MPI_SUM && op->handle != MPI_PROD && op->handle != MPI_MAX && op->handle != MPI_MIN)
        return umpi_err_create(MPI_ERR_OP, "op not supported yet");
    if (dt->handle != MPI_INT && dt->handle != MPI_LONG && dt->handle != MPI_FLOAT && dt->handle != MPI_DOUBLE)
        return umpi_err_create(MPI_ERR_OP, "type not supported yet");
    return MPI_SUCCESS;
}
#define LOOP(T)                                                                                            \
    do {                                                                                                   \
        const T *x = in;                                                                                   \
        T *y = inout;                                                                                      \
        for (MPI_Count i = 0; i < count; i++)                                                              \
            y[i] = op->handle == MPI_SUM    ? x[i] + y[i]                                                  \
                   : op->handle == MPI_PROD ? x[i] * y[i]                                                  \
                   : op->handle == MPI_MAX  ? (x[i] > y[i] ? x[i] : y[i])                                  \
                                            : (x[i] < y[i] ? x[i] : y[i]);                                 \
    } while (0)
void umpi_op_apply(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt)
{
    if (dt->handle == MPI_INT)
        LOOP(int);
    else if (dt->handle == MPI_LONG)
        LOOP(long);
    else if (dt->handle == MPI_FLOAT)
        LOOP(float);
    else
        LOOP(double);
}
void umpi_op_retain(umpi_op_t *op)
{
    (void) op;
}
void umpi_op_release(umpi_op_t *op)
{
    (void) op;
}
