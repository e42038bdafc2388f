/* Elementwise ops (issue 5): a meta step, then an impl step, per op, as
 * PyTorch's structured kernels do (BinaryOps.cpp TORCH_META_FUNC2(add, Tensor)
 * and TORCH_IMPL_FUNC(add_out)).
 *
 *   meta  argument checks PyTorch makes before building, then the
 *         TensorIterator config of the op's kind (binary / binary float /
 *         comparison / unary / unary float / ...): broadcasting, type
 *         promotion with Python numbers as wrapped scalars, out= resizing and
 *         safe-cast checks, overlap checks. Then the dtype checks PyTorch's
 *         kernels make (AT_DISPATCH's "not implemented for").
 *   impl  weft_iter_for_each with ew_loop, which per row takes the f32 SIMD
 *         kernel of src/kernels when one fits (contiguous, or one stride-0
 *         operand), else the typed plain-C row (elementwise_loops.c);
 *         operands whose memory dtype is not the compute dtype go through
 *         small stack buffers, converted with the cast kernels.
 * The Meta kernel is the same function: the iterator allocates meta outputs
 * and for_each does nothing on them. */
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "base/half.h"
#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/elementwise.h"
#include "ops/ops.h"
#include "ops/webgpu_ops.h"
#include "weft/copy.h"
#include "weft/iter.h"

/* ---- the op descriptors ---- */

typedef enum { K_BIN, K_BINF, K_CMP, K_UN, K_UNF, K_LNOT, K_WHERE, K_FILL } ew_kind;

typedef struct {
  const char* name;
  ew_kind kind;
  const char* kname;
  unsigned refused;
} ew_desc;

#define EW__DESC(name, build, dtypes, args, overloads, kname, refused, simd) \
  [EW_##name] = {#name, K_##build, kname, refused},
static const ew_desc descs[EW_OP_COUNT] = {EW_OPS(EW__DESC)};
#undef EW__DESC

/* The f32 SIMD kernels of an op (the table's simd column); NULL where none. */
typedef struct {
  weft_f32_vbinary_fn* bin[3]; /* array-array, array-scalar, scalar-array (b, a) */
  weft_f32_vbinary_zip_fn* zip;     /* array-array, b as channel planes beside an interleaved a */
  weft_f32_vbinary_unzip_fn* unzip; /* array-array, b interleaved beside planes a */
  weft_f32_vcmp_fn* cmp[3];    /* the same; scalar-array is the mirrored comparison */
  weft_f32_vunary_fn* un;
  bool vmath; /* un is a transcendental kernel (vunary_math.c): staged rows use it too */
} ew_simd;

#define EW__SIMD(name, build, dtypes, args, overloads, kname, refused, simd) \
  case EW_##name: EW__SIMD_##simd; break;
#define EW__SIMD_NONE (void)0
#define EW__SIMD_UNARY(f) s.un = k->f32_##f
#define EW__SIMD_VMATH(f) s.un = k->f32_##f, s.vmath = true
#define EW__SIMD_BINARY(vv, vs, sv) \
  s.bin[0] = k->f32_##vv, s.bin[1] = k->f32_##vs, s.bin[2] = k->f32_##sv, s.zip = k->f32_##vv##_zip, \
  s.unzip = k->f32_##vv##_unzip
#define EW__SIMD_COMPARE(vv, vs, sv) s.cmp[0] = k->f32_##vv, s.cmp[1] = k->f32_##vs, s.cmp[2] = k->f32_##sv

static ew_simd simd_kernels(const weft_kernels* k, ew_op op) {
  ew_simd s;
  memset(&s, 0, sizeof s);
  if (!k) return s;
  switch (op) {
    EW_OPS(EW__SIMD)
    case EW_OP_COUNT: break;
  }
  return s;
}

/* ---- kernels table ---- */

static const weft_kernels* _Atomic ew_kernels_override;
static atomic_int ew_kernels_overridden;

void weft__ew_set_kernels(const struct weft_kernels* k) {
  atomic_store(&ew_kernels_override, k);
  atomic_store(&ew_kernels_overridden, 1);
}

static const weft_kernels* ew_kernels(void) {
  if (atomic_load_explicit(&ew_kernels_overridden, memory_order_relaxed))
    return atomic_load(&ew_kernels_override);
  return weft__kernels();
}

/* ---- inputs ---- */

typedef struct {
  const weft_tensor* t; /* NULL: a Python number */
  weft_scalar s;
  bool wrapped; /* t is a Python number already wrapped */
} ew_in;
#define EW_T(x) ((ew_in){(x), {WEFT_SCALAR_INT, {.i = 0}}, false})
#define EW_S(x) ((ew_in){NULL, (x), false})

static weft_dtype scalar_dtype(weft_scalar s) {
  return s.tag == WEFT_SCALAR_DOUBLE ? WEFT_FLOAT64 : s.tag == WEFT_SCALAR_BOOL ? WEFT_BOOL : WEFT_INT64;
}

/* wrapped_scalar_tensor: a 0-dim tensor on `device` holding s (int64 /
 * float64 / bool); marked as a wrapped number when added to the config. */
static weft_tensor* wrap_scalar(weft_scalar s, weft_device device) {
  weft_tensor* t = weft_empty(NULL, 0, scalar_dtype(s), device, WEFT_CONTIGUOUS_FORMAT);
  if (!t || device == WEFT_DEVICE_META) return t;
  char* p = weft_tensor_data_ptr(t);
  if (s.tag == WEFT_SCALAR_DOUBLE) memcpy(p, &s.v.d, 8);
  else if (s.tag == WEFT_SCALAR_BOOL) *(uint8_t*)p = s.v.b;
  else memcpy(p, &s.v.i, 8);
  return t;
}

static double scalar_f64(weft_scalar s) {
  return s.tag == WEFT_SCALAR_DOUBLE ? s.v.d : s.tag == WEFT_SCALAR_BOOL ? (double)s.v.b : (double)s.v.i;
}

/* at::result_type over tensors (dims > 0, then 0-dim, then wrapped numbers,
 * each group counting only when of a higher category). */
typedef struct {
  int n;
  const weft_tensor* t[3];
  bool wrapped[3];
} ew_operands;

static int category(weft_dtype t) {
  return weft_dtype_is_floating(t) ? 2 : t == WEFT_BOOL ? 0 : 1;
}

static weft_dtype result_type(const ew_operands* o) {
  int have[3] = {0, 0, 0};
  weft_dtype st[3] = {WEFT_BOOL, WEFT_BOOL, WEFT_BOOL};
  for (int i = 0; i < o->n; i++) {
    weft_dtype d = weft_tensor_dtype(o->t[i]);
    int g = o->wrapped[i] ? 2 : weft_tensor_dim(o->t[i]) > 0 ? 0 : 1;
    if (o->wrapped[i] && weft_dtype_is_floating(d)) d = weft_get_default_dtype();
    st[g] = have[g] ? weft_promote_types(st[g], d) : d;
    have[g] = 1;
  }
  weft_dtype r = st[0];
  int hr = have[0];
  for (int g = 1; g < 3; g++) {
    if (!have[g]) continue;
    if (!hr || category(st[g]) > category(r)) r = hr ? weft_promote_types(r, st[g]) : st[g];
    hr = 1;
  }
  return r;
}

/* ---- errors ---- */

static weft_status not_implemented(const ew_desc* d, weft_dtype t) {
  return weft__error(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", d->name, d->kname,
                     weft_dtype_name(t));
}

/* ---- meta ---- */

typedef enum { EW_FUNCTIONAL, EW_INPLACE, EW_OUT } ew_mode;

typedef struct {
  ew_op op;
  const ew_desc* d;
  ew_mode mode;
  weft_tensor* dst;
  ew_operands in;
  weft_tensor* owned[3]; /* wrapped numbers made here */
  weft_scalar alpha;
  int approximate;
  double sp[4]; /* the schema's positional numbers (ew_params.sp) */
  weft_dtype compute[WEFT_ITER_MAX_OPERANDS]; /* per operand; [0]: what the row produces */
  weft_iter it;
  bool built;
} ew_call;

static void call_release(ew_call* c) {
  for (int i = 0; i < 3; i++) weft_tensor_release(c->owned[i]);
  if (c->built) weft_iter_destroy(&c->it);
}

static bool fits_i64(double v) { return v >= -0x1p63 && v < 0x1p63; } /* false for nan */

/* PyTorch's argument checks of the activations (Activation.cpp) */
static weft_status activation_checks(const ew_call* c) {
  weft_dtype t = weft_tensor_dtype(c->in.t[0]);
  if ((c->op == EW_hardtanh || c->op == EW_relu6) && t == WEFT_BOOL)
    return weft__error(WEFT_TYPE_ERROR, "%s: bool inputs not supported for hardtanh", c->d->name);
  if (c->op == EW_hardtanh && t == WEFT_UINT8 && (c->sp[0] < 0 || c->sp[1] < 0))
    return weft__error(WEFT_INVALID_ARGUMENT, "hardtanh: cannot do hardtanh on an unsigned type with negative limits");
  /* integer hardtanh compares in int64: a bound outside it (inf, nan, 1e30) is PyTorch's overflow error */
  if (c->op == EW_hardtanh && weft_dtype_is_integral(t, false) && !(fits_i64(c->sp[0]) && fits_i64(c->sp[1])))
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: value cannot be converted to type int64 without overflow",
                       c->d->name);
  if (c->op == EW_elu_backward && c->sp[3] != 0 && c->sp[0] < 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "elu_backward: In-place elu backward calculation is triggered with a negative slope which is "
                       "not supported. This is caused by calling in-place forward function with a negative slope, "
                       "please call out-of-place version instead.");
  if (c->op == EW_leaky_relu_backward && c->sp[1] != 0 && c->sp[0] < 0)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "leaky_relu_backward: In-place leakyReLu backward calculation is triggered with a negative "
                       "slope which is not supported. This is caused by calling in-place forward function with a "
                       "negative slope, please call out-of-place version instead. File an issue at "
                       "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
                       "calculation with negative slope");
  return WEFT_OK;
}

static weft_status pre_checks(ew_call* c) {
  const ew_desc* d = c->d;
  const ew_operands* o = &c->in;
  if (c->op == EW_sub) {
    bool b0 = weft_tensor_dtype(o->t[0]) == WEFT_BOOL, b1 = weft_tensor_dtype(o->t[1]) == WEFT_BOOL;
    if (b0 && b1)
      return weft__error(WEFT_TYPE_ERROR,
                         "sub: Subtraction, the `-` operator, with two bool tensors is not supported. "
                         "Use the `^` or `logical_xor()` operator instead.");
    if (b0 || b1)
      return weft__error(WEFT_TYPE_ERROR,
                         "sub: Subtraction, the `-` operator, with a bool tensor is not supported. If "
                         "you are trying to invert a mask, use the `~` or `logical_not()` operator "
                         "instead.");
  }
  if (c->op == EW_neg && weft_tensor_dtype(o->t[0]) == WEFT_BOOL)
    return weft__error(WEFT_TYPE_ERROR,
                       "neg: Negation, the `-` operator, on a bool tensor is not supported. If you are "
                       "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  if (c->op == EW_relu && weft_tensor_dtype(o->t[0]) == WEFT_BOOL)
    return weft__error(WEFT_TYPE_ERROR, "relu: Boolean inputs not supported for relu");
  (void)d;
  return activation_checks(c);
}

static void add_inputs(weft_iter_config* cfg, const ew_operands* o) {
  for (int i = 0; i < o->n; i++) {
    if (o->wrapped[i]) weft_iter_config_add_wrapped_number(cfg, o->t[i]);
    else weft_iter_config_add_input(cfg, o->t[i]);
  }
}

static weft_status build(ew_call* c, weft_iter_config* cfg) {
  /* pointwise: any element order, so a tiny inner dim may trade places */
  weft_iter_config_widen_tiny_inner(cfg, true);
  weft_status s = weft_iter_build(cfg, &c->it);
  if (s == WEFT_OK) c->built = true;
  return s;
}

static weft_status meta_binary(ew_call* c, bool to_float) {
  weft_iter_config cfg = weft_iter_config_init();
  weft_iter_config_set_op_name(&cfg, c->d->name);
  weft_iter_config_add_output(&cfg, c->dst);
  add_inputs(&cfg, &c->in);
  weft_iter_config_promote_inputs_to_common_dtype(&cfg, true);
  weft_iter_config_promote_integer_inputs_to_float(&cfg, to_float);
  weft_iter_config_cast_common_dtype_to_outputs(&cfg, true);
  weft_iter_config_enforce_safe_casting_to_output(&cfg, true);
  return build(c, &cfg);
}

static weft_status meta_comparison(ew_call* c) {
  weft_iter_config cfg = weft_iter_config_init();
  weft_iter_config_set_op_name(&cfg, c->d->name);
  weft_iter_config_add_output(&cfg, c->dst);
  add_inputs(&cfg, &c->in);
  weft_iter_config_promote_inputs_to_common_dtype(&cfg, true);
  if (!c->dst) weft_iter_config_declare_static_dtype(&cfg, WEFT_BOOL);
  if (c->dst && weft_tensor_dtype(c->dst) != WEFT_BOOL) weft_iter_config_cast_common_dtype_to_outputs(&cfg, true);
  return build(c, &cfg);
}

static weft_status meta_unary(ew_call* c, bool to_float) {
  weft_iter_config cfg = weft_iter_config_init();
  weft_iter_config_set_op_name(&cfg, c->d->name);
  weft_iter_config_add_output(&cfg, c->dst);
  add_inputs(&cfg, &c->in);
  if (to_float) {
    weft_iter_config_promote_inputs_to_common_dtype(&cfg, true);
    weft_iter_config_promote_integer_inputs_to_float(&cfg, true);
    weft_iter_config_cast_common_dtype_to_outputs(&cfg, true);
    weft_iter_config_enforce_safe_casting_to_output(&cfg, true);
  }
  return build(c, &cfg);
}

/* An iterator whose inputs keep their dtypes: the row's compute dtypes are
 * chosen by the caller (logical_not, where, pow(Tensor, Scalar)). */
static weft_status meta_free_dtypes(ew_call* c, weft_dtype out_dtype, bool allocate_static) {
  weft_iter_config cfg = weft_iter_config_init();
  weft_iter_config_set_op_name(&cfg, c->d->name);
  weft_iter_config_add_output(&cfg, c->dst);
  add_inputs(&cfg, &c->in);
  weft_iter_config_check_all_same_dtype(&cfg, false);
  if (!c->dst && allocate_static) weft_iter_config_declare_static_dtype(&cfg, out_dtype);
  return build(c, &cfg);
}

static weft_status meta_pow_tensor_scalar(ew_call* c) {
  weft_dtype base = weft_tensor_dtype(c->in.t[0]), exp_t = weft_tensor_dtype(c->in.t[1]);
  if (weft_dtype_is_integral(base, true) && !weft_dtype_is_floating(exp_t) && c->in.wrapped[1]) {
    weft__value v = weft__load(weft_tensor_data_ptr(c->in.t[1]), exp_t);
    if (weft_tensor_device(c->in.t[1]) != WEFT_DEVICE_META && v.i < 0)
      return weft__error(WEFT_INVALID_ARGUMENT, "pow: Integers to negative integer powers are not allowed.");
  }
  weft_dtype common = result_type(&c->in);
  if (c->dst && weft_tensor_dtype(c->dst) != common)
    return weft__error(WEFT_TYPE_ERROR, "pow: Found dtype %s but expected %s",
                       weft_dtype_name(weft_tensor_dtype(c->dst)), weft_dtype_name(common));
  weft_status s = meta_free_dtypes(c, common, true);
  if (s != WEFT_OK) return s;
  c->compute[0] = c->compute[1] = c->compute[2] = common;
  return WEFT_OK;
}

static weft_status meta_where(ew_call* c) {
  weft_dtype ct = weft_tensor_dtype(c->in.t[0]);
  ew_operands vals = {2, {c->in.t[1], c->in.t[2]}, {c->in.wrapped[1], c->in.wrapped[2]}};
  weft_dtype rt = result_type(&vals);
  if (c->dst && weft_tensor_dtype(c->dst) != rt)
    return weft__error(WEFT_TYPE_ERROR, "where: Expected out type to be %s but got %s",
                       weft_dtype_name(rt), weft_dtype_name(weft_tensor_dtype(c->dst)));
  if (ct != WEFT_BOOL && ct != WEFT_UINT8)
    return weft__error(WEFT_TYPE_ERROR,
                       "where: where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                       weft_dtype_name(ct));
  weft_status s = meta_free_dtypes(c, rt, true);
  if (s != WEFT_OK) return s;
  c->compute[0] = rt;
  c->compute[1] = WEFT_BOOL;
  c->compute[2] = c->compute[3] = rt;
  return WEFT_OK;
}

/* The compute dtypes the iterator settled on, and the dtype errors of
 * PyTorch's kernels. */
static weft_status settle_compute(ew_call* c) {
  const weft_iter* it = &c->it;
  for (int i = 1; i < it->ntensors; i++) c->compute[i] = weft_iter_target_dtype(it, i);
  weft_dtype common = it->ntensors > 1 ? c->compute[1] : weft_iter_dtype(it, 0);
  ew_kind k = c->d->kind;
  c->compute[0] = (k == K_CMP) ? WEFT_BOOL : common;
  if (c->d->refused & (1u << common)) return not_implemented(c->d, common);
  if ((c->op == EW_add || c->op == EW_sub)) {
    if (c->alpha.tag == WEFT_SCALAR_BOOL && common != WEFT_BOOL)
      return weft__error(WEFT_TYPE_ERROR, "%s: Boolean alpha only supported for Boolean results.", c->d->name);
    if (!weft_dtype_is_floating(common) && c->alpha.tag == WEFT_SCALAR_DOUBLE)
      return weft__error(WEFT_TYPE_ERROR,
                         "%s: For integral input tensors, argument alpha must not be a floating point number.",
                         c->d->name);
  }
  return WEFT_OK;
}

static weft_status meta(ew_call* c) {
  weft_status s = pre_checks(c);
  if (s != WEFT_OK) return s;
  switch (c->d->kind) {
    case K_BIN:
      if (c->op == EW_pow && c->in.wrapped[1] && !c->in.wrapped[0]) return meta_pow_tensor_scalar(c);
      s = meta_binary(c, false);
      break;
    case K_BINF: s = meta_binary(c, true); break;
    case K_CMP: s = meta_comparison(c); break;
    case K_UN: s = meta_unary(c, false); break;
    case K_UNF: s = meta_unary(c, true); break;
    case K_LNOT:
      s = meta_free_dtypes(c, WEFT_BOOL, true);
      if (s == WEFT_OK) {
        c->compute[1] = weft_tensor_dtype(c->in.t[0]);
        c->compute[0] = WEFT_BOOL;
      }
      return s;
    case K_WHERE: return meta_where(c);
    case K_FILL: return WEFT_INTERNAL;
  }
  if (s != WEFT_OK) return s;
  return settle_compute(c);
}

/* ---- impl: the loop ---- */

enum { CHUNK = 256 };

typedef struct {
  ew_op op;
  int nt; /* operands: output + inputs */
  weft_dtype mem[WEFT_ITER_MAX_OPERANDS], compute[WEFT_ITER_MAX_OPERANDS];
  bool cast[WEFT_ITER_MAX_OPERANDS];
  bool any_cast;
  ew_row_fn* row;
  const weft_kernels* k;
  ew_simd simd;
  ew_params p;
  struct weft_f32_binary_params f32_bin;
  struct weft_f32_unary_params f32_un;
} ew_ctx;

/* f32 SIMD kernels for one row; false when none fits. */
static bool simd_binary(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  weft_f32_vbinary_fn* const* f = c->simd.bin;
  if (!f[0] || ys != 4) return false;
  const float *a = (const float*)x[0], *b = (const float*)x[1];
  if (xs[0] == 4 && xs[1] == 4) f[0](n, a, b, (float*)y, &c->f32_bin);
  else if (xs[0] == 4 && xs[1] == 0) f[1](n, a, b, (float*)y, &c->f32_bin);
  else if (xs[0] == 0 && xs[1] == 4) f[2](n, b, a, (float*)y, &c->f32_bin);
  else return false;
  return true;
}

static bool simd_compare(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  weft_f32_vcmp_fn* const* f = c->simd.cmp;
  if (!f[0] || ys != 1) return false;
  const float *a = (const float*)x[0], *b = (const float*)x[1];
  if (xs[0] == 4 && xs[1] == 4) f[0](n, a, b, (uint8_t*)y);
  else if (xs[0] == 4 && xs[1] == 0) f[1](n, a, b, (uint8_t*)y);
  else if (xs[0] == 0 && xs[1] == 4) f[2](n, b, a, (uint8_t*)y);
  else return false;
  return true;
}

/* A transcendental op on a strided float32 row, or on a float16 / bfloat16
 * row (computed in float): CHUNK elements at a time through a float buffer
 * and the SIMD kernel, which gives the bits of the per-element plain row
 * (vunary_math.c's code either way) many times faster. */
static bool staged_unary(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  weft_f32_vunary_fn* f = c->simd.vmath ? c->simd.un : NULL;
  weft_dtype t = c->compute[1];
  if (!f || c->compute[0] != t || (t != WEFT_FLOAT32 && t != WEFT_FLOAT16 && t != WEFT_BFLOAT16)) return false;
  weft_xcopy_strided_fn *in = weft__cast_strided_kernel(t, WEFT_FLOAT32), *out = weft__cast_strided_kernel(WEFT_FLOAT32, t);
  _Alignas(16) float buf[CHUNK];
  for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
    size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
    in(m, x[0] + (ptrdiff_t)i0 * xs[0], xs[0], buf, 4);
    f(m, buf, buf, &c->f32_un);
    out(m, buf, 4, y + (ptrdiff_t)i0 * ys, ys);
  }
  return true;
}

static bool simd_unary(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  if (!c->simd.un || ys != 4 || xs[0] != 4) return false;
  c->simd.un(n, (const float*)x[0], (float*)y, &c->f32_un);
  return true;
}

/* A float32 row with unit or broadcast strides through the SIMD kernels. */
static bool simd_row(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  int nin = c->nt - 1;
  if (nin == 2 && c->compute[0] == WEFT_FLOAT32) return simd_binary(c, n, y, ys, x, xs);
  if (nin == 2 && c->compute[0] == WEFT_BOOL) return simd_compare(c, n, y, ys, x, xs);
  if (nin == 1 && c->compute[0] == WEFT_FLOAT32) return simd_unary(c, n, y, ys, x, xs);
  return false;
}

/* A strided float32 row (a view whose rows step over channels: an HWC image
 * seen as CHW): CHUNK elements at a time, strided operands gathered into
 * unit-stride buffers and the result scattered back, so the SIMD kernel
 * runs instead of the per-element loop. Same bits: the kernels match it. */
static bool staged_row(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  int nin = c->nt - 1;
  if (nin < 1 || nin > 2) return false;
  for (int k = 1; k <= nin; k++)
    if (c->compute[k] != WEFT_FLOAT32) return false;
  ptrdiff_t es = c->compute[0] == WEFT_BOOL ? 1 : 4;
  if (c->compute[0] != WEFT_FLOAT32 && c->compute[0] != WEFT_BOOL) return false;
  bool gather = ys != es;
  for (int k = 0; k < nin; k++) gather |= xs[k] != 0 && xs[k] != 4;
  if (!gather) return false;
  _Alignas(16) float buf[3][CHUNK];
  weft_xcopy_strided_fn* f32 = weft__cast_strided_kernel(WEFT_FLOAT32, WEFT_FLOAT32);
  weft_xcopy_strided_fn* out = weft__cast_strided_kernel(c->compute[0], c->compute[0]);
  for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
    size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
    char* xp[2];
    ptrdiff_t xst[2];
    for (int k = 0; k < nin; k++) {
      char* src = x[k] + (ptrdiff_t)i0 * xs[k];
      if (xs[k] == 0 || xs[k] == 4) {
        xp[k] = src;
        xst[k] = xs[k];
      } else {
        f32(m, src, xs[k], buf[k + 1], 4);
        xp[k] = (char*)buf[k + 1];
        xst[k] = 4;
      }
    }
    char* yp = y + (ptrdiff_t)i0 * ys;
    char* yb = ys == es ? yp : (char*)buf[0];
    if (!simd_row(c, m, yb, es, xp, xst)) c->row(m, yb, es, xp, xst, &c->p);
    if (yb != yp) out(m, yb, es, yp, ys);
  }
  return true;
}

static void run_row(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  if (c->k && c->compute[1] == WEFT_FLOAT32 && n > 0 && simd_row(c, n, y, ys, x, xs)) return;
  if (c->k && n > 0 && c->nt == 2 && staged_unary(c, n, y, ys, x, xs)) return;
  if (c->k && n > 0 && staged_row(c, n, y, ys, x, xs)) return;
  c->row(n, y, ys, x, xs, &c->p);
}

/* Rows with operands to convert: CHUNK elements at a time through stack
 * buffers in the compute dtypes (a stride-0 input converts one element). */
static void cast_row(const ew_ctx* c, size_t n, char* y, ptrdiff_t ys, char* const* x, const ptrdiff_t* xs) {
  _Alignas(16) char buf[WEFT_ITER_MAX_OPERANDS][CHUNK * 8];
  int nin = c->nt - 1;
  for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
    size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
    char* xp[WEFT_ITER_MAX_OPERANDS];
    ptrdiff_t xst[WEFT_ITER_MAX_OPERANDS];
    for (int k = 0; k < nin; k++) {
      char* src = x[k] + (ptrdiff_t)i0 * xs[k];
      if (!c->cast[k + 1]) {
        xp[k] = src;
        xst[k] = xs[k];
        continue;
      }
      size_t cnt = xs[k] == 0 ? 1 : m;
      ptrdiff_t es = (ptrdiff_t)weft_dtype_size(c->compute[k + 1]);
      weft__cast_strided_kernel(c->mem[k + 1], c->compute[k + 1])(cnt, src, xs[k], buf[k + 1], es);
      xp[k] = buf[k + 1];
      xst[k] = xs[k] == 0 ? 0 : es;
    }
    char* yp = y + (ptrdiff_t)i0 * ys;
    if (!c->cast[0]) {
      run_row(c, m, yp, ys, xp, xst);
    } else {
      ptrdiff_t es = (ptrdiff_t)weft_dtype_size(c->compute[0]);
      run_row(c, m, buf[0], es, xp, xst);
      weft__cast_strided_kernel(c->compute[0], c->mem[0])(m, buf[0], es, yp, ys);
    }
  }
}

/* An output whose n1 = 2..4 rows interleave (the result of an HWC image's
 * CHW view, widened to run along W): per chunk of pixels its rows are one
 * contiguous run, and the op runs once over it. Operands laid out like the
 * output are read in place, stride-0 ones as they are, and 4-byte ones laid
 * out otherwise (a CHW tensor beside the view, a per-channel broadcast) are
 * interleaved into a buffer first: no row gathers its elements with a stride
 * of n1 and no result is scattered back. */
enum { IPIX = 256 };
enum { IN_PLACE, IN_SCALAR, IN_PICKED, IN_BUFFERED };

static bool interleaved_layouts(const ew_ctx* c, const int64_t* strides, int64_t n1, int* how) {
  int nt = c->nt;
  if (!c->k || n1 < 2 || n1 > 4 || nt > 4) return false;
  int64_t es0 = (int64_t)weft_dtype_size(c->mem[0]);
  if (strides[0] != es0 * n1 || strides[nt] != es0) return false;
  for (int k = 1; k < nt; k++) {
    int64_t es = (int64_t)weft_dtype_size(c->mem[k]), inner = strides[k], outer = strides[nt + k];
    if (inner == es * n1 && outer == es) how[k] = IN_PLACE;
    else if (inner == 0 && outer == 0) how[k] = IN_SCALAR;
    /* the first n1 of each pixel's 3 or 4 channels (a narrowed HWC image) */
    else if (es == 4 && outer == 4 && (inner == 12 || inner == 16) && inner / 4 > n1) how[k] = IN_PICKED;
    else if (es == 4) how[k] = IN_BUFFERED;
    else return false;
  }
  return true;
}

/* Input k's n1 rows of m elements from p, interleaved into dst. */
static void interleave_input(const ew_ctx* c, const int64_t* strides, int k, int64_t n1, size_t m, const char* p,
                             float* dst) {
  _Alignas(16) float rows[4][IPIX];
  const void* r[4];
  for (int64_t j = 0; j < n1; j++) {
    const char* rp = p + j * strides[c->nt + k];
    if (strides[k] == 4) {
      r[j] = rp;
    } else {
      c->k->x32_copy_strided(m, rp, (ptrdiff_t)strides[k], rows[j], 4);
      r[j] = rows[j];
    }
  }
  c->k->x32_interleave(m, (size_t)n1, r, dst);
}

/* The common mixed case, an interleaved float32 operand op n1 unit-stride
 * planes into an interleaved result (HWC view + CHW tensor): one pass of the
 * op's _zip kernel, which interleaves the planes as it goes. */
static bool zipped_rows(const ew_ctx* c, char** data, const int64_t* strides, int64_t n0, int64_t n1,
                        const int* how) {
  if (c->nt != 3 || !c->simd.zip || c->any_cast || c->compute[0] != WEFT_FLOAT32) return false;
  if (how[1] != IN_PLACE || how[2] != IN_BUFFERED || strides[2] != 4) return false;
  const float* planes[4];
  for (int64_t j = 0; j < n1; j++) planes[j] = (const float*)(data[2] + j * strides[5]); /* nt == 3 */
  c->simd.zip((size_t)n0, (size_t)n1, (const float*)data[1], planes, (float*)data[0], &c->f32_bin);
  return true;
}

/* Stride-0 operands to convert (a JS number, float64, beside a float32
 * view) converted once into scal, with the cast kernel cast_row would use
 * per chunk; base[k] is where operand k is read from. True when no operand
 * is left to convert chunk by chunk. */
static bool convert_scalars(const ew_ctx* c, char** data, const int* how, char (*scal)[16], char** base) {
  bool rest = c->cast[0];
  for (int k = 1; k < c->nt; k++) {
    base[k] = data[k];
    if (!c->cast[k]) continue;
    if (how[k] != IN_SCALAR) {
      rest = true;
      continue;
    }
    weft__cast_strided_kernel(c->mem[k], c->compute[k])(1, data[k], 0, scal[k], 0);
    base[k] = scal[k];
  }
  return !rest;
}

static bool interleaved_rows(const ew_ctx* c, char** data, const int64_t* strides, int64_t n0, int64_t n1) {
  int how[WEFT_ITER_MAX_OPERANDS];
  if (!interleaved_layouts(c, strides, n1, how)) return false;
  if (zipped_rows(c, data, strides, n0, n1, how)) return true;
  int nt = c->nt;
  _Alignas(16) char scal[WEFT_ITER_MAX_OPERANDS][16];
  char* base[WEFT_ITER_MAX_OPERANDS];
  bool cast = !convert_scalars(c, data, how, scal, base);
  _Alignas(16) float buf[3][IPIX * 4];
  for (int64_t i0 = 0; i0 < n0; i0 += IPIX) {
    size_t m = (size_t)(n0 - i0 < IPIX ? n0 - i0 : IPIX);
    char* xp[WEFT_ITER_MAX_OPERANDS];
    ptrdiff_t xst[WEFT_ITER_MAX_OPERANDS];
    for (int k = 1; k < nt; k++) {
      xp[k - 1] = (cast ? data[k] : base[k]) + i0 * strides[k];
      xst[k - 1] = how[k] == IN_SCALAR ? 0 : (ptrdiff_t)weft_dtype_size(c->mem[k]);
      if (how[k] == IN_BUFFERED) {
        interleave_input(c, strides, k, n1, m, xp[k - 1], buf[k - 1]);
        xp[k - 1] = (char*)buf[k - 1];
      } else if (how[k] == IN_PICKED) {
        c->k->x32_pick(m, (size_t)strides[k] / 4, (size_t)n1, xp[k - 1], buf[k - 1]);
        xp[k - 1] = (char*)buf[k - 1];
      }
    }
    char* y = data[0] + i0 * strides[0];
    ptrdiff_t ys = (ptrdiff_t)weft_dtype_size(c->mem[0]);
    if (cast) cast_row(c, m * (size_t)n1, y, ys, xp, xst);
    else run_row(c, m * (size_t)n1, y, ys, xp, xst);
  }
  return true;
}

/* The mirror case, planar float32 rows (a CHW result) from n1 = 2..4
 * unit-stride planes op an operand that interleaves them (CHW tensor + HWC
 * view): one pass of the op's _unzip kernel, which de-interleaves as it
 * goes, instead of n1 strided gathers of the same pixels. */
static bool unzipped_rows(const ew_ctx* c, char** data, const int64_t* strides, int64_t n0, int64_t n1) {
  if (c->nt != 3 || !c->simd.unzip || c->any_cast || c->compute[0] != WEFT_FLOAT32 || n1 < 2 || n1 > 4) return false;
  /* strides[0..2]: along the pixels; strides[3..5]: across the planes */
  if (strides[0] != 4 || strides[1] != 4 || strides[2] != 4 * n1 || strides[5] != 4) return false;
  const float* a[4];
  float* y[4];
  for (int64_t j = 0; j < n1; j++) {
    y[j] = (float*)(data[0] + j * strides[3]);
    a[j] = (const float*)(data[1] + j * strides[4]);
  }
  c->simd.unzip((size_t)n0, (size_t)n1, a, (const float*)data[2], y, &c->f32_bin);
  return true;
}

static void ew_loop(void* vc, char** data, const int64_t* strides, int64_t n0, int64_t n1) {
  const ew_ctx* c = vc;
  int nt = c->nt;
  ptrdiff_t xs[WEFT_ITER_MAX_OPERANDS];
  for (int k = 1; k < nt; k++) xs[k - 1] = (ptrdiff_t)strides[k];
  if (interleaved_rows(c, data, strides, n0, n1) || unzipped_rows(c, data, strides, n0, n1)) return;
  for (int64_t j = 0; j < n1; j++) {
    char* x[WEFT_ITER_MAX_OPERANDS];
    for (int k = 1; k < nt; k++) x[k - 1] = data[k] + j * strides[nt + k];
    char* y = data[0] + j * strides[nt];
    if (c->any_cast) cast_row(c, (size_t)n0, y, (ptrdiff_t)strides[0], x, xs);
    else run_row(c, (size_t)n0, y, (ptrdiff_t)strides[0], x, xs);
  }
}

static double round_alpha(double a, weft_dtype t) {
  if (t == WEFT_FLOAT16) return weft__f16_to_f32(weft__f32_to_f16((float)a));
  if (t == WEFT_BFLOAT16) return weft__bf16_to_f32(weft__f32_to_bf16((float)a));
  if (t == WEFT_FLOAT32) return (float)a;
  return a;
}

static weft_status impl(ew_call* c) {
  const weft_iter* it = &c->it;
  if (weft_tensor_device(weft_iter_output(it, 0)) == WEFT_DEVICE_WEBGPU) /* the same plan, the GPU's loop */
    return weft__ew_webgpu(c->op, c->d->name, it, c->compute[1], c->compute[0], scalar_f64(c->alpha));
  atomic_int zero_division = 0;
  ew_ctx x;
  memset(&x, 0, sizeof x);
  x.op = c->op;
  x.nt = it->ntensors;
  for (int i = 0; i < x.nt; i++) {
    x.mem[i] = weft_iter_dtype(it, i);
    x.compute[i] = c->compute[i];
    x.cast[i] = x.mem[i] != x.compute[i];
    x.any_cast |= x.cast[i];
  }
  x.row = weft__ew_row(c->op, x.compute[c->op == EW_where ? 0 : 1]);
  if (!x.row) return weft__error(WEFT_INTERNAL, "%s: no kernel for %s", c->d->name, weft_dtype_name(x.compute[1]));
  x.k = ew_kernels();
  x.simd = simd_kernels(x.k, c->op);
  x.p.alpha_i = c->alpha.tag == WEFT_SCALAR_DOUBLE ? weft__f64_to_i64_sat(c->alpha.v.d)
                : c->alpha.tag == WEFT_SCALAR_BOOL ? c->alpha.v.b : c->alpha.v.i;
  x.p.alpha_d = round_alpha(scalar_f64(c->alpha), x.compute[1]);
  x.p.approximate = c->approximate;
  memcpy(x.p.sp, c->sp, sizeof x.p.sp);
  x.f32_un.a = (float)c->sp[0], x.f32_un.b = (float)c->sp[1], x.f32_un.c = (float)c->sp[2];
  x.p.zero_division = &zero_division;
  x.f32_bin.alpha = (float)x.p.alpha_d;
  x.f32_un.approximate = c->approximate;
  weft_status s = weft_iter_for_each(it, ew_loop, &x, WEFT_GRAIN_SIZE);
  if (s != WEFT_OK) return s;
  if (atomic_load(&zero_division)) return weft__error(WEFT_ZERO_DIVISION, "%s: ZeroDivisionError", c->d->name);
  return WEFT_OK;
}

/* ---- fill_ / zero_ ---- */

/* c10::checked_convert: does value overflow dtype t? */
static bool overflows(weft_scalar v, weft_dtype t) {
  static const double lo[WEFT_DTYPE_COUNT] = {0, 0, -128, -32768, -2147483648.0, -9223372036854775808.0};
  static const double hi[WEFT_DTYPE_COUNT] = {1, 255, 127, 32767, 2147483647.0, 9223372036854775807.0};
  if (t == WEFT_BOOL) return false;
  if (weft_dtype_is_floating(t)) {
    if (v.tag != WEFT_SCALAR_DOUBLE || !isfinite(v.v.d)) return false;
    double m = t == WEFT_FLOAT16 ? 65504.0 : t == WEFT_BFLOAT16 ? 3.3895313892515355e38 : t == WEFT_FLOAT32 ? 3.4028234663852886e38 : INFINITY;
    return fabs(v.v.d) > m;
  }
  if (v.tag == WEFT_SCALAR_BOOL) return false;
  if (v.tag == WEFT_SCALAR_DOUBLE) return !(v.v.d >= lo[t] && v.v.d <= hi[t]);
  if (t == WEFT_UINT8) return v.v.i > 255 || (v.v.i < 0 && v.v.i < -255); /* negatives wrap */
  if (t == WEFT_INT64) return false;
  return (double)v.v.i < lo[t] || (double)v.v.i > hi[t];
}

static void fill_loop(void* vc, char** data, const int64_t* strides, int64_t n0, int64_t n1) {
  const char* v = vc; /* [0]: element size, then the value */
  size_t es = (size_t)v[0];
  for (int64_t j = 0; j < n1; j++) {
    char* y = data[0] + j * strides[1];
    for (int64_t i = 0; i < n0; i++) memcpy(y + i * strides[0], v + 8, es);
  }
}

static weft_status fill(weft_tensor* self, weft_scalar v) {
  weft_dtype t = weft_tensor_dtype(self);
  if (overflows(v, t))
    return weft__error(WEFT_OVERFLOW, "fill_: value cannot be converted to type %s without overflow", weft_dtype_name(t));
  _Alignas(16) char value[16] = {0};
  value[0] = (char)weft_dtype_size(t);
  weft__value val = {v.tag == WEFT_SCALAR_DOUBLE, v.tag == WEFT_SCALAR_BOOL ? v.v.b : v.tag == WEFT_SCALAR_INT ? v.v.i : 0,
                     v.tag == WEFT_SCALAR_DOUBLE ? v.v.d : 0.0};
  weft__store(value + 8, t, val);
  weft_iter_config cfg = weft_iter_config_init();
  weft_iter it;
  weft_iter_config_set_op_name(&cfg, "fill_");
  weft_iter_config_check_mem_overlap(&cfg, false);
  weft_iter_config_add_output(&cfg, self);
  weft_iter_config_resize_outputs(&cfg, false);
  weft_iter_config_check_all_same_dtype(&cfg, false);
  weft_status s = weft_iter_build(&cfg, &it);
  if (s != WEFT_OK) return s;
  const weft_kernels* k = ew_kernels();
  if (weft_tensor_device(self) == WEFT_DEVICE_WEBGPU) {
    s = weft__ew_webgpu(EW_fill_, "fill_", &it, t, t, scalar_f64(v));
  } else if (k && weft_iter_is_contiguous(&it) && it.ntensors == 1 && weft_iter_numel(&it) > 0 && !it.is_meta) {
    weft__fill_kernel(k, weft_dtype_size(t))((size_t)weft_iter_numel(&it), value + 8, it.ops[0].data);
  } else {
    s = weft_iter_for_each(&it, fill_loop, value, WEFT_GRAIN_SIZE);
  }
  weft_iter_destroy(&it);
  return s;
}

static weft_tensor* fill_op(ew_op op, weft_tensor* self, const ew_in* in) {
  weft_scalar v = weft_scalar_int(0);
  if (op == EW_fill_ && in[1].t) {
    const weft_tensor* t = in[1].t;
    if (weft_tensor_dim(t) != 0)
      return weft__error_null(WEFT_INVALID_ARGUMENT,
                              "fill_: fill_ only supports 0-dimension value tensor but got tensor with %lld dimensions.",
                              (long long)weft_tensor_dim(t));
    if (weft_tensor_device(t) == WEFT_DEVICE_WEBGPU)
      return weft__error_null(WEFT_NOT_IMPLEMENTED, "fill_: a webgpu value tensor is read asynchronously: pass "
                                                    "await v.itemAsync()");
    if (weft_tensor_device(t) != WEFT_DEVICE_META) {
      weft__value x = weft__load(weft_tensor_data_ptr(t), weft_tensor_dtype(t));
      v = x.is_float ? weft_scalar_double(x.f) : weft_scalar_int(x.i);
    }
  } else if (op == EW_fill_) {
    v = in[1].s;
  }
  if (fill(self, v) != WEFT_OK) return NULL;
  return weft_tensor_retain(self);
}

/* ---- the entry ---- */

static weft_device device_of(const ew_in* in, int n, const weft_tensor* dst) {
  for (int i = 0; i < n; i++)
    if (in[i].t) return weft_tensor_device(in[i].t);
  return dst ? weft_tensor_device(dst) : WEFT_DEVICE_CPU;
}

static weft_tensor* pow_scalar_base(ew_call* c, const ew_in* in);
static weft_tensor* log_sigmoid_contiguous(const ew_in* in, const double* sp);
static weft_tensor* weft__ew(ew_op op, ew_mode mode, weft_tensor* dst, int nin, const ew_in* in, weft_scalar alpha,
                      const char* approximate, const double* sp);

/* at::native::resize_output: an out= tensor of another shape becomes
 * contiguous in the new shape (its storage grows when too small). */
static weft_status resize_output(weft_tensor* t, const int64_t* sizes, int ndim) {
  if (t->ndim == ndim && memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim) == 0) return WEFT_OK;
  int64_t strides[WEFT_MAX_DIMS];
  if (!weft__strides_for_format(sizes, ndim, WEFT_CONTIGUOUS_FORMAT, strides))
    return weft__error(WEFT_OVERFLOW, "resize_: size overflows");
  return weft__tensor_resize_(t, sizes, strides, ndim, "resize_");
}

/* Ops without a structured out= (relu, the .Scalar_out overloads): the
 * functional result, then resize_output and copy_. The out dtype follows the
 * same-kind rule of every other out= (a float result never truncates into an
 * integer out), so the copy only casts where a structured op would. */
static weft_tensor* out_by_copy(ew_op op, weft_tensor* out, int nin, const ew_in* in, weft_scalar alpha,
                                const char* approximate, const double* sp) {
  weft_tensor* tmp = weft__ew(op, EW_FUNCTIONAL, NULL, nin, in, alpha, approximate, sp);
  if (!tmp) return NULL;
  if (!weft_can_cast(tmp->dtype, out->dtype)) {
    weft_dtype rt = tmp->dtype;
    weft_tensor_release(tmp);
    return weft__error_null(WEFT_TYPE_ERROR, "%s: result type %s can't be cast to the desired output type %s",
                            descs[op].name, weft_dtype_name(rt), weft_dtype_name(out->dtype));
  }
  weft_status s = resize_output(out, tmp->sizes, tmp->ndim);
  if (s == WEFT_OK) s = weft_copy_(out, tmp);
  weft_tensor_release(tmp);
  return s == WEFT_OK ? weft_tensor_retain(out) : NULL;
}

/* One call of an elementwise op: mode says what dst is (NULL, self or
 * out). Returns a new reference to the result (dst itself for in-place and
 * out=), or NULL with the error set. */
static weft_tensor* weft__ew(ew_op op, ew_mode mode, weft_tensor* dst, int nin, const ew_in* in, weft_scalar alpha,
                             const char* approximate, const double* sp) {
  if (op == EW_fill_ || op == EW_zero_) return fill_op(op, dst, in);
  /* relu.out and add/sub/mul/div.Scalar_out are not structured in 1.13 */
  if (mode == EW_OUT && (op == EW_relu || ((op == EW_add || op == EW_sub || op == EW_mul || op == EW_div) && !in[1].t)))
    return out_by_copy(op, dst, nin, in, alpha, approximate, sp);
  ew_call c;
  /* not the iterator (2 KB): weft_iter_build sets all of it, and clearing
   * it twice showed in the cost of a small op */
  memset(&c, 0, offsetof(ew_call, it));
  c.built = false;
  c.op = op;
  c.d = &descs[op];
  c.mode = mode;
  c.dst = mode == EW_FUNCTIONAL ? NULL : dst;
  c.alpha = alpha;
  if (sp) memcpy(c.sp, sp, sizeof c.sp);
  if (op == EW_relu6) c.sp[0] = 0, c.sp[1] = 6; /* hardtanh(0, 6) */
  if (op == EW_gelu) {
    if (!approximate || strcmp(approximate, "none") == 0) c.approximate = 0;
    else if (strcmp(approximate, "tanh") == 0) c.approximate = 1;
    else return weft__error_null(WEFT_INVALID_ARGUMENT, "gelu: approximate argument must be either none or tanh.");
  }
  if (op == EW_pow && !in[0].t) return pow_scalar_base(&c, in);
  if (op == EW_log_sigmoid && mode == EW_FUNCTIONAL) return log_sigmoid_contiguous(in, sp);
  weft_device dev = device_of(in, nin, dst);
  c.in.n = nin;
  for (int i = 0; i < nin; i++) {
    if (in[i].t) {
      c.in.t[i] = in[i].t;
      c.in.wrapped[i] = in[i].wrapped;
      continue;
    }
    /* on the cpu beside webgpu tensors: PyTorch's cpu scalar */
    c.owned[i] = wrap_scalar(in[i].s, dev == WEFT_DEVICE_WEBGPU ? WEFT_DEVICE_CPU : dev);
    if (!c.owned[i]) {
      call_release(&c);
      return NULL;
    }
    c.in.t[i] = c.owned[i];
    c.in.wrapped[i] = true;
  }
  weft_tensor* r = NULL;
  if (meta(&c) == WEFT_OK && impl(&c) == WEFT_OK) r = weft_tensor_retain(weft_iter_output(&c.it, 0));
  call_release(&c);
  return r;
}

/* log_sigmoid allocates its output (log_sigmoid_forward's) contiguous
 * whatever the input's layout, as 1.13 does */
static weft_tensor* log_sigmoid_contiguous(const ew_in* in, const double* sp) {
  const weft_tensor* x = in[0].t;
  weft_tensor* out = weft_empty(weft_tensor_sizes(x), weft_tensor_dim(x), weft_tensor_dtype(x), weft_tensor_device(x),
                                WEFT_CONTIGUOUS_FORMAT);
  if (!out) return NULL;
  weft_tensor* r = weft__ew(EW_log_sigmoid, EW_OUT, out, 1, in, weft_scalar_int(1), NULL, sp);
  weft_tensor_release(out);
  return r;
}

/* pow.Scalar(Scalar self, Tensor exponent): 1 ** x fills ones; else
 * pow(wrapped self, exponent) into an output laid out contiguously (the
 * meta function allocates it before the iterator sees the inputs). */
static weft_tensor* pow_scalar_base(ew_call* c, const ew_in* in) {
  const weft_tensor* e = in[1].t;
  weft_tensor* out = c->dst;
  weft_tensor* w = wrap_scalar(in[0].s, weft_tensor_device(e));
  if (!w) return NULL;
  if (!out) {
    ew_operands o = {2, {w, e}, {true, false}};
    out = weft_empty(weft_tensor_sizes(e), weft_tensor_dim(e), result_type(&o), weft_tensor_device(e),
                     WEFT_CONTIGUOUS_FORMAT);
    if (!out) {
      weft_tensor_release(w);
      return NULL;
    }
  } else {
    weft_tensor_retain(out);
  }
  weft_tensor* r;
  if (scalar_f64(in[0].s) == 1.0) {
    /* the out= tensor still takes the exponent's shape */
    r = weft__ew(EW_mul, EW_OUT, out, 2, (ew_in[]){EW_T(e), EW_S(weft_scalar_int(0))}, weft_scalar_int(1), NULL, NULL);
    if (r) {
      weft_tensor_release(r);
      r = fill_op(EW_fill_, out, (ew_in[]){EW_T(out), EW_S(weft_scalar_int(1))});
    }
  } else {
    r = weft__ew(EW_pow, EW_OUT, out, 2, (ew_in[]){{w, in[0].s, true}, EW_T(e)}, weft_scalar_int(1), NULL, NULL);
  }
  weft_tensor_release(w);
  weft_tensor_release(out);
  return r;
}

static weft_status weft__ew_status(weft_tensor* r) {
  if (!r) return weft_last_status();
  weft_tensor_release(r);
  return WEFT_OK;
}

/* ---- kernels and registration ---- */

/* Scalar-base pow goes through the wrapped-number path above; pow.Scalar's
 * in[0] is a number, which weft__ew routes to pow_scalar_base. */
#define EW_KERNEL(cname, R, P, ...) static R k_##cname P { __VA_ARGS__ }
#define EW_TABLE_OPS(n)                                                                          \
  _Static_assert(n == EW_OP_COUNT, "src/ops/elementwise_kernels.inc was made from another table: " \
                                   "npm run build (or node src/ops/gen_elementwise.mjs) remakes it");
#include "ops/elementwise_kernels.inc"
#undef EW_KERNEL
#undef EW_TABLE_OPS


#define WEFT_OP(cname, schema, R, ...)                              \
  WEFT_KERNEL_NAMED(cname, CPU, k_##cname, "ew_" #cname "_cpu");   \
  WEFT_KERNEL_NAMED(cname, META, k_##cname, "ew_" #cname "_meta");  \
  WEFT_KERNEL_NAMED(cname, WEBGPU, k_##cname, "ew_" #cname "_webgpu");
/* ops.def's fill_ (fill_.Scalar, value as a double): integral values count
 * as int Scalars for PyTorch's overflow check (fill_(uint8, -1) wraps). */
static weft_status k_fill_double(weft_tensor* self, double v) {
  weft_scalar s = (v == trunc(v) && fabs(v) < 9007199254740992.0) ? weft_scalar_int((int64_t)v) : weft_scalar_double(v);
  return weft__ew_status(weft__ew(EW_fill_, EW_INPLACE, self, 2, (ew_in[]){EW_T(self), EW_S(s)}, weft_scalar_int(1), NULL, NULL));
}

weft_status weft__elementwise_register(void) {
#include "ops/elementwise.def"
  WEFT_KERNEL_NAMED(fill_, CPU, k_fill_double, "ew_fill__cpu");
  WEFT_KERNEL_NAMED(fill_, META, k_fill_double, "ew_fill__meta");
  WEFT_KERNEL_NAMED(fill_, WEBGPU, k_fill_double, "ew_fill__webgpu");
  return WEFT_OK;
}
#undef WEFT_OP
