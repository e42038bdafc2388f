/* Padding (issue 23): F.pad's `pad` (a composite that checks and picks the
 * op), constant_pad_nd (negative pads crop), _pad_circular (PyTorch 1.13's
 * composite of slice copies, so its gradient is CopySlices as there), and
 * reflection_pad{1,2,3}d / replication_pad{1,2,3}d with their backward ops,
 * CPU and Meta.
 *
 * Checks and messages are PyTorch 1.13's, in its order (pad_symint, the
 * pad ops' meta functions), with sizes printed as arrays where PyTorch
 * prints the tensor. An error names the op the user called: `pad` runs the
 * chosen op's checks under its own name before calling it. Outputs:
 * constant_pad_nd keeps the input's suggested memory format (PyTorch's
 * at::empty(..., suggest_memory_format)); the reflection / replication ops
 * and _pad_circular give contiguous results, as PyTorch's CPU kernels do.
 * The copies run in src/ops/cpu/resize.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "ops/cpu/resize.h"
#include "ops/ops.h"
#include "ops/resize_internal.h"

weft_status weft__resize_fail(weft_status s, const char* op, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return weft__error(s, "%s: %s", op, msg);
}
#define fail weft__resize_fail

#define SZ(t, buf) weft__sizes_str((t)->sizes, (t)->ndim, buf, sizeof buf)
#define LL(v) ((long long)(v))

/* ---- reflection / replication ---- */

/* PyTorch's check_valid_input<dims>: dims + 1 or dims + 2 dims, all
 * non-zero but a batch's; reflection 1d / 2d (legacy) let dim 0 be 0 in
 * either case. */
static bool valid_input(const weft_tensor* x, int dims, bool legacy) {
  int nd = x->ndim;
  if (nd != dims + 1 && nd != dims + 2) return false;
  for (int i = (legacy || nd == dims + 2) ? 1 : 0; i < nd; i++)
    if (x->sizes[i] == 0) return false;
  return true;
}

static weft_status shape_message(const char* op, bool reflect, int dims, const weft_tensor* x) {
  char buf[160];
  if (reflect && dims < 3)
    return fail(WEFT_INVALID_ARGUMENT, op, "%dD or %dD (batch mode) tensor expected for input, but got: %s", dims + 1,
                dims + 2, SZ(x, buf));
  return fail(WEFT_INVALID_ARGUMENT, op,
              "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
              "input, but got: %s", dims + 1, dims + 2, SZ(x, buf));
}

/* The too-small message of each op, PyTorch's spacing included. */
static weft_status too_small(const char* op, bool reflect, int dims, const int64_t* in, const int64_t* out) {
  if (dims == 1)
    return fail(WEFT_INVALID_ARGUMENT, op, "input (W: %lld)%sis too small. Calculated output W: %lld", LL(in[2]),
                reflect ? "" : " ", LL(out[2]));
  if (dims == 2)
    return fail(WEFT_INVALID_ARGUMENT, op, "input (H: %lld, W: %lld%sis too small. Calculated output H: %lld W: %lld",
                LL(in[1]), LL(in[2]), reflect ? ")" : " ) ", LL(out[1]), LL(out[2]));
  return fail(WEFT_INVALID_ARGUMENT, op,
              "input (D: %lld H: %lld, W: %lld) is too small. Calculated output D: %lld H: %lld W: %lld", LL(in[0]),
              LL(in[1]), LL(in[2]), LL(out[0]), LL(out[1]), LL(out[2]));
}

/* The meta step of reflection_pad<dims>d / replication_pad<dims>d under op's name. */
static weft_status pad_meta(const char* op, bool reflect, int dims, const weft_tensor* x, const int64_t* p, int64_t np,
                            weft_pad3d* g) {
  if (np != 2 * dims) return fail(WEFT_INVALID_ARGUMENT, op, "padding size is expected to be %d", 2 * dims);
  if (!valid_input(x, dims, reflect && dims < 3)) return shape_message(op, reflect, dims, x);
  const int nd = x->ndim;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  memset(g, 0, sizeof *g);
  g->reflect = reflect;
  g->planes = 1;
  for (int i = 0; i < nd - dims; i++) g->planes *= x->sizes[i];
  char buf[160];
  for (int a = 0; a < dims; a++) { /* a: 0 is W, 1 H, 2 D; pads come last dim first */
    int axis = 2 - a, dim = nd - 1 - a;
    int64_t l = p[2 * a], r = p[2 * a + 1];
    in[axis] = x->sizes[dim];
    out[axis] = in[axis] + l + r;
    g->pl[axis] = l;
    if (reflect && !(l < in[axis] && r < in[axis])) {
      char what[160];
      if (dims == 2) snprintf(what, sizeof what, "%d", nd);
      else snprintf(what, sizeof what, "%s", SZ(x, buf));
      return fail(WEFT_INVALID_ARGUMENT, op,
                  "Argument #%d: Padding size should be less than the corresponding input dimension, but got: "
                  "padding (%lld, %lld) at dimension %d of input %s", 4 + 2 * a, LL(l), LL(r), dim, what);
    }
  }
  for (int a = 0; a < 3; a++)
    if (out[a] < 1) return too_small(op, reflect, dims, in, out);
  g->d = in[0], g->h = in[1], g->w = in[2];
  g->od = out[0], g->oh = out[1], g->ow = out[2];
  return WEFT_OK;
}

static const char* pad_name(bool reflect, int dims) {
  static const char* names[2][3] = {{"replication_pad1d_cpu", "replication_pad2d_cpu", "replication_pad3d_cpu"},
                                    {"reflection_pad1d", "reflection_pad2d", "reflection_pad3d_cpu"}};
  return names[reflect][dims - 1];
}

static weft_status pad_dtype(const char* op, bool reflect, int dims, const weft_tensor* x) {
  if (x->device == WEFT_DEVICE_META || x->dtype == WEFT_FLOAT32 || x->dtype == WEFT_FLOAT64) return WEFT_OK;
  return fail(WEFT_TYPE_ERROR, op, "\"%s\" not implemented for '%s'", pad_name(reflect, dims), weft_dtype_name(x->dtype));
}

/* x's shape with the last dims replaced by g's output (or input) sizes */
static void padded_sizes(const weft_tensor* x, int dims, const weft_pad3d* g, bool output, int64_t* sizes) {
  const int64_t o[3] = {output ? g->od : g->d, output ? g->oh : g->h, output ? g->ow : g->w};
  memcpy(sizes, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  for (int a = 0; a < dims; a++) sizes[x->ndim - 1 - a] = o[2 - a];
}

static weft_tensor* pad_forward(const char* op, bool reflect, int dims, const weft_tensor* x, const int64_t* p,
                                int64_t np) {
  weft_pad3d g;
  if (pad_meta(op, reflect, dims, x, p, np, &g) != WEFT_OK || pad_dtype(op, reflect, dims, x) != WEFT_OK) return NULL;
  int64_t sizes[WEFT_MAX_DIMS];
  padded_sizes(x, dims, &g, true, sizes);
  weft_tensor* y = weft_empty(sizes, x->ndim, x->dtype, x->device, WEFT_CONTIGUOUS_FORMAT);
  if (!y || x->device == WEFT_DEVICE_META) return y;
  weft_tensor* xc = weft_contiguous(x, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = xc ? weft__pad3d_run(&g, weft_dtype_size(x->dtype), weft_tensor_data_ptr(xc), weft_tensor_data_ptr(y))
                     : weft_last_status();
  weft_tensor_release(xc);
  if (s != WEFT_OK) {
    weft_tensor_release(y);
    return NULL;
  }
  return y;
}

static weft_tensor* pad_backward(const char* op, bool reflect, int dims, const weft_tensor* gy, const weft_tensor* x,
                                 const int64_t* p, int64_t np) {
  weft_pad3d g;
  if (pad_meta(op, reflect, dims, x, p, np, &g) != WEFT_OK || pad_dtype(op, reflect, dims, x) != WEFT_OK) return NULL;
  int64_t want[WEFT_MAX_DIMS];
  padded_sizes(x, dims, &g, true, want);
  char b1[160], b2[160];
  if (gy->ndim != x->ndim || memcmp(gy->sizes, want, sizeof(int64_t) * (size_t)x->ndim) != 0)
    return fail(WEFT_INVALID_ARGUMENT, op, "expected grad_output of size %s, but got %s",
                weft__sizes_str(want, x->ndim, b1, sizeof b1), SZ(gy, b2)), NULL;
  if (gy->dtype != x->dtype)
    return fail(WEFT_INVALID_ARGUMENT, op, "expected grad_output of dtype %s but got %s", weft_dtype_name(x->dtype),
                weft_dtype_name(gy->dtype)), NULL;
  weft_tensor* gx = weft_empty(x->sizes, x->ndim, x->dtype, x->device, WEFT_CONTIGUOUS_FORMAT);
  if (!gx || x->device == WEFT_DEVICE_META) return gx;
  weft_tensor* gyc = weft_contiguous(gy, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = gyc ? weft__pad3d_backward(&g, x->dtype, weft_tensor_data_ptr(gyc), weft_tensor_data_ptr(gx))
                      : weft_last_status();
  weft_tensor_release(gyc);
  if (s != WEFT_OK) {
    weft_tensor_release(gx);
    return NULL;
  }
  return gx;
}

#define DEF_PAD_KERNELS(kind, reflect, d)                                                                            \
  static weft_tensor* kind##_pad##d##d_kernel(const weft_tensor* x, const int64_t* p, int64_t np) {                  \
    return pad_forward(#kind "_pad" #d "d", reflect, d, x, p, np);                                                   \
  }                                                                                                                  \
  static weft_tensor* kind##_pad##d##d_backward_kernel(const weft_tensor* gy, const weft_tensor* x, const int64_t* p, \
                                                       int64_t np) {                                                 \
    return pad_backward(#kind "_pad" #d "d_backward", reflect, d, gy, x, p, np);                                     \
  }
DEF_PAD_KERNELS(reflection, true, 1)
DEF_PAD_KERNELS(reflection, true, 2)
DEF_PAD_KERNELS(reflection, true, 3)
DEF_PAD_KERNELS(replication, false, 1)
DEF_PAD_KERNELS(replication, false, 2)
DEF_PAD_KERNELS(replication, false, 3)

/* ---- constant_pad_nd ---- */

static weft_status constant_check(const char* op, const weft_tensor* x, const int64_t* p, int64_t np) {
  if (np % 2 != 0) return fail(WEFT_INVALID_ARGUMENT, op, "Length of pad must be even but instead it equals %lld", LL(np));
  if (x->ndim < np / 2)
    return fail(WEFT_INVALID_ARGUMENT, op,
                "Length of pad should be no more than twice the number of dimensions of the input. Pad length is "
                "%lldwhile the input has %ddimensions.", LL(np), x->ndim);
  return WEFT_OK;
}

/* x narrowed by the negative pads (a view; a new reference), and whether any pad is positive */
static weft_tensor* crop(const weft_tensor* x, const int64_t* p, int64_t np, bool* grows) {
  weft_tensor* c = weft_tensor_retain((weft_tensor*)x);
  *grows = false;
  for (int64_t i = x->ndim - np / 2; c && i < x->ndim; i++) {
    int64_t k = 2 * (x->ndim - i - 1);
    weft_tensor* n = c;
    if (p[k] < 0) n = weft_narrow(c, i, -p[k], c->sizes[i] + p[k]);
    else if (p[k] != 0) *grows = true;
    if (n != c) weft_tensor_release(c);
    c = n;
    if (c && p[k + 1] < 0) n = weft_narrow(c, i, 0, c->sizes[i] + p[k + 1]);
    else if (p[k + 1] != 0) *grows = true;
    if (n != c) weft_tensor_release(c);
    c = n;
  }
  return c;
}

static weft_tensor* constant_pad_nd_kernel(const weft_tensor* x, const int64_t* p, int64_t np, weft_scalar value) {
  const char* op = "constant_pad_nd";
  if (constant_check(op, x, p, np) != WEFT_OK) return NULL;
  bool grows;
  weft_tensor* c = crop(x, p, np, &grows);
  if (!c || !grows) {
    weft_tensor* r = c ? weft_clone(c, WEFT_PRESERVE_FORMAT) : NULL;
    weft_tensor_release(c);
    return r;
  }
  const int64_t nd = x->ndim, diff = nd - np / 2;
  int64_t sizes[WEFT_MAX_DIMS];
  for (int64_t i = 0; i < nd; i++) sizes[i] = x->sizes[i];
  for (int64_t i = diff; i < nd; i++) {
    int64_t k = 2 * (nd - i - 1);
    if (weft__add_overflow(x->sizes[i], p[k], &sizes[i]) || weft__add_overflow(sizes[i], p[k + 1], &sizes[i])) {
      weft_tensor_release(c);
      return fail(WEFT_OVERFLOW, op, "the input size %lld padded by %lld and %lld overflows int64 (dimension %lld)",
                  LL(x->sizes[i]), LL(p[k]), LL(p[k + 1]), LL(i)), NULL;
    }
    if (sizes[i] <= 0) {
      weft_tensor_release(c);
      return fail(WEFT_INVALID_ARGUMENT, op,
                  "The input size %lld, plus negative padding %lld and %lld resulted in a negative output size, "
                  "which is invalid. Check dimension %lld of your input.", LL(x->sizes[i]), LL(p[k]), LL(p[k + 1]),
                  LL(i)), NULL;
    }
  }
  weft_tensor* y = weft_empty(sizes, nd, x->dtype, x->device, weft_tensor_suggest_memory_format(x));
  weft_tensor* inner = y ? weft_tensor_retain(y) : NULL;
  weft_status s = y ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && x->device != WEFT_DEVICE_META) s = weft_fill_(y, weft_scalar_to_double(value));
  for (int64_t i = diff; s == WEFT_OK && i < nd; i++) { /* the region the input lands in */
    int64_t k = 2 * (nd - i - 1), lo = p[k] > 0 ? p[k] : 0, hi = p[k + 1] > 0 ? p[k + 1] : 0;
    weft_tensor* n = weft_narrow(inner, i, lo, inner->sizes[i] - lo - hi);
    weft_tensor_release(inner);
    inner = n;
    if (!n) s = weft_last_status();
  }
  if (s == WEFT_OK && x->device != WEFT_DEVICE_META) s = weft_copy_(inner, c);
  weft_tensor_release(inner);
  weft_tensor_release(c);
  if (s != WEFT_OK) {
    weft_tensor_release(y);
    return NULL;
  }
  return y;
}

/* ---- _pad_circular: PyTorch 1.13's composite ---- */

static weft_status circular_check(const char* op, const weft_tensor* x, const int64_t* p, int64_t np, int64_t* out) {
  const int64_t nd = x->ndim - 2;
  if (np + 4 != 2 * (int64_t)x->ndim)
    return fail(WEFT_INVALID_ARGUMENT, op, "Invalid padding size, expected %lld but got %lld", LL(nd * 2), LL(np));
  out[0] = x->sizes[0];
  out[1] = x->sizes[1];
  for (int64_t i = 0; i < nd; i++) {
    int64_t l = p[2 * (nd - i - 1)], r = p[2 * (nd - i - 1) + 1], size = x->sizes[2 + i];
    out[2 + i] = size + l + r;
    if (!(l <= size && r <= size))
      return fail(WEFT_INVALID_ARGUMENT, op, "Padding value causes wrapping around more than once.");
    if (out[2 + i] < 0)
      return fail(WEFT_INVALID_ARGUMENT, op, "Negative padding value is resulting in an empty dimension");
  }
  return WEFT_OK;
}

/* dst.slice(dim, d0, d1).copy_(src.slice(dim, s0, s1)) */
static weft_status copy_slice(weft_tensor* dst, int64_t dim, int64_t d0, int64_t d1, const weft_tensor* src, int64_t s0,
                              int64_t s1) {
  weft_tensor* a = weft_slice(dst, dim, d0, d1, 1);
  weft_tensor* b = a ? weft_slice(src, dim, s0, s1, 1) : NULL;
  weft_status s = b ? weft_copy_(a, b) : weft_last_status();
  weft_tensor_release(a);
  weft_tensor_release(b);
  return s;
}

static weft_tensor* circular_impl(const char* op, const weft_tensor* x, const int64_t* p, int64_t np) {
  int64_t out[WEFT_MAX_DIMS];
  if (circular_check(op, x, p, np, out) != WEFT_OK) return NULL;
  const int64_t nd = x->ndim - 2;
  weft_tensor* y = weft_empty(out, x->ndim, x->dtype, x->device, WEFT_CONTIGUOUS_FORMAT);
  if (!y) return NULL;
  /* the input into the middle (negative pads crop it) */
  weft_tensor* os = weft_tensor_retain(y);
  weft_tensor* is = weft_tensor_retain((weft_tensor*)x);
  for (int64_t i = 0; os && is && i < nd; i++) {
    int64_t dim = nd - i + 1, l = p[2 * i], r = p[2 * i + 1];
    weft_tensor* o2 = weft_slice(os, dim, l > 0 ? l : 0, out[dim] - (r > 0 ? r : 0), 1);
    weft_tensor* i2 = weft_slice(is, dim, l < 0 ? -l : 0, x->sizes[dim] - (r < 0 ? -r : 0), 1);
    weft_tensor_release(os);
    weft_tensor_release(is);
    os = o2, is = i2;
  }
  weft_status s = os && is ? weft_copy_(os, is) : weft_last_status();
  weft_tensor_release(os);
  weft_tensor_release(is);
  /* then each dim's left and right bands from the opposite side (corners more than once) */
  for (int64_t i = 0; s == WEFT_OK && i < nd; i++) {
    int64_t dim = nd - i + 1, l = p[2 * i], r = p[2 * i + 1], n = out[dim];
    int64_t rp = r > 0 ? r : 0, lp = l > 0 ? l : 0;
    if (l > 0) s = copy_slice(y, dim, 0, l, y, n - l - rp, n - rp);
    if (s == WEFT_OK && r > 0) s = copy_slice(y, dim, n - r, n, y, lp, lp + r);
  }
  if (s != WEFT_OK) {
    weft_tensor_release(y);
    return NULL;
  }
  return y;
}

static weft_tensor* pad_circular_kernel(const weft_tensor* x, const int64_t* p, int64_t np) {
  return circular_impl("_pad_circular", x, p, np);
}

/* ---- pad: F.pad ---- */

static weft_tensor* pad_kernel(const weft_tensor* x, const int64_t* p, int64_t np, const char* mode, double value) {
  const char* op = "pad";
  int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "replicate") ? 2
        : !strcmp(mode, "circular") ? 3 : -1;
  if (m < 0) return fail(WEFT_NOT_IMPLEMENTED, op, "Unrecognised padding mode %s", mode), NULL;
  if (np % 2 != 0) return fail(WEFT_INVALID_ARGUMENT, op, "Padding length must be divisible by 2"), NULL;
  if (np / 2 > x->ndim) return fail(WEFT_INVALID_ARGUMENT, op, "Padding length too large"), NULL;
  bool has_value = value == value;
  if (m == 0) {
    weft_scalar v = weft_scalar_double(has_value ? value : 0.0);
    if (constant_check(op, x, p, np) != WEFT_OK) return NULL;
    return weft_constant_pad_nd(x, p, np, v);
  }
  if (has_value && value != 0)
    return fail(WEFT_INVALID_ARGUMENT, op, "Padding mode \"%s\" doesn't take in value argument", mode), NULL;
  const int dims = (int)(np / 2);
  if (!(np == 2 || np == 4 || np == 6) || (x->ndim != dims + 1 && x->ndim != dims + 2))
    return fail(WEFT_NOT_IMPLEMENTED, op, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now"),
           NULL;
  if (m == 3) return circular_impl(op, x, p, np);
  weft_pad3d g;
  if (pad_meta(op, m == 1, dims, x, p, np, &g) != WEFT_OK || pad_dtype(op, m == 1, dims, x) != WEFT_OK) return NULL;
  if (m == 1) return dims == 1 ? weft_reflection_pad1d(x, p, np) : dims == 2 ? weft_reflection_pad2d(x, p, np)
                                                                             : weft_reflection_pad3d(x, p, np);
  return dims == 1 ? weft_replication_pad1d(x, p, np) : dims == 2 ? weft_replication_pad2d(x, p, np)
                                                                  : weft_replication_pad3d(x, p, np);
}

weft_status weft__pad_register(void) {
  WEFT_KERNEL(constant_pad_nd, CPU, constant_pad_nd_kernel);
  WEFT_KERNEL(constant_pad_nd, META, constant_pad_nd_kernel);
  WEFT_KERNEL(reflection_pad1d, CPU, reflection_pad1d_kernel);
  WEFT_KERNEL(reflection_pad1d, META, reflection_pad1d_kernel);
  WEFT_KERNEL(reflection_pad2d, CPU, reflection_pad2d_kernel);
  WEFT_KERNEL(reflection_pad2d, META, reflection_pad2d_kernel);
  WEFT_KERNEL(reflection_pad3d, CPU, reflection_pad3d_kernel);
  WEFT_KERNEL(reflection_pad3d, META, reflection_pad3d_kernel);
  WEFT_KERNEL(replication_pad1d, CPU, replication_pad1d_kernel);
  WEFT_KERNEL(replication_pad1d, META, replication_pad1d_kernel);
  WEFT_KERNEL(replication_pad2d, CPU, replication_pad2d_kernel);
  WEFT_KERNEL(replication_pad2d, META, replication_pad2d_kernel);
  WEFT_KERNEL(replication_pad3d, CPU, replication_pad3d_kernel);
  WEFT_KERNEL(replication_pad3d, META, replication_pad3d_kernel);
  WEFT_KERNEL(reflection_pad1d_backward, CPU, reflection_pad1d_backward_kernel);
  WEFT_KERNEL(reflection_pad1d_backward, META, reflection_pad1d_backward_kernel);
  WEFT_KERNEL(reflection_pad2d_backward, CPU, reflection_pad2d_backward_kernel);
  WEFT_KERNEL(reflection_pad2d_backward, META, reflection_pad2d_backward_kernel);
  WEFT_KERNEL(reflection_pad3d_backward, CPU, reflection_pad3d_backward_kernel);
  WEFT_KERNEL(reflection_pad3d_backward, META, reflection_pad3d_backward_kernel);
  WEFT_KERNEL(replication_pad1d_backward, CPU, replication_pad1d_backward_kernel);
  WEFT_KERNEL(replication_pad1d_backward, META, replication_pad1d_backward_kernel);
  WEFT_KERNEL(replication_pad2d_backward, CPU, replication_pad2d_backward_kernel);
  WEFT_KERNEL(replication_pad2d_backward, META, replication_pad2d_backward_kernel);
  WEFT_KERNEL(replication_pad3d_backward, CPU, replication_pad3d_backward_kernel);
  WEFT_KERNEL(replication_pad3d_backward, META, replication_pad3d_backward_kernel);
  WEFT_KERNEL(op__pad_circular, COMPOSITE_IMPLICIT_AUTOGRAD, pad_circular_kernel);
  WEFT_KERNEL(pad, COMPOSITE_IMPLICIT_AUTOGRAD, pad_kernel);
  return WEFT_OK;
}
