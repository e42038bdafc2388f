/* The elementwise ops on the WebGPU device: the same meta step as on the cpu
 * (elementwise.c: broadcasting, type promotion, out= rules, the iterator's
 * plan); only the loop differs. Each op's body is one WGSL expression per
 * compute dtype below, over a0, a1 (the inputs in the compute dtype) and e0
 * (alpha); the strided map family (src/webgpu/wgsl.c) makes the shader. An op
 * or dtype without an expression is refused, naming both. */
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

typedef struct {
  const char *f32, *i32, *b;
} ew_wgsl;

/* float NaN rules follow PyTorch: maximum / minimum propagate NaN, relu keeps it */
static ew_wgsl wgsl_of(ew_op op) {
  switch (op) {
    case EW_add: return (ew_wgsl){"a0 + e0 * a1", "a0 + e0 * a1", "a0 || (e0 && a1)"};
    case EW_sub: return (ew_wgsl){"a0 - e0 * a1", "a0 - e0 * a1", NULL};
    case EW_mul: return (ew_wgsl){"a0 * a1", "a0 * a1", "a0 && a1"};
    case EW_div: return (ew_wgsl){"a0 / a1", NULL, NULL};
    case EW_maximum: return (ew_wgsl){"select(max(a0, a1), a0 + a1, a0 != a0 || a1 != a1)", "max(a0, a1)", "a0 || a1"};
    case EW_minimum: return (ew_wgsl){"select(min(a0, a1), a0 + a1, a0 != a0 || a1 != a1)", "min(a0, a1)", "a0 && a1"};
    case EW_eq: return (ew_wgsl){"a0 == a1", "a0 == a1", "a0 == a1"};
    case EW_ne: return (ew_wgsl){"a0 != a1", "a0 != a1", "a0 != a1"};
    case EW_lt: return (ew_wgsl){"a0 < a1", "a0 < a1", "!a0 && a1"};
    case EW_le: return (ew_wgsl){"a0 <= a1", "a0 <= a1", "!a0 || a1"};
    case EW_gt: return (ew_wgsl){"a0 > a1", "a0 > a1", "a0 && !a1"};
    case EW_ge: return (ew_wgsl){"a0 >= a1", "a0 >= a1", "a0 || !a1"};
    case EW_logical_and: return (ew_wgsl){"a0 != 0.0 && a1 != 0.0", "a0 != 0 && a1 != 0", "a0 && a1"};
    case EW_logical_or: return (ew_wgsl){"a0 != 0.0 || a1 != 0.0", "a0 != 0 || a1 != 0", "a0 || a1"};
    case EW_neg: return (ew_wgsl){"-a0", "-a0", NULL};
    case EW_abs: return (ew_wgsl){"abs(a0)", "abs(a0)", "a0"};
    case EW_relu: return (ew_wgsl){"select(a0, 0.0, a0 < 0.0)", "max(a0, 0)", NULL};
    case EW_exp: return (ew_wgsl){"exp(a0)", NULL, NULL};
    case EW_log: return (ew_wgsl){"log(a0)", NULL, NULL};
    case EW_sqrt: return (ew_wgsl){"sqrt(a0)", NULL, NULL};
    case EW_rsqrt: return (ew_wgsl){"inverseSqrt(a0)", NULL, NULL};
    case EW_sin: return (ew_wgsl){"sin(a0)", NULL, NULL};
    case EW_cos: return (ew_wgsl){"cos(a0)", NULL, NULL};
    case EW_tanh: return (ew_wgsl){"tanh(a0)", NULL, NULL};
    case EW_sigmoid: return (ew_wgsl){"1.0 / (1.0 + exp(-a0))", NULL, NULL};
    case EW_reciprocal: return (ew_wgsl){"1.0 / a0", NULL, NULL};
    case EW_floor: return (ew_wgsl){"floor(a0)", "a0", NULL};
    case EW_ceil: return (ew_wgsl){"ceil(a0)", "a0", NULL};
    case EW_trunc: return (ew_wgsl){"trunc(a0)", "a0", NULL};
    case EW_logical_not: return (ew_wgsl){"a0 == 0.0", "a0 == 0", "!a0"};
    case EW_sign: return (ew_wgsl){"sign(a0)", "sign(a0)", "a0"};
    case EW_silu: return (ew_wgsl){"a0 / (1.0 + exp(-a0))", NULL, NULL};
    case EW_tan: return (ew_wgsl){"tan(a0)", NULL, NULL};
    case EW_exp2: return (ew_wgsl){"exp2(a0)", NULL, NULL};
    /* condition, self, other: all loaded in the result's dtype */
    case EW_where: return (ew_wgsl){"select(a2, a1, a0 != 0.0)", "select(a2, a1, a0 != 0)", "select(a2, a1, a0)"};
    case EW_fill_: case EW_zero_: return (ew_wgsl){"e0", "e0", "e0"};
    default: return (ew_wgsl){NULL, NULL, NULL};
  }
}

static const char* expr_for(ew_op op, weft_dtype t) {
  ew_wgsl w = wgsl_of(op);
  return t == WEFT_FLOAT32 ? w.f32 : t == WEFT_INT32 ? w.i32 : t == WEFT_BOOL ? w.b : NULL;
}

weft_status weft__ew_webgpu(ew_op op, const char* name, const weft_iter* it, weft_dtype compute, weft_dtype result,
                            double number) {
  if (op == EW_where) compute = result; /* the condition is converted to it, as the values are */
  const char* expr = expr_for(op, compute);
  if (!expr)
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: not implemented on the webgpu device for %s yet", name,
                       weft_dtype_name(compute));
  weft__webgpu_map m = {.name = name, .expr = expr, .compute = compute, .result = result, .nin = it->ntensors - 1};
  weft__webgpu_describe(it, &m, compute);
  if (m.numel == 0) return WEFT_OK;
  m.nextra = 1;
  m.extra[0] = weft__webgpu_bits(number, compute);
  weft_tensor* snapshot;
  weft_status s = weft__webgpu_resolve_aliases(name, &m, it->ops[0].tensor, &snapshot);
  weft__webgpu_program p;
  if (s == WEFT_OK) s = weft__webgpu_map_program(name, &m, &p);
  if (s == WEFT_OK) s = weft__webgpu_run(name, &p);
  weft_tensor_release(snapshot);
  return s;
}
