/* The matmul family (issue 12): mm, bmm, addmm, baddbmm, dot, mv with CPU
 * and Meta kernels and out=, and the composites matmul, outer, linear.
 *
 * Every product goes through bmm_into on 3-D views (batch, rows, columns)
 * of its operands: mv reads the vector as a k x 1 matrix, dot both vectors
 * as 1 x k and k x 1, so nothing is copied before the GEMM driver
 * (src/ops/cpu/gemm.c) packs them through their strides. float32 and
 * float64 run the packed GEMM; bfloat16 converts to float32 and back (as
 * PyTorch's CPU kernels accumulate in float); the integer dtypes a plain
 * typed loop with wrapping int64 sums; Half and Bool are refused, as 1.13's
 * CPU kernels are. Checks and messages follow PyTorch 1.13, in its order. */
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "kernels/kernels.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemv.h"
#include "ops/ops.h"
#include "ops/packed_cache.h"
#include "ops/webgpu_ops.h"


static weft_tensor* view3(const weft_tensor* t, int64_t b, int64_t m, int64_t n, int64_t bs, int64_t rs,
                          int64_t cs) {
  const int64_t sizes[3] = {b, m, n}, strides[3] = {bs, rs, cs};
  return weft_as_strided(t, sizes, strides, 3, t->storage_offset);
}

/* ---- the kernel step: c[b] (=|+=) alpha * a[b] @ b[b] ---- */

static bool unit_stride_2d(const weft_tensor* c) {
  return c->sizes[2] == 1 || c->strides[2] == 1 || c->sizes[1] == 1 || c->strides[1] == 1;
}

static int64_t scalar_i64(weft_scalar s) {
  return s.tag == WEFT_SCALAR_INT ? s.v.i : s.tag == WEFT_SCALAR_BOOL ? (int64_t)s.v.b
                                                                      : weft__f64_to_i64_sat(s.v.d);
}

static void int_loop(weft_tensor* c, const weft_tensor* a, const weft_tensor* b, int64_t alpha, bool acc) {
  weft_dtype t = c->dtype;
  size_t es = weft_dtype_size(t);
  const char *pa = weft_tensor_data_ptr(a), *pb = weft_tensor_data_ptr(b);
  char* pc = weft_tensor_data_ptr(c);
  int64_t nb = c->sizes[0], m = c->sizes[1], n = c->sizes[2], k = a->sizes[2];
  for (int64_t q = 0; q < nb; q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        uint64_t s = 0;
        for (int64_t x = 0; x < k; x++) {
          int64_t u = weft__load(pa + es * (size_t)(q * a->strides[0] + i * a->strides[1] + x * a->strides[2]), t).i;
          int64_t v = weft__load(pb + es * (size_t)(q * b->strides[0] + x * b->strides[1] + j * b->strides[2]), t).i;
          s += (uint64_t)u * (uint64_t)v;
        }
        char* p = pc + es * (size_t)(q * c->strides[0] + i * c->strides[1] + j * c->strides[2]);
        s *= (uint64_t)alpha;
        if (acc) s += (uint64_t)weft__load(p, t).i;
        weft__value r = {0, (int64_t)s, 0.0};
        weft__store(p, t, r);
      }
}

/* AT_DISPATCH's refusal: 1.13's CPU kernels have no Half or Bool case */
static weft_status check_dtype(const char* kname, weft_dtype t, weft_device dev) {
  if (dev != WEFT_DEVICE_META && (t == WEFT_FLOAT16 || t == WEFT_BOOL))
    return weft__error(WEFT_INVALID_ARGUMENT, "\"%s\" not implemented for '%s'", kname, weft_dtype_name(t));
  return WEFT_OK;
}

static weft_status bmm_into(const char* kname, weft_tensor* c, const weft_tensor* a, const weft_tensor* b,
                            weft_scalar alpha, bool acc) {
  weft_dtype t = c->dtype;
  if (check_dtype(kname, t, c->device) != WEFT_OK) return weft_last_status();
  if (c->device == WEFT_DEVICE_META || c->numel == 0) return WEFT_OK;
  if (c->device == WEFT_DEVICE_WEBGPU) /* the tiled GEMM over the views' strides (linalg_webgpu.c) */
    return weft__webgpu_bmm(kname, c, a, b, acc ? c : NULL, weft_scalar_to_double(alpha), 1.0);
  bool fp = t == WEFT_FLOAT32 || t == WEFT_FLOAT64;
  if (!fp && t != WEFT_BFLOAT16) {
    int_loop(c, a, b, scalar_i64(alpha), acc);
    return WEFT_OK;
  }
  if (fp && unit_stride_2d(c) && a->dtype == t && b->dtype == t) {
    weft_gemm_operand ga = {weft_tensor_data_ptr(a), a->strides[1], a->strides[2]};
    weft_gemm_operand gb = {weft_tensor_data_ptr(b), b->strides[1], b->strides[2]};
    return weft__gemm_batched(weft__kernels(), t, c->sizes[0], c->sizes[1], c->sizes[2], a->sizes[2],
                              weft_scalar_to_double(alpha), ga, a->strides[0], gb, b->strides[0], acc,
                              weft_tensor_data_ptr(c), c->strides[1], c->strides[2], c->strides[0]);
  }
  /* bfloat16 (through float32) or an output without a unit stride: a
   * contiguous temporary, copied back */
  weft_dtype ct = fp ? t : WEFT_FLOAT32;
  weft_tensor* a2 = weft_to_dtype(a, ct, false);
  weft_tensor* b2 = weft_to_dtype(b, ct, false);
  weft_tensor* c2 = weft_empty(c->sizes, 3, ct, c->device, WEFT_CONTIGUOUS_FORMAT);
  weft_status s = a2 && b2 && c2 ? WEFT_OK : weft_last_status();
  if (s == WEFT_OK && acc) s = weft_copy_(c2, c);
  if (s == WEFT_OK) s = bmm_into(kname, c2, a2, b2, alpha, acc);
  if (s == WEFT_OK) s = weft_copy_(c, c2);
  weft_tensor_release(a2);
  weft_tensor_release(b2);
  weft_tensor_release(c2);
  return s;
}

/* PyTorch's device check (a webgpu tensor beside a cpu one), before the others */
static weft_status devices(const char* op, const weft_tensor* a, const weft_tensor* b, const weft_tensor* c,
                           const weft_tensor* out) {
  const weft_tensor* ts[4] = {a, b, c, out};
  return weft__webgpu_same_device(op, ts, 4);
}

/* ---- outputs ---- */

/* A new contiguous result, or the out= tensor checked and resized
 * (structured kernels' set_output: dtype must match; a tensor of another
 * shape becomes contiguous in the new one). Returns a new reference. */
static weft_tensor* make_out(const char* op, weft_tensor* out, const int64_t* sizes, int nd, weft_dtype t,
                             weft_device dev) {
  if (!out) return weft_empty(sizes, nd, t, dev, WEFT_CONTIGUOUS_FORMAT);
  if (out->dtype != t)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: Expected out tensor to have dtype %s, but got %s instead",
                            op, weft_dtype_name(t), weft_dtype_name(out->dtype));
  if (out->ndim != nd || memcmp(out->sizes, sizes, sizeof(int64_t) * (size_t)nd) != 0) {
    int64_t strides[WEFT_MAX_DIMS];
    if (!weft__strides_for_format(sizes, nd, WEFT_CONTIGUOUS_FORMAT, strides))
      return weft__error_null(WEFT_OVERFLOW, "%s: size overflows", op);
    if (weft__tensor_resize_(out, sizes, strides, nd, op) != WEFT_OK) return NULL;
  }
  return weft_tensor_retain(out);
}

/* Runs the product into r (3-D views of all three), releasing r on error. */
static weft_tensor* finish(const char* kname, weft_tensor* r, weft_tensor* c3, weft_tensor* a3, weft_tensor* b3,
                           weft_scalar alpha, bool acc) {
  weft_status s = c3 && a3 && b3 ? bmm_into(kname, c3, a3, b3, alpha, acc) : weft_last_status();
  weft_tensor_release(c3);
  weft_tensor_release(a3);
  weft_tensor_release(b3);
  if (s != WEFT_OK) {
    weft_tensor_release(r);
    return NULL;
  }
  return r;
}

/* c = beta * self (expanded to c's shape) before c += alpha * a b; false:
 * nothing to accumulate (beta == 0 ignores self, NaNs included). */
static weft_status seed_beta(const char* kname, weft_tensor* c, const weft_tensor* self_e, weft_scalar beta,
                             bool* acc) {
  if (check_dtype(kname, c->dtype, c->device) != WEFT_OK) return weft_last_status();
  *acc = weft_scalar_to_double(beta) != 0.0;
  if (!*acc) return WEFT_OK;
  weft_status s = weft_copy_(c, self_e);
  if (s != WEFT_OK || weft_scalar_to_double(beta) == 1.0) return s;
  if (!weft_dtype_is_floating(c->dtype)) beta = weft_scalar_int(scalar_i64(beta));
  return weft_mul_scalar_(c, beta);
}

static weft_tensor* mm_run(const char* kname, weft_tensor* r, const weft_tensor* a, const weft_tensor* b,
                           weft_scalar alpha, bool acc);
static weft_tensor* bmm_run(const char* kname, weft_tensor* r, const weft_tensor* a, const weft_tensor* b,
                            weft_scalar alpha, bool acc);

/* addmm with beta 1 and self a row broadcast down the result (linear's bias),
 * a few rows of float32: the matrix-vector driver adds the bias as it
 * stores, one pass instead of a copy of the bias the product then
 * accumulates into. False: not that case, nothing written; else *s. */
static bool fused_bias(weft_tensor* r, const weft_tensor* bias, const weft_tensor* a, const weft_tensor* b,
                       weft_scalar beta, weft_scalar alpha, weft_status* s) {
  if (r->dtype != WEFT_FLOAT32 || r->device != WEFT_DEVICE_CPU || a->dtype != r->dtype || b->dtype != r->dtype ||
      bias->dtype != r->dtype || weft_scalar_to_double(beta) != 1.0 || r->sizes[0] > WEFT_GEMV_MAX_ROWS)
    return false;
  if ((bias->strides[0] != 0 && r->sizes[0] > 1) || (bias->strides[1] != 1 && r->sizes[1] > 1)) return false;
  weft_gemm_operand ga = {weft_tensor_data_ptr(a), a->strides[0], a->strides[1]};
  weft_gemm_operand gb = {weft_tensor_data_ptr(b), b->strides[0], b->strides[1]};
  return weft__gemv(weft__kernels(), WEFT_FLOAT32, r->sizes[0], r->sizes[1], a->sizes[1],
                    weft_scalar_to_double(alpha), ga, gb, false, weft_tensor_data_ptr(bias),
                    weft_tensor_data_ptr(r), r->strides[0], r->strides[1], s);
}

/* addmm / baddbmm after their checks: the result (new, or out=) = beta *
 * self_e (self expanded to the result's shape), then += alpha * a @ b
 * (nd 2: matrices, 3: batches). Takes self_e's reference. */
/* t as a batch of matrices: a matrix as a batch of one */
static weft_tensor* as3(const weft_tensor* t) {
  return t->ndim == 3 ? weft_tensor_retain((weft_tensor*)t)
                      : view3(t, 1, t->sizes[0], t->sizes[1], 0, t->strides[0], t->strides[1]);
}

/* On the webgpu device beta * self rides in the GEMM's store (no seed copy,
 * no in-place scaling): r = alpha a b + beta self_e. Takes r's and self_e's
 * references. */
static weft_tensor* add_product_webgpu(const char* kname, weft_tensor* r, weft_tensor* self_e, const weft_tensor* a,
                                       const weft_tensor* b, weft_scalar beta, weft_scalar alpha) {
  weft_tensor *r3 = as3(r), *a3 = as3(a), *b3 = as3(b), *d3 = as3(self_e);
  double bv = weft_scalar_to_double(beta);
  weft_status s = r3 && a3 && b3 && d3 ? check_dtype(kname, r->dtype, r->device) : weft_last_status();
  if (s == WEFT_OK) s = weft__webgpu_bmm(kname, r3, a3, b3, bv != 0.0 ? d3 : NULL, weft_scalar_to_double(alpha), bv);
  weft_tensor* list[] = {r3, a3, b3, d3, self_e};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  if (s == WEFT_OK) return r;
  weft_tensor_release(r);
  return NULL;
}

static weft_tensor* add_product(const char* op, const char* kname, weft_tensor* self_e, weft_tensor* out,
                                const int64_t* sizes, int nd, const weft_tensor* a, const weft_tensor* b,
                                weft_scalar beta, weft_scalar alpha) {
  weft_tensor* r = make_out(op, out, sizes, nd, a->dtype, a->device);
  if (r && r->device == WEFT_DEVICE_WEBGPU) return add_product_webgpu(kname, r, self_e, a, b, beta, alpha);
  weft_status s;
  if (r && nd == 2 && fused_bias(r, self_e, a, b, beta, alpha, &s)) {
    weft_tensor_release(self_e);
    if (s == WEFT_OK) return r;
    weft_tensor_release(r);
    return NULL;
  }
  bool acc = false;
  s = r ? seed_beta(kname, r, self_e, beta, &acc) : weft_last_status();
  weft_tensor_release(self_e);
  if (s != WEFT_OK) {
    weft_tensor_release(r);
    return NULL;
  }
  return nd == 2 ? mm_run(kname, r, a, b, alpha, acc) : bmm_run(kname, r, a, b, alpha, acc);
}

/* ---- mm, addmm ---- */

static weft_status check_mm_shapes(const char* op, const weft_tensor* a, const weft_tensor* b) {
  if (a->sizes[1] != b->sizes[0])
    return weft__error(WEFT_INVALID_ARGUMENT, "%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                       op, (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0],
                       (long long)b->sizes[1]);
  return WEFT_OK;
}

struct pack_b_ctx {
  weft_dtype t;
  int64_t k, n;
  weft_gemm_operand b;
};

static weft_status pack_b(void* p, void* dst) {
  const struct pack_b_ctx* c = p;
  return weft__gemm_pack_b(c->t, c->k, c->n, c->b, dst);
}

/* linear's weight b (weft__packed_is_weight) into a row-major r the GEMM
 * would tile: its panels from the cache on b's storage (ops/packed_cache.c).
 * False: not that case, nothing written; else *s. */
static bool mm_packed_weight(weft_tensor* r, const weft_tensor* a, const weft_tensor* b, double alpha, bool acc,
                             weft_status* s) {
  int64_t m = r->sizes[0], n = r->sizes[1], k = a->sizes[1];
  if (m <= WEFT_GEMV_MAX_ROWS || n <= WEFT_GEMV_MAX_ROWS || k <= 0 || r->strides[1] != 1 || r->strides[0] < n ||
      !weft__packed_is_weight(b) || !weft__packed_cacheable())
    return false;
  struct pack_b_ctx pc = {r->dtype, k, n, {weft_tensor_data_ptr(b), b->strides[0], b->strides[1]}};
  weft__packed* held = NULL;
  const void* bp = weft__packed_get(b, (weft__packed_key){WEFT_PACKED_GEMM_B, 0, r->dtype},
                                    weft__gemm_packed_b_bytes(r->dtype, k, n), pack_b, &pc, &held);
  if (!bp) return false; /* no memory to keep the panels: the driver packs them per call */
  weft_gemm_operand ga = {weft_tensor_data_ptr(a), a->strides[0], a->strides[1]};
  *s = weft__gemm_packed(weft__kernels(), r->dtype, m, n, k, alpha, ga, bp, acc, weft_tensor_data_ptr(r),
                         r->strides[0]);
  weft__packed_release(held);
  return true;
}

/* c (m x n) (=|+=) alpha * a (m x k) @ b (k x n), all 2-D */
static weft_tensor* mm_run(const char* kname, weft_tensor* r, const weft_tensor* a, const weft_tensor* b,
                           weft_scalar alpha, bool acc) {
  weft_dtype t = r->dtype;
  bool unit = r->sizes[0] == 1 || r->strides[0] == 1 || r->sizes[1] == 1 || r->strides[1] == 1;
  if ((t == WEFT_FLOAT32 || t == WEFT_FLOAT64) && r->device == WEFT_DEVICE_CPU && a->dtype == t && b->dtype == t &&
      unit) { /* straight to the driver, without three 3-D views: a decode step's small products feel them */
    weft_gemm_operand ga = {weft_tensor_data_ptr(a), a->strides[0], a->strides[1]};
    weft_gemm_operand gb = {weft_tensor_data_ptr(b), b->strides[0], b->strides[1]};
    weft_status s;
    if (!mm_packed_weight(r, a, b, weft_scalar_to_double(alpha), acc, &s))
      s = weft__gemm(weft__kernels(), t, r->sizes[0], r->sizes[1], a->sizes[1], weft_scalar_to_double(alpha), ga, gb,
                     acc, weft_tensor_data_ptr(r), r->strides[0], r->strides[1]);
    if (s == WEFT_OK) return r;
    weft_tensor_release(r);
    return NULL;
  }
  return finish(kname, r, view3(r, 1, r->sizes[0], r->sizes[1], 0, r->strides[0], r->strides[1]),
                view3(a, 1, a->sizes[0], a->sizes[1], 0, a->strides[0], a->strides[1]),
                view3(b, 1, b->sizes[0], b->sizes[1], 0, b->strides[0], b->strides[1]), alpha, acc);
}

static weft_tensor* mm_impl(const weft_tensor* self, const weft_tensor* mat2, weft_tensor* out) {
  if (devices("mm", self, mat2, NULL, out) != WEFT_OK) return NULL;
  if (self->ndim != 2) return weft__error_null(WEFT_INVALID_ARGUMENT, "mm: self must be a matrix");
  if (mat2->ndim != 2) return weft__error_null(WEFT_INVALID_ARGUMENT, "mm: mat2 must be a matrix");
  if (check_mm_shapes("mm", self, mat2) != WEFT_OK) return NULL;
  if (self->dtype != mat2->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "mm: expected scalar type %s but found %s", weft_dtype_name(self->dtype),
                            weft_dtype_name(mat2->dtype));
  const int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
  weft_tensor* r = make_out("mm", out, sizes, 2, self->dtype, self->device);
  if (!r) return NULL;
  return mm_run("addmm_impl_cpu_", r, self, mat2, weft_scalar_int(1), false);
}

static weft_tensor* mm_kernel(const weft_tensor* self, const weft_tensor* mat2) { return mm_impl(self, mat2, NULL); }
static weft_tensor* mm_out_kernel(const weft_tensor* self, const weft_tensor* mat2, weft_tensor* out) {
  return mm_impl(self, mat2, out);
}

static weft_tensor* addmm_impl(const weft_tensor* self, const weft_tensor* m1, const weft_tensor* m2, weft_scalar beta,
                               weft_scalar alpha, weft_tensor* out) {
  if (devices("addmm", self, m1, m2, out) != WEFT_OK) return NULL;
  if (m1->ndim != 2)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "addmm: mat1 must be a matrix, got %d-D tensor", m1->ndim);
  if (m2->ndim != 2)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "addmm: mat2 must be a matrix, got %d-D tensor", m2->ndim);
  if (check_mm_shapes("addmm", m1, m2) != WEFT_OK) return NULL;
  if (m1->dtype != m2->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "addmm: mat1 and mat2 must have the same dtype");
  if (self->dtype != m2->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "addmm: self and mat2 must have the same dtype");
  const int64_t sizes[2] = {m1->sizes[0], m2->sizes[1]};
  weft_tensor* self_e = weft_expand(self, sizes, 2);
  if (!self_e) return NULL;
  return add_product("addmm", "addmm_impl_cpu_", self_e, out, sizes, 2, m1, m2, beta, alpha);
}

static weft_tensor* addmm_kernel(const weft_tensor* self, const weft_tensor* m1, const weft_tensor* m2,
                                 weft_scalar beta, weft_scalar alpha) {
  return addmm_impl(self, m1, m2, beta, alpha, NULL);
}
static weft_tensor* addmm_out_kernel(const weft_tensor* self, const weft_tensor* m1, const weft_tensor* m2,
                                     weft_scalar beta, weft_scalar alpha, weft_tensor* out) {
  return addmm_impl(self, m1, m2, beta, alpha, out);
}

/* ---- bmm, baddbmm ---- */

static weft_status check_bmm_shapes(const char* op, const weft_tensor* a, const weft_tensor* b) {
  if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2])
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "%s: Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: "
                       "[%lld, %lld].",
                       op, (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0],
                       (long long)b->sizes[1]);
  return WEFT_OK;
}

static weft_tensor* bmm_run(const char* kname, weft_tensor* r, const weft_tensor* a, const weft_tensor* b,
                            weft_scalar alpha, bool acc) {
  return finish(kname, r, weft_tensor_retain(r), weft_tensor_retain((weft_tensor*)a),
                weft_tensor_retain((weft_tensor*)b), alpha, acc);
}

static weft_tensor* bmm_impl(const weft_tensor* self, const weft_tensor* mat2, weft_tensor* out) {
  if (devices("bmm", self, mat2, NULL, out) != WEFT_OK) return NULL;
  if (self->ndim != 3) return weft__error_null(WEFT_INVALID_ARGUMENT, "bmm: batch1 must be a 3D tensor");
  if (mat2->ndim != 3) return weft__error_null(WEFT_INVALID_ARGUMENT, "bmm: batch2 must be a 3D tensor");
  if (check_bmm_shapes("bmm", self, mat2) != WEFT_OK) return NULL;
  if (self->dtype != mat2->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "bmm: expected scalar type %s but found %s", weft_dtype_name(self->dtype),
                            weft_dtype_name(mat2->dtype));
  const int64_t sizes[3] = {self->sizes[0], self->sizes[1], mat2->sizes[2]};
  weft_tensor* r = make_out("bmm", out, sizes, 3, self->dtype, self->device);
  if (!r) return NULL;
  return bmm_run("bmm", r, self, mat2, weft_scalar_int(1), false);
}

static weft_tensor* bmm_kernel(const weft_tensor* self, const weft_tensor* mat2) { return bmm_impl(self, mat2, NULL); }
static weft_tensor* bmm_out_kernel(const weft_tensor* self, const weft_tensor* mat2, weft_tensor* out) {
  return bmm_impl(self, mat2, out);
}

static weft_tensor* baddbmm_impl(const weft_tensor* self, const weft_tensor* b1, const weft_tensor* b2,
                                 weft_scalar beta, weft_scalar alpha, weft_tensor* out) {
  if (devices("baddbmm", self, b1, b2, out) != WEFT_OK) return NULL;
  if (b1->ndim != 3) return weft__error_null(WEFT_INVALID_ARGUMENT, "baddbmm: batch1 must be a 3D tensor");
  if (b2->ndim < 3) {
    int64_t d = b2->ndim > 0 ? b2->ndim : 1;
    return weft__error_null(WEFT_INDEX_ERROR,
                            "baddbmm: Dimension out of range (expected to be in range of [%lld, %lld], but got 2)",
                            (long long)-d, (long long)(d - 1));
  }
  if (b2->ndim != 3) return weft__error_null(WEFT_INVALID_ARGUMENT, "baddbmm: batch2 must be a 3D tensor");
  const int64_t sizes[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
  weft_tensor* self_e = weft_expand(self, sizes, 3);
  if (!self_e) return NULL;
  weft_status s = check_bmm_shapes("baddbmm", b1, b2);
  if (s == WEFT_OK && b1->dtype != b2->dtype)
    s = weft__error(WEFT_INVALID_ARGUMENT, "baddbmm: expected scalar type %s but found %s", weft_dtype_name(b1->dtype),
                    weft_dtype_name(b2->dtype));
  if (s != WEFT_OK) {
    weft_tensor_release(self_e);
    return NULL;
  }
  return add_product("baddbmm", "baddbmm", self_e, out, sizes, 3, b1, b2, beta, alpha);
}

static weft_tensor* baddbmm_kernel(const weft_tensor* self, const weft_tensor* b1, const weft_tensor* b2,
                                   weft_scalar beta, weft_scalar alpha) {
  return baddbmm_impl(self, b1, b2, beta, alpha, NULL);
}
static weft_tensor* baddbmm_out_kernel(const weft_tensor* self, const weft_tensor* b1, const weft_tensor* b2,
                                       weft_scalar beta, weft_scalar alpha, weft_tensor* out) {
  return baddbmm_impl(self, b1, b2, beta, alpha, out);
}

/* ---- dot, mv ---- */

static weft_tensor* dot_impl(const weft_tensor* self, const weft_tensor* other, weft_tensor* out) {
  if (devices("dot", self, other, NULL, out) != WEFT_OK) return NULL;
  if (self->ndim != 1 || other->ndim != 1)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "dot: 1D tensors expected, but got %dD and %dD tensors",
                            self->ndim, other->ndim);
  if (self->dtype != other->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "dot: dot : expected both vectors to have same dtype, but found %s and %s",
                            weft_dtype_name(self->dtype), weft_dtype_name(other->dtype));
  if (self->numel != other->numel)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "dot: inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same "
                            "number of elements, but got %lld and %lld elements respectively",
                            (long long)self->numel, (long long)other->numel, (long long)self->numel,
                            (long long)other->numel);
  if (out && out->dtype != self->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "dot: result dtype %s does not match input dtype %s",
                            weft_dtype_name(out->dtype), weft_dtype_name(self->dtype));
  const int64_t none[1] = {0};
  weft_tensor* r = make_out("dot", out, none, 0, self->dtype, self->device);
  if (!r) return NULL;
  int64_t k = self->sizes[0];
  return finish("dot", r, view3(r, 1, 1, 1, 0, 0, 0), view3(self, 1, 1, k, 0, 0, self->strides[0]),
                view3(other, 1, k, 1, 0, other->strides[0], 0), weft_scalar_int(1), false);
}

static weft_tensor* dot_kernel(const weft_tensor* self, const weft_tensor* other) { return dot_impl(self, other, NULL); }
static weft_tensor* dot_out_kernel(const weft_tensor* self, const weft_tensor* other, weft_tensor* out) {
  return dot_impl(self, other, out);
}

static weft_tensor* mv_impl(const weft_tensor* self, const weft_tensor* vec, weft_tensor* out) {
  if (devices("mv", self, vec, NULL, out) != WEFT_OK) return NULL;
  if (self->ndim != 2 || vec->ndim != 1)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "mv: vector + matrix @ vector expected, got 1, %d, %d", self->ndim,
                            vec->ndim);
  int64_t m = self->sizes[0], k = self->sizes[1];
  if (k != vec->sizes[0])
    return weft__error_null(WEFT_INVALID_ARGUMENT, "mv: size mismatch, got %lld, %lldx%lld,%lld", (long long)m,
                            (long long)m, (long long)k, (long long)vec->sizes[0]);
  if (self->dtype != vec->dtype)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "mv: expected scalar type %s but found %s", weft_dtype_name(self->dtype),
                            weft_dtype_name(vec->dtype));
  weft_tensor* r = make_out("mv", out, &m, 1, self->dtype, self->device);
  if (!r) return NULL;
  return finish("addmv_impl_cpu", r, view3(r, 1, m, 1, 0, r->strides[0], 0),
                view3(self, 1, m, k, 0, self->strides[0], self->strides[1]), view3(vec, 1, k, 1, 0, vec->strides[0], 0),
                weft_scalar_int(1), false);
}

static weft_tensor* mv_kernel(const weft_tensor* self, const weft_tensor* vec) { return mv_impl(self, vec, NULL); }
static weft_tensor* mv_out_kernel(const weft_tensor* self, const weft_tensor* vec, weft_tensor* out) {
  return mv_impl(self, vec, out);
}

/* ---- composites: outer, matmul, linear ---- */

static weft_tensor* outer_impl(const weft_tensor* self, const weft_tensor* vec2, weft_tensor* out) {
  if (self->ndim != 1)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "outer: Expected 1-D argument self, but got %d-D", self->ndim);
  if (vec2->ndim != 1)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "outer: Expected 1-D argument vec2, but got %d-D", vec2->ndim);
  weft_tensor* col = weft_unsqueeze(self, 1);
  if (!col) return NULL;
  weft_tensor* r = out ? weft_mul_out(col, vec2, out) : weft_mul(col, vec2);
  weft_tensor_release(col);
  return r;
}

static weft_tensor* outer_kernel(const weft_tensor* self, const weft_tensor* vec2) {
  return outer_impl(self, vec2, NULL);
}
static weft_tensor* outer_out_kernel(const weft_tensor* self, const weft_tensor* vec2, weft_tensor* out) {
  return outer_impl(self, vec2, out);
}

/* The functional result copied into out (matmul.out, linear.out): out's
 * dtype must be the result's; out takes its shape. */
static weft_tensor* into_out(const char* op, weft_tensor* r, weft_tensor* out) {
  if (!r) return NULL;
  weft_tensor* o = make_out(op, out, r->sizes, r->ndim, r->dtype, r->device);
  weft_status s = o ? weft_copy_(o, r) : weft_last_status();
  weft_tensor_release(r);
  if (s != WEFT_OK) {
    weft_tensor_release(o);
    return NULL;
  }
  return o;
}

/* PyTorch's matmul (aten/src/ATen/native/LinearAlgebra.cpp, _matmul_impl):
 * 1-D and 2-D operands go to dot / mv / mm; a >= 3-D self with a 1-D or
 * 2-D other folds its batch into rows; everything else broadcasts the
 * batch dimensions and runs bmm, then drops the dimensions a 1-D operand
 * added. */
static weft_tensor* matmul_batched(const weft_tensor* a, const weft_tensor* b) {
  int da = a->ndim, db = b->ndim;
  /* 1-D operands as matrices: [k] -> [1, k] on the left, [k] -> [k, 1] on the right */
  int64_t n = da > 1 ? a->sizes[da - 2] : 1, ka = a->sizes[da - 1];
  int64_t kb = db > 1 ? b->sizes[db - 2] : b->sizes[0], p = db > 1 ? b->sizes[db - 1] : 1;
  int na = da > 2 ? da - 2 : 0, nb = db > 2 ? db - 2 : 0, nbt = na > nb ? na : nb;
  int64_t batch[WEFT_MAX_DIMS], nbatch = 1;
  for (int i = 0; i < nbt; i++) {
    int ia = i - (nbt - na), ib = i - (nbt - nb);
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return weft__error_null(WEFT_INVALID_ARGUMENT,
                              "matmul: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                              "non-singleton dimension %d",
                              (long long)sa, (long long)sb, i);
    batch[i] = sa == 1 ? sb : sa;
    nbatch *= batch[i];
  }
  int64_t ea[WEFT_MAX_DIMS + 2], eb[WEFT_MAX_DIMS + 2];
  memcpy(ea, batch, sizeof(int64_t) * (size_t)nbt);
  memcpy(eb, batch, sizeof(int64_t) * (size_t)nbt);
  ea[nbt] = n, ea[nbt + 1] = ka, eb[nbt] = kb, eb[nbt + 1] = p;
  weft_tensor* a2 = da == 1 ? weft_unsqueeze(a, 0) : weft_tensor_retain((weft_tensor*)a);
  weft_tensor* b2 = db == 1 ? weft_unsqueeze(b, 1) : weft_tensor_retain((weft_tensor*)b);
  weft_tensor *ae = a2 ? weft_expand(a2, ea, nbt + 2) : NULL, *be = b2 ? weft_expand(b2, eb, nbt + 2) : NULL;
  const int64_t s3a[3] = {nbatch, n, ka}, s3b[3] = {nbatch, kb, p};
  weft_tensor *a3 = ae ? weft_reshape(ae, s3a, 3) : NULL, *b3 = be ? weft_reshape(be, s3b, 3) : NULL;
  weft_tensor* r = a3 && b3 ? weft_bmm(a3, b3) : NULL;
  /* the result's shape: batch, then n and p unless their operand was 1-D */
  int64_t rs[WEFT_MAX_DIMS + 2];
  int nr = nbt;
  memcpy(rs, batch, sizeof(int64_t) * (size_t)nbt);
  if (da > 1) rs[nr++] = n;
  if (db > 1) rs[nr++] = p;
  weft_tensor* v = r ? weft_view(r, rs, nr) : NULL;
  weft_tensor* list[] = {a2, b2, ae, be, a3, b3, r};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  return v;
}

static weft_tensor* matmul_kernel(const weft_tensor* a, const weft_tensor* b) {
  int da = a->ndim, db = b->ndim;
  if (da == 0 || db == 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT,
                            "matmul: both arguments to matmul need to be at least 1D, but they are %dD and %dD", da, db);
  if (da == 1 && db == 1) return weft_dot(a, b);
  if (da == 2 && db == 1) return weft_mv(a, b);
  if (da == 2 && db == 2) return weft_mm(a, b);
  if (da == 1 && db == 2) {
    weft_tensor* a2 = weft_unsqueeze(a, 0);
    weft_tensor* r = a2 ? weft_mm(a2, b) : NULL;
    weft_tensor* v = r ? weft_squeeze_dim(r, 0) : NULL;
    weft_tensor_release(a2);
    weft_tensor_release(r);
    return v;
  }
  if (da >= 3 && (db == 1 || db == 2)) { /* fold the batch into the rows */
    int64_t rows[2] = {1, a->sizes[da - 1]};
    for (int d = 0; d < da - 1; d++) rows[0] *= a->sizes[d];
    weft_tensor* a2 = weft_reshape(a, rows, 2);
    weft_tensor* r = a2 ? (db == 1 ? weft_mv(a2, b) : weft_mm(a2, b)) : NULL;
    int64_t sizes[WEFT_MAX_DIMS];
    memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)(da - 1));
    if (db == 2) sizes[da - 1] = b->sizes[1];
    weft_tensor* v = r ? weft_view(r, sizes, db == 2 ? da : da - 1) : NULL;
    weft_tensor_release(a2);
    weft_tensor_release(r);
    return v;
  }
  return matmul_batched(a, b);
}

static weft_tensor* matmul_out_kernel(const weft_tensor* a, const weft_tensor* b, weft_tensor* out) {
  return into_out("matmul", weft_matmul(a, b), out);
}

static weft_tensor* linear_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias) {
  weft_tensor* wt = weft_t(weight);
  if (!wt) return NULL;
  /* the products below read their B (wt) packed from the cache on the weight's storage */
  weft__packed_weight_set(weight);
  weft_tensor* r;
  const weft_scalar one = weft_scalar_int(1);
  if (input->ndim == 2 && bias) {
    r = weft_addmm(bias, input, wt, one, one);
  } else if (input->ndim == 2 && weight->ndim == 2) { /* matmul's own choice, one dispatch sooner */
    r = weft_mm(input, wt);
  } else if (input->ndim == 3 && bias && input->is_contiguous) { /* PyTorch's fused path folds the batch */
    const int64_t rows[2] = {input->sizes[0] * input->sizes[1], input->sizes[2]};
    weft_tensor* x2 = weft_view(input, rows, 2);
    weft_tensor* r2 = x2 ? weft_addmm(bias, x2, wt, one, one) : NULL;
    const int64_t sizes[3] = {input->sizes[0], input->sizes[1], r2 ? r2->sizes[1] : 0};
    r = r2 ? weft_view(r2, sizes, 3) : NULL;
    weft_tensor_release(x2);
    weft_tensor_release(r2);
  } else {
    r = weft_matmul(input, wt);
    if (r && bias && r->device == WEFT_DEVICE_WEBGPU) { /* out of place there: r's buffer is read */
      weft_tensor* rb = weft_add(r, bias, one);
      weft_tensor_release(r);
      r = rb;
    } else if (r && bias && weft_add_(r, bias, one) != WEFT_OK) {
      weft_tensor_release(r);
      r = NULL;
    }
  }
  weft__packed_weight_set(NULL);
  weft_tensor_release(wt);
  return r;
}

static weft_tensor* linear_out_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                      weft_tensor* out) {
  /* matrices of out's dtype, out sharing no memory with them: PyTorch's
   * linear_out, the product written into out (no result to copy) */
  weft_dtype t = input->dtype;
  bool direct = input->ndim == 2 && weight->ndim == 2 && weight->dtype == t && out->dtype == t &&
                (!bias || bias->dtype == t) && out->storage != input->storage && out->storage != weight->storage &&
                (!bias || out->storage != bias->storage);
  if (!direct) return into_out("linear", weft_linear(input, weight, bias), out);
  weft_tensor* wt = weft_t(weight);
  const weft_scalar one = weft_scalar_int(1);
  weft_tensor* r = !wt ? NULL : bias ? weft_addmm_out(bias, input, wt, one, one, out) : weft_mm_out(input, wt, out);
  weft_tensor_release(wt);
  return r;
}

weft_status weft__linalg_register(void) {
#define CPU_META(op, fn)      \
  WEFT_KERNEL(op, CPU, fn);   \
  WEFT_KERNEL(op, META, fn);  \
  WEFT_KERNEL(op, WEBGPU, fn);
  CPU_META(mm, mm_kernel)
  CPU_META(mm_out, mm_out_kernel)
  CPU_META(bmm, bmm_kernel)
  CPU_META(bmm_out, bmm_out_kernel)
  CPU_META(addmm, addmm_kernel)
  CPU_META(addmm_out, addmm_out_kernel)
  CPU_META(baddbmm, baddbmm_kernel)
  CPU_META(baddbmm_out, baddbmm_out_kernel)
  CPU_META(dot, dot_kernel)
  CPU_META(dot_out, dot_out_kernel)
  CPU_META(mv, mv_kernel)
  CPU_META(mv_out, mv_out_kernel)
#undef CPU_META
  WEFT_KERNEL(outer, COMPOSITE_IMPLICIT_AUTOGRAD, outer_kernel);
  WEFT_KERNEL(outer_out, COMPOSITE_IMPLICIT_AUTOGRAD, outer_out_kernel);
  WEFT_KERNEL(matmul, COMPOSITE_IMPLICIT_AUTOGRAD, matmul_kernel);
  WEFT_KERNEL(matmul_out, COMPOSITE_IMPLICIT_AUTOGRAD, matmul_out_kernel);
  WEFT_KERNEL(linear, COMPOSITE_IMPLICIT_AUTOGRAD, linear_kernel);
  WEFT_KERNEL(linear_out, COMPOSITE_IMPLICIT_AUTOGRAD, linear_out_kernel);
  return WEFT_OK;
}
