/* The matmul family (issue 12): the PyTorch 1.13 cases of linalg_cases.inc
 * (tests/fixtures/gen_linalg_fixtures.py; the same cases as
 * tests/fixtures/linalg.json) through the boxed dispatcher at 1 and 3
 * threads and with the scalar GEMM kernels; registration of every op; Meta
 * tensors; x @ w.T on a large transposed weight against a float64
 * reference. */
#include <stdlib.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "fixture_util.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/parallel.h"

enum {
  W_BOOL = WEFT_BOOL, W_UINT8 = WEFT_UINT8, W_INT8 = WEFT_INT8, W_INT16 = WEFT_INT16, W_INT32 = WEFT_INT32,
  W_INT64 = WEFT_INT64, W_FLOAT16 = WEFT_FLOAT16, W_BFLOAT16 = WEFT_BFLOAT16, W_FLOAT32 = WEFT_FLOAT32,
  W_FLOAT64 = WEFT_FLOAT64
};

typedef struct {
  char kind; /* 't' tensor, 'n' None, 'i' / 'f' / 'b' int, float, bool number */
  int dtype, ndim;
  int64_t size[6], stride[6], offset;
  int first, count; /* storage values in lin_vals */
  double number;
} lin_arg;

typedef struct {
  const char* op;
  int first, count; /* arguments in lin_args */
  int dtype;        /* -1: PyTorch raised `error` */
  int ndim;
  int64_t size[6], stride[6];
  int vals, nvals;
  const char* error;
} lin_case;

#include "linalg_cases.inc"

static weft_tensor* tensor_of(const lin_arg* a) {
  int64_t n = a->count;
  weft_dtype t = (weft_dtype)a->dtype;
  weft_tensor* base = weft_empty(&n, 1, t, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (!base) return NULL;
  for (int64_t i = 0; i < n; i++) {
    double v = lin_vals[a->first + i];
    int fl = weft_dtype_is_floating(t);
    weft__value x = {fl, fl ? 0 : (int64_t)v, v};
    weft__store((char*)weft_tensor_data_ptr(base) + i * (int64_t)weft_dtype_size(t), t, x);
  }
  weft_tensor* r = weft_as_strided(base, a->size, a->stride, a->ndim, a->offset);
  weft_tensor_release(base);
  return r;
}

/* element i in row-major logical order */
static double at(const weft_tensor* t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += i % t->sizes[d] * t->strides[d];
    i /= t->sizes[d];
  }
  return weft__value_f64(weft__load((const char*)weft_tensor_data_ptr(t) + off * (int64_t)weft_dtype_size(t->dtype),
                                    t->dtype));
}

static const char* check(const lin_case* c, const weft_tensor* r, char* buf, size_t cap) {
  if ((int)r->dtype != c->dtype) return "dtype";
  if (r->ndim != c->ndim) return "rank";
  for (int d = 0; d < c->ndim; d++) {
    if (r->sizes[d] != c->size[d]) return "shape";
    if (c->size[d] > 1 && r->strides[d] != c->stride[d]) return "strides";
  }
  /* values are exact in every dtype (multiples of 1/8, small sums) */
  for (int64_t i = 0; i < c->nvals; i++) {
    double got = at(r, i), want = lin_vals[c->vals + i];
    if (!(got == want || (isnan(got) && isnan(want)))) {
      snprintf(buf, cap, "value[%lld] %.17g, want %.17g", (long long)i, got, want);
      return buf;
    }
  }
  return NULL;
}

static int replay(int ci) {
  const lin_case* c = &lin_cases[ci];
  weft_op* op = weft_op_find(c->op);
  weft_stack st;
  weft_stack_init(&st);
  const char* bad = op ? NULL : "no such op";
  for (int k = 0; k < c->count && !bad; k++) {
    const lin_arg* a = &lin_args[c->first + k];
    weft_tensor* t = a->kind == 't' ? tensor_of(a) : NULL;
    weft_status s = a->kind == 't'   ? (t ? weft_stack_push_tensor_owned(&st, t) : weft_last_status())
                    : a->kind == 'n' ? weft_stack_push_none(&st)
                    : a->kind == 'i' ? weft_stack_push_scalar(&st, weft_scalar_int((int64_t)a->number))
                    : a->kind == 'f' ? weft_stack_push_scalar(&st, weft_scalar_double(a->number))
                                     : weft_stack_push_scalar(&st, weft_scalar_bool(a->number != 0));
    if (s != WEFT_OK) bad = "arguments";
  }
  char buf[256];
  if (!bad) {
    weft_status s = weft_op_call_boxed(op, &st);
    if (c->dtype < 0) bad = s == WEFT_OK ? "expected an error" : strstr(weft_last_error(), c->error) ? NULL : "message";
    else bad = s != WEFT_OK ? "unexpected error" : check(c, weft_stack_peek(&st, 0)->u.t, buf, sizeof buf);
  }
  if (bad)
    fprintf(stderr, "case %d %s: %s (last error: %s; want %s)\n", ci, c->op, bad, weft_last_error(),
            c->error ? c->error : "a result");
  weft_stack_clear(&st);
  return bad != NULL;
}

FX_REPLAY_HELPERS(lin_cases)

static void test_registration(void) {
#define WEFT_OP(cname, schema, ...) schema,
  static const char* const schemas[] = {
#include "ops/linalg.def"
  };
#undef WEFT_OP
  CHECK(fx_check_ops(schemas, sizeof schemas / sizeof schemas[0], cases_of) == 0);
}

static void test_meta(void) {
  int64_t sa[3] = {4, 2, 3}, sb[2] = {3, 5};
  weft_tensor* a = weft_empty(sa, 3, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* b = weft_empty(sb, 2, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  weft_tensor* r = weft_matmul(a, b);
  CHECK(r && weft_tensor_device(r) == WEFT_DEVICE_META);
  if (r) CHECK_SIZES(r, 4, 2, 5);
  weft_tensor* e = weft_mm(b, b);
  CHECK(!e);
  CHECK_ERROR_HAS("mat1 and mat2 shapes cannot be multiplied (3x5 and 3x5)");
  weft_tensor_release(r);
  weft_tensor_release(a);
  weft_tensor_release(b);
}

/* x @ w.T with w [256, 784] read transposed, at 1 and 4 threads */
static void test_linear_large(void) {
  int64_t sx[2] = {64, 784}, sw[2] = {256, 784};
  weft_manual_seed(3);
  weft_tensor* x = weft_randn(sx, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(sw, 2, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  for (int th = 1; th <= 4; th += 3) {
    weft_set_num_threads(th);
    weft_tensor* y = weft_linear(x, w, NULL);
    CHECK(y != NULL);
    if (!y) continue;
    const float *px = weft_tensor_data_ptr(x), *pw = weft_tensor_data_ptr(w), *py = weft_tensor_data_ptr(y);
    int bad = 0;
    for (int64_t i = 0; i < 64; i++)
      for (int64_t j = 0; j < 256; j++) {
        double s = 0;
        for (int64_t k = 0; k < 784; k++) s += (double)px[i * 784 + k] * pw[j * 784 + k];
        bad += fabs(py[i * 256 + j] - s) > 1e-3;
      }
    CHECK(bad == 0);
    weft_tensor_release(y);
  }
  weft_set_num_threads(1);
  weft_tensor_release(x);
  weft_tensor_release(w);
}

int main(void) {
  weft_set_num_threads(1);
  replay_all("1 thread");
  weft_set_num_threads(3);
  replay_all("3 threads");
  weft_set_num_threads(1);
  test_registration();
  test_meta();
  test_linear_large();
  TEST_REPORT();
}
