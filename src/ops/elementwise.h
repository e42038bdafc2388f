/* Elementwise ops (issue 5): internal pieces shared by elementwise.c (meta +
 * impl + front ends) and elementwise_loops.c (typed rows). Not installed. */
#ifndef WEFT_OPS_ELEMENTWISE_H
#define WEFT_OPS_ELEMENTWISE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/dispatch.h"
#include "weft/dtype.h"
#include "weft/tensor.h"

struct weft_kernels;

/* The op table (EW_OPS) and its refused-dtype masks. */
#include "ops/elementwise_table.h"

#define EW__ID(name, build, dtypes, args, overloads, kname, refused, simd) EW_##name,
typedef enum { EW_OPS(EW__ID) EW_OP_COUNT } ew_op;
#undef EW__ID

/* What a row reads besides its operands. */
typedef struct {
  int64_t alpha_i;  /* add/sub alpha for integer compute */
  double alpha_d;   /* and for floating compute (rounded to the compute dtype) */
  int approximate;  /* gelu: 0 none, 1 tanh */
  double sp[4];     /* the schema's positional numbers (elementwise_table.h), in order */
  atomic_int* zero_division; /* set by integer floor_divide/remainder by 0 */
} ew_params;

/* One row of n elements: y[i] = op(x0[i], x1[i], ...), byte strides (0:
 * broadcast). All operands in the compute dtype, the output in the op's
 * result dtype (bool for comparisons and logical_not). */
typedef void ew_row_fn(size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs,
                       const ew_params* p);

/* The plain-C row of op for compute dtype t; NULL when none. */
ew_row_fn* weft__ew_row(ew_op op, weft_dtype t);

/* The kernel table elementwise ops use (default: weft__kernels()); tests
 * switch to weft__kernels_scalar() or NULL (plain C rows only). */
void weft__ew_set_kernels(const struct weft_kernels* k);

/* Registers the CPU and Meta kernels of every elementwise.def op. */
weft_status weft__elementwise_register(void);

#endif
