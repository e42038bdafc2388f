/* The elementwise op table: each operator once, one line each (the
 * counterpart of native_functions.yaml for issue 5's ops). Everything else
 * expands from it:
 *   by the preprocessor (src/ops/elementwise.h, elementwise.c,
 *   elementwise_loops.c): the ew_op enum (EW_<name>), the descriptors, the
 *   typed plain-C rows and their table, the f32 SIMD kernels per op;
 *   by src/ops/gen_elementwise.mjs (run by npm run build; a test fails when
 *   the committed outputs differ): the schemas (elementwise.def), the CPU/Meta
 *   kernels (elementwise_kernels.inc) and the public entry points
 *   (include/weft/elementwise.h); from those, scripts/gen_types.mjs writes the
 *   TypeScript declarations (js/optable.d.ts) and
 *   tests/fixtures/gen_ops_fixtures.py reads its op lists.
 * Adding an op: its line here, its scalar definition I_<name> / F_<name> /
 * C_<name> in elementwise_loops.c (and, for a SIMD kernel, the kernel and
 * its src/kernels/kernels.inc line), then `npm run build` and the PyTorch
 * cases (/usr/bin/python3 tests/fixtures/gen_ops_fixtures.py).
 *
 * X(name, build, dtypes, args, overloads, kname, refused, simd)
 *   name       PyTorch's name (a trailing _ for ops that only exist in place)
 *   build      how meta configures the iterator (PyTorch's TensorIterator helper):
 *                BIN    build_borrowing_binary_op (promote, cast to outputs, safe casting)
 *                BINF   build_borrowing_binary_float_op (BIN + integers to float)
 *                CMP    build_borrowing_comparison_op (bool result unless out= says otherwise)
 *                UN     build_borrowing_unary_op (all dtypes equal, no promotion)
 *                UNF    build_borrowing_unary_float_op
 *                LNOT   logical_not (bool result, any input/output dtype)
 *                WHERE, FILL: their own
 *   dtypes     the compute dtypes with a plain-C row: IF (bool, integers and
 *              floating), I (bool and integers), F (floating), NONE. The row
 *              is the build's template (elementwise_loops.c) over the op's
 *              scalar definition I_<name> (integers, in int64_t), F_<name>
 *              (floating, in float or double) or C_<name> (comparisons)
 *   args       the schema arguments of the functional form; the operands
 *              are its positional Tensors; its positional numbers (Scalar,
 *              bool: leaky_relu's negative_slope, elu_backward's is_result;
 *              at most 4) reach the rows as doubles (ew_params.sp, in
 *              schema order); the keyword-only ones (alpha, approximate) are
 *              passed to weft__ew by name
 *   overloads  PyTorch's overload names, each a schema: default (none),
 *              Tensor, Scalar, ...; a leading _ is the in-place form, a
 *              trailing out the out= form. Which operands are Scalars
 *              follows the name (Scalar: the last ones, Scalar_Tensor: self,
 *              ScalarSelf / ScalarOther: that one) unless :<T|S per operand>
 *              says; the C name (weft_<cname>) follows the operand kinds
 *              (add_scalar_out, pow_scalar_tensor, where_scalar_self) unless
 *              =<cname> says
 *   kname      the kernel PyTorch names in dtype errors ("... not implemented
 *              for 'Bool'"); NULL: none
 *   refused    the compute dtypes that raise that error (mask of 1 << weft_dtype)
 *   simd       the f32 SIMD kernels (src/kernels/kernels.inc) serving float32
 *              rows: NONE; UNARY(f) contiguous rows; VMATH(f) a transcendental
 *              kernel (vunary_math.c, the code F_<name> runs per element),
 *              also strided / float16 / bfloat16 rows through a float buffer;
 *              BINARY(array-array, array-scalar, scalar-array);
 *              COMPARE(array-array, array-scalar, scalar-array) */
#ifndef WEFT_OPS_ELEMENTWISE_TABLE_H
#define WEFT_OPS_ELEMENTWISE_TABLE_H

#define EW_B (1u << WEFT_BOOL)
#define EW_H (1u << WEFT_FLOAT16)
#define EW_BF (1u << WEFT_BFLOAT16)
#define EW_INTS ((1u << WEFT_UINT8) | (1u << WEFT_INT8) | (1u << WEFT_INT16) | (1u << WEFT_INT32) | (1u << WEFT_INT64))
#define EW_FLOATS (EW_H | EW_BF | (1u << WEFT_FLOAT32) | (1u << WEFT_FLOAT64))

/* clang-format off */
#define EW_OPS(X) \
  X(add, BIN, IF, "Tensor self, Tensor other, *, Scalar alpha=1", "Tensor Scalar _Tensor _Scalar out Scalar_out", NULL, 0, BINARY(vadd, vaddc, vraddc)) \
  X(sub, BIN, IF, "Tensor self, Tensor other, *, Scalar alpha=1", "Tensor Scalar _Tensor _Scalar out Scalar_out", NULL, 0, BINARY(vsub, vsubc, vrsubc)) \
  X(mul, BIN, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar out Scalar_out", NULL, 0, BINARY(vmul, vmulc, vmulc)) \
  X(div, BINF, F, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar out Scalar_out", NULL, 0, BINARY(vdiv, vdivc, vrdivc)) \
  X(floor_divide, BIN, IF, "Tensor self, Tensor other", "default Scalar _Tensor _Scalar out", "div_floor_cpu", EW_B, NONE) \
  X(remainder, BIN, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out Scalar_Tensor", "remainder_cpu", EW_B, NONE) \
  X(pow, BIN, IF, "Tensor self, Tensor exponent", "Tensor_Tensor Tensor_Scalar Scalar:ST _Tensor _Scalar Tensor_Tensor_out Tensor_Scalar_out Scalar_out:ST", "pow", EW_B, NONE) \
  X(maximum, BIN, IF, "Tensor self, Tensor other", "default out", NULL, 0, BINARY(vmax, vmaxc, vmaxc)) \
  X(minimum, BIN, IF, "Tensor self, Tensor other", "default out", NULL, 0, BINARY(vmin, vminc, vminc)) \
  X(eq, CMP, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out", NULL, 0, COMPARE(veq, veqc, veqc)) \
  X(ne, CMP, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out", NULL, 0, COMPARE(vne, vnec, vnec)) \
  X(lt, CMP, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out", NULL, 0, COMPARE(vlt, vltc, vgtc)) \
  X(le, CMP, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out", NULL, 0, COMPARE(vle, vlec, vgec)) \
  X(gt, CMP, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out", NULL, 0, COMPARE(vgt, vgtc, vltc)) \
  X(ge, CMP, IF, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out", NULL, 0, COMPARE(vge, vgec, vlec)) \
  X(logical_and, CMP, IF, "Tensor self, Tensor other", "default _default out", NULL, 0, NONE) \
  X(logical_or, CMP, IF, "Tensor self, Tensor other", "default _default out", NULL, 0, NONE) \
  X(logical_xor, CMP, IF, "Tensor self, Tensor other", "default _default out", NULL, 0, NONE) \
  X(bitwise_and, BIN, I, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out Scalar_Tensor", "bitwise_and_cpu", EW_FLOATS, NONE) \
  X(bitwise_or, BIN, I, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out Scalar_Tensor", "bitwise_or_cpu", EW_FLOATS, NONE) \
  X(bitwise_xor, BIN, I, "Tensor self, Tensor other", "Tensor Scalar _Tensor _Scalar Tensor_out Scalar_out Scalar_Tensor", "bitwise_xor_cpu", EW_FLOATS, NONE) \
  X(neg, UN, IF, "Tensor self", "default _default out", NULL, 0, UNARY(vneg)) \
  X(abs, UN, IF, "Tensor self", "default _default out", "abs_cpu", EW_B, UNARY(vabs)) \
  X(sign, UN, IF, "Tensor self", "default _default out", NULL, 0, NONE) \
  X(exp, UNF, F, "Tensor self", "default _default out", "exp_vml_cpu", EW_H, VMATH(vexp)) \
  X(exp2, UNF, F, "Tensor self", "default _default out", NULL, 0, NONE) \
  X(log, UNF, F, "Tensor self", "default _default out", "log_vml_cpu", EW_H, VMATH(vlog)) \
  X(log1p, UNF, F, "Tensor self", "default _default out", "log1p_vml_cpu", EW_H, VMATH(vlog1p)) \
  X(expm1, UNF, F, "Tensor self", "default _default out", "expm1_vml_cpu", EW_H, VMATH(vexpm1)) \
  X(sqrt, UNF, F, "Tensor self", "default _default out", "sqrt_vml_cpu", EW_H, UNARY(vsqrt)) \
  X(rsqrt, UNF, F, "Tensor self", "default _default out", "rsqrt_cpu", EW_H, UNARY(vrsqrt)) \
  X(sin, UNF, F, "Tensor self", "default _default out", "sin_vml_cpu", EW_H, VMATH(vsin)) \
  X(cos, UNF, F, "Tensor self", "default _default out", "cos_vml_cpu", EW_H, VMATH(vcos)) \
  X(tan, UNF, F, "Tensor self", "default _default out", "tan_vml_cpu", EW_H, VMATH(vtan)) \
  X(tanh, UNF, F, "Tensor self", "default _default out", "tanh_vml_cpu", EW_H, VMATH(vtanh)) \
  X(sigmoid, UNF, F, "Tensor self", "default _default out", "sigmoid_cpu", EW_H, VMATH(vsigmoid)) \
  X(relu, UN, IF, "Tensor self", "default _default out", "clamp_min_cpu", EW_H, UNARY(vrelu)) \
  X(gelu, UN, F, "Tensor self, *, str approximate=\"none\"", "default _default out", "GeluKernelImpl", EW_H | EW_B | EW_INTS, VMATH(vgelu)) \
  X(elu, UN, F, "Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1", "default _default out", "elu_cpu", EW_H | EW_B | EW_INTS, VMATH(velu)) \
  X(elu_backward, BIN, F, "Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result", "default", "elu_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(hardtanh, UN, IF, "Tensor self, Scalar min_val=-1, Scalar max_val=1", "default _default out", "clamp_scalar_cpu", EW_H, UNARY(vhardtanh)) \
  X(hardtanh_backward, BIN, F, "Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val", "default", "hardtanh_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(relu6, UN, IF, "Tensor self", "default", "clamp_scalar_cpu", EW_H, UNARY(vhardtanh)) \
  X(leaky_relu, UN, F, "Tensor self, Scalar negative_slope=0.01", "default _default out", "leaky_relu_cpu", EW_H | EW_B | EW_INTS, UNARY(vleaky_relu)) \
  X(leaky_relu_backward, BIN, F, "Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result", "default", "leaky_relu_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(softplus, UN, F, "Tensor self, Scalar beta=1, Scalar threshold=20", "default out", "softplus_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(softplus_backward, BIN, F, "Tensor grad_output, Tensor self, Scalar beta, Scalar threshold", "default", "softplus_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(silu, UN, F, "Tensor self", "default _default out", "silu_cpu", EW_H | EW_B | EW_INTS, VMATH(vsilu)) \
  X(silu_backward, BIN, F, "Tensor grad_output, Tensor self", "default", "silu_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(mish, UN, F, "Tensor self", "default _default out", "mish_cpu", EW_H | EW_BF | EW_B | EW_INTS, NONE) \
  X(mish_backward, BIN, F, "Tensor grad_output, Tensor self", "default", "mish_backward_cpu", EW_H | EW_BF | EW_B | EW_INTS, NONE) \
  X(hardswish, UN, F, "Tensor self", "default _default out", "hardswish_cpu", EW_H | EW_B | EW_INTS, UNARY(vhardswish)) \
  X(hardswish_backward, BIN, F, "Tensor grad_output, Tensor self", "default", "hardswish_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(hardsigmoid, UN, F, "Tensor self", "default _default out", "hardsigmoid_cpu", EW_H | EW_B | EW_INTS, UNARY(vhardsigmoid)) \
  X(hardsigmoid_backward, BIN, F, "Tensor grad_output, Tensor self", "default", "hardsigmoid_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(log_sigmoid, UN, F, "Tensor self", "default out", "log_sigmoid_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(log_sigmoid_backward, BIN, F, "Tensor grad_output, Tensor self", "default", "log_sigmoid_backward_cpu", EW_H | EW_B | EW_INTS, NONE) \
  X(erf, UNF, F, "Tensor self", "default _default out", "erf_vml_cpu", EW_H, VMATH(verf)) \
  X(floor, UN, IF, "Tensor self", "default _default out", "floor_vml_cpu", EW_H | EW_B, UNARY(vfloor)) \
  X(ceil, UN, IF, "Tensor self", "default _default out", "ceil_vml_cpu", EW_H | EW_B, UNARY(vceil)) \
  X(round, UN, IF, "Tensor self", "default _default out", "round_vml_cpu", EW_H | EW_B, UNARY(vround)) \
  X(trunc, UN, IF, "Tensor self", "default _default out", "trunc_vml_cpu", EW_H | EW_B, UNARY(vtrunc)) \
  X(reciprocal, UNF, F, "Tensor self", "default _default out", NULL, 0, UNARY(vrecip)) \
  X(logical_not, LNOT, IF, "Tensor self", "default _default out", NULL, 0, NONE) \
  X(where, WHERE, IF, "Tensor condition, Tensor self, Tensor other", "self ScalarSelf ScalarOther Scalar self_out", NULL, 0, NONE) \
  X(fill_, FILL, NONE, "Tensor self, Tensor value", "_Tensor=fill_tensor_", NULL, 0, NONE) \
  X(zero_, FILL, NONE, "Tensor self", "_default", NULL, 0, NONE) \
  X(atan2, BINF, F, "Tensor self, Tensor other", "default _default out", "atan2_cpu", EW_H, NONE) \
  X(hypot, BIN, F, "Tensor self, Tensor other", "default _default out", "hypot_cpu", EW_H | EW_B | EW_INTS, NONE)
/* clang-format on */

#endif
