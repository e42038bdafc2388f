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

/* X(ID, name, build, kernel name for dtype errors (NULL: none), refused
 * compute dtypes as a mask of 1 << weft_dtype).
 * build: how meta configures the iterator (PyTorch's TensorIterator helper):
 *   BIN    build_borrowing_binary_op   (promote, cast to outputs, safe casting)
 *   BINF   build_borrowing_binary_float_op (BIN + integers to float)
 *   CMP    build_borrowing_comparison_op (bool result unless out= says otherwise)
 *   UN     build_borrowing_unary_op    (all dtypes equal, no promotion)
 *   UNF    build_borrowing_unary_float_op
 *   LNOT   logical_not (bool result, any input/output dtype)
 *   WHERE, FILL: their own */
#define EW_B (1u << WEFT_BOOL)
#define EW_H (1u << WEFT_FLOAT16)
#define EW_BF (1u << WEFT_BFLOAT16)
#define EW_INTS ((1u << WEFT_UINT8) | (1u << WEFT_INT8) | (1u << WEFT_INT16) | (1u << WEFT_INT32) | (1u << WEFT_INT64))
#define EW_FLOATS (EW_H | EW_BF | (1u << WEFT_FLOAT32) | (1u << WEFT_FLOAT64))

#define EW_OPS(X)                                                   \
  X(ADD, "add", BIN, NULL, 0)                                       \
  X(SUB, "sub", BIN, NULL, 0)                                       \
  X(MUL, "mul", BIN, NULL, 0)                                       \
  X(DIV, "div", BINF, NULL, 0)                                      \
  X(FLOOR_DIVIDE, "floor_divide", BIN, "div_floor_cpu", EW_B)       \
  X(REMAINDER, "remainder", BIN, "remainder_cpu", EW_B)             \
  X(POW, "pow", BIN, "pow", EW_B)                                   \
  X(MAXIMUM, "maximum", BIN, NULL, 0)                               \
  X(MINIMUM, "minimum", BIN, NULL, 0)                               \
  X(EQ, "eq", CMP, NULL, 0)                                         \
  X(NE, "ne", CMP, NULL, 0)                                         \
  X(LT, "lt", CMP, NULL, 0)                                         \
  X(LE, "le", CMP, NULL, 0)                                         \
  X(GT, "gt", CMP, NULL, 0)                                         \
  X(GE, "ge", CMP, NULL, 0)                                         \
  X(LOGICAL_AND, "logical_and", CMP, NULL, 0)                       \
  X(LOGICAL_OR, "logical_or", CMP, NULL, 0)                         \
  X(LOGICAL_XOR, "logical_xor", CMP, NULL, 0)                       \
  X(BITWISE_AND, "bitwise_and", BIN, "bitwise_and_cpu", EW_FLOATS)  \
  X(BITWISE_OR, "bitwise_or", BIN, "bitwise_or_cpu", EW_FLOATS)     \
  X(BITWISE_XOR, "bitwise_xor", BIN, "bitwise_xor_cpu", EW_FLOATS)  \
  X(NEG, "neg", UN, NULL, 0)                                        \
  X(ABS, "abs", UN, "abs_cpu", EW_B)                                \
  X(SIGN, "sign", UN, NULL, 0)                                      \
  X(EXP, "exp", UNF, "exp_vml_cpu", EW_H)                           \
  X(LOG, "log", UNF, "log_vml_cpu", EW_H)                           \
  X(LOG1P, "log1p", UNF, "log1p_vml_cpu", EW_H)                     \
  X(EXPM1, "expm1", UNF, "expm1_vml_cpu", EW_H)                     \
  X(SQRT, "sqrt", UNF, "sqrt_vml_cpu", EW_H)                        \
  X(RSQRT, "rsqrt", UNF, "rsqrt_cpu", EW_H)                         \
  X(SIN, "sin", UNF, "sin_vml_cpu", EW_H)                           \
  X(COS, "cos", UNF, "cos_vml_cpu", EW_H)                           \
  X(TAN, "tan", UNF, "tan_vml_cpu", EW_H)                           \
  X(TANH, "tanh", UNF, "tanh_vml_cpu", EW_H)                        \
  X(SIGMOID, "sigmoid", UNF, "sigmoid_cpu", EW_H)                   \
  X(RELU, "relu", UN, "clamp_min_cpu", EW_H)                        \
  X(GELU, "gelu", UN, "GeluKernelImpl", EW_H | EW_B | EW_INTS)      \
  X(ERF, "erf", UNF, "erf_vml_cpu", EW_H)                           \
  X(FLOOR, "floor", UN, "floor_vml_cpu", EW_H | EW_B)               \
  X(CEIL, "ceil", UN, "ceil_vml_cpu", EW_H | EW_B)                  \
  X(ROUND, "round", UN, "round_vml_cpu", EW_H | EW_B)               \
  X(TRUNC, "trunc", UN, "trunc_vml_cpu", EW_H | EW_B)               \
  X(RECIPROCAL, "reciprocal", UNF, NULL, 0)                         \
  X(LOGICAL_NOT, "logical_not", LNOT, NULL, 0)                      \
  X(WHERE, "where", WHERE, NULL, 0)                                 \
  X(FILL, "fill_", FILL, NULL, 0)                                   \
  X(ZERO, "zero_", FILL, NULL, 0)

#define EW__ID(id, name, build, kname, refused) EW_##id,
typedef enum { EW_OPS(EW__ID) EW_OP_COUNT } ew_op;
#undef EW__ID

/* What a row reads besides its operands. */
typedef struct {
  int64_t alpha_i;  /* add/sub alpha for integer compute */
  double alpha_d;   /* and for floating compute (rounded to the compute dtype) */
  int approximate;  /* gelu: 0 none, 1 tanh */
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
