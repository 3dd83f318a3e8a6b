/* Reduction operations: contract shared with the ops work (replaced by it at merge). */
#ifndef UMPI_OP_H
#define UMPI_OP_H

#include "core/umpi.h"
#include "core/umpi_obj.h"

typedef struct umpi_op umpi_op_t;
umpi_op_t *umpi_op_get(MPI_Op h);
int umpi_op_is_commutative(const umpi_op_t *op);
int umpi_op_check(const umpi_op_t *op, const umpi_dtype_t *dt, const char *call_arg_context);
void umpi_op_apply(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt);
void umpi_op_retain(umpi_op_t *op);
void umpi_op_release(umpi_op_t *op);

#endif
