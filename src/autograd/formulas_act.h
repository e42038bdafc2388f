/* The activations' gradients (included by formulas.c, whose helpers and
 * argument macros these use): the first derivative is one fused backward op
 * of the op table (elu_backward, ...), as in PyTorch's derivatives.yaml;
 * the backward ops' own derivatives are written over recorded ops, so a
 * createGraph pass differentiates them again. NULL in, NULL out. */

/* ---- first derivatives: the fused backward ops ---- */
static T elu_bw(weft__bctx* c, T g, weft_scalar alpha, weft_scalar scale, weft_scalar input_scale, bool is_result,
                T x) {
  return g && x ? keep(c, weft_elu_backward(g, alpha, scale, input_scale, is_result, x)) : NULL;
}
static T hardtanh_bw(weft__bctx* c, T g, T x, weft_scalar lo, weft_scalar hi) {
  return g && x ? keep(c, weft_hardtanh_backward(g, x, lo, hi)) : NULL;
}
static T leaky_relu_bw(weft__bctx* c, T g, T x, weft_scalar slope, bool is_result) {
  return g && x ? keep(c, weft_leaky_relu_backward(g, x, slope, is_result)) : NULL;
}
static T softplus_bw(weft__bctx* c, T g, T x, weft_scalar beta, weft_scalar threshold) {
  return g && x ? keep(c, weft_softplus_backward(g, x, beta, threshold)) : NULL;
}
/* silu, mish, hardswish, hardsigmoid, log_sigmoid: (grad_output, self) */
static T act_bw(weft__bctx* c, op2_fn f, T g, T x) { return call2(c, f, g, x); }

/* ---- second derivatives, with respect to the backward op's self ---- */
static T sigmoid_of(weft__bctx* c, T x) { return call1(c, weft_sigmoid, x); }

/* elu_backward: d/dx of its gradient; the negative branch only (PyTorch's elu_double_backward) */
static T elu_double_backward(weft__bctx* c, T gg, T go, double input_scale, bool is_result, T x) {
  T prod = mul_scalar(c, mul(c, gg, go), input_scale);
  if (is_result) return where0(c, calls(c, weft_le_scalar, x, 0.0), prod);
  T d = elu_bw(c, prod, SC(1), SC(2), SC(3), false, x);
  return where0(c, calls(c, weft_lt_scalar, x, 0.0), d);
}
/* softplus_backward: gg go beta z / (z + 1)^2 where x beta <= threshold */
static T softplus_double_backward(weft__bctx* c, T gg, T go, T x, double beta, double threshold) {
  T z = exp(c, mul_scalar(c, x, beta));
  T z1 = add_scalar(c, z, 1.0);
  T d = div(c, mul_scalar(c, mul(c, mul(c, gg, go), z), beta), mul(c, z1, z1));
  return where0(c, calls(c, weft_le_scalar, mul_scalar(c, x, beta), threshold), d);
}
/* silu_backward: gg go s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x) */
static T silu_double_backward(weft__bctx* c, T gg, T go, T x) {
  T s = sigmoid_of(c, x);
  T ds = mul(c, s, rsub_scalar(c, s, 1.0));
  T k = add_scalar(c, mul(c, x, rsub_scalar(c, mul_scalar(c, s, 2.0), 1.0)), 2.0);
  return mul(c, mul(c, mul(c, gg, go), ds), k);
}
/* hardswish_backward: gg go / 3 inside (-3, 3) */
static T hardswish_double_backward(weft__bctx* c, T gg, T go, T x) {
  T in = call2(c, weft_logical_and, calls(c, weft_gt_scalar, x, -3.0), calls(c, weft_lt_scalar, x, 3.0));
  return where0(c, in, mul_scalar(c, mul(c, gg, go), 1.0 / 3.0));
}
/* log_sigmoid_backward (go sigmoid(-x)): -gg go s (1 - s), s = sigmoid(x) */
static T log_sigmoid_double_backward(weft__bctx* c, T gg, T go, T x) {
  T s = sigmoid_of(c, x);
  return neg(c, mul(c, mul(c, gg, go), mul(c, s, rsub_scalar(c, s, 1.0))));
}
