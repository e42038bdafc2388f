/* _inverted_residual (issue 23): the fused MobileNetV2 block against the
 * three _conv2d_fused convolutions it stands for.
 *   - channels_last float32 (the fused row-band driver): equal bit for bit,
 *     stride 1 and 2, with and without expansion and skip, odd and tiny
 *     sizes, 5x5 and 3x1 depthwise kernels, bands that wrap the row ring,
 *     1 and 3 threads, batches of 1 and 3, biases given or not; at 3
 *     threads small maps run staged (threads split channels), a 40x40 one
 *     in row bands;
 *   - NCHW and float64 (the composite): equal to the same convolutions;
 *   - the packed weights cached and repacked after an in-place write;
 *   - Meta, explain's plan, an unbatched input, the refusals and the
 *     refusal of a gradient. */
#include <math.h>
#include <stdlib.h>

#include "core/internal.h"
#include "kernel_test_util.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/autograd.h"
#include "weft/explain.h"
#include "weft/parallel.h"

static const int64_t one2[2] = {1, 1}, zero2[2] = {0, 0};

/* values in [lo, hi), dtype dt, contiguous */
static weft_tensor* rnd(const int64_t* sizes, int nd, weft_dtype dt, float lo, float hi) {
  weft_tensor* t = weft_empty(sizes, nd, dt, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  for (int64_t i = 0; t && i < t->numel; i++) {
    float v = kt_randf(lo, hi);
    if (dt == WEFT_FLOAT64)
      ((double*)weft_tensor_data_ptr(t))[i] = v;
    else
      ((float*)weft_tensor_data_ptr(t))[i] = v;
  }
  return t;
}

/* the largest |a - b| (NaN: infinity) */
static double max_diff(const weft_tensor* a, const weft_tensor* b) {
  if (!a || !b) return INFINITY;
  weft_tensor* d = weft_sub(a, b, weft_scalar_int(1));
  weft_tensor* ad = d ? weft_abs(d) : NULL;
  weft_tensor* adc = ad ? weft_to_dtype(ad, WEFT_FLOAT64, false) : NULL;
  weft_tensor* c = adc ? weft_contiguous(adc, WEFT_CONTIGUOUS_FORMAT) : NULL;
  double m = c ? 0 : INFINITY;
  for (int64_t i = 0; c && i < c->numel; i++) {
    double v = ((const double*)weft_tensor_data_ptr(c))[i];
    m = v > m || v != v ? (v != v ? INFINITY : v) : m;
  }
  weft_tensor_release(d), weft_tensor_release(ad), weft_tensor_release(adc), weft_tensor_release(c);
  return m;
}

typedef struct {
  weft_tensor *we, *be, *wd, *bd, *wp, *bp;
  int64_t stride;
  bool residual;
} block;

static weft_tensor* run_block(const weft_tensor* x, const block* b) {
  return weft_op__inverted_residual(x, b->we, b->be, b->wd, b->bd, b->wp, b->bp, b->stride, b->residual);
}

/* the three convolutions */
static weft_tensor* composed(const weft_tensor* x, const block* b) {
  const int64_t st[2] = {b->stride, b->stride}, pad[2] = {(b->wd->sizes[2] - 1) / 2, (b->wd->sizes[3] - 1) / 2};
  weft_tensor* h = b->we ? weft_op__conv2d_fused(x, b->we, b->be, one2, 2, zero2, 2, one2, 2, 1, "relu6", NULL)
                         : weft_tensor_retain((weft_tensor*)x);
  weft_tensor* d = h ? weft_op__conv2d_fused(h, b->wd, b->bd, st, 2, pad, 2, one2, 2, b->wd->sizes[0], "relu6", NULL)
                     : NULL;
  weft_tensor* y = d ? weft_op__conv2d_fused(d, b->wp, b->bp, one2, 2, zero2, 2, one2, 2, 1, "none",
                                             b->residual ? x : NULL)
                     : NULL;
  weft_tensor_release(h), weft_tensor_release(d);
  return y;
}

static block make_block(int64_t cin, int64_t ch, int64_t cout, int64_t kh, int64_t kw, int64_t stride, bool expand,
                        bool biases, weft_dtype dt) {
  const int64_t se[4] = {ch, cin, 1, 1}, sd[4] = {ch, 1, kh, kw}, sp[4] = {cout, ch, 1, 1}, sbh[1] = {ch},
                sbo[1] = {cout};
  block b = {expand ? rnd(se, 4, dt, -0.5f, 0.5f) : NULL, expand && biases ? rnd(sbh, 1, dt, -1, 3) : NULL,
             rnd(sd, 4, dt, -0.6f, 0.6f), biases ? rnd(sbh, 1, dt, -1, 3) : NULL, rnd(sp, 4, dt, -0.3f, 0.3f),
             biases ? rnd(sbo, 1, dt, -1, 1) : NULL, stride, stride == 1 && cin == cout};
  return b;
}

static void free_block(block* b) {
  weft_tensor* t[] = {b->we, b->be, b->wd, b->bd, b->wp, b->bp};
  for (int i = 0; i < 6; i++) weft_tensor_release(t[i]);
}

/* every case's fused result equals the convolutions', in both formats */
static void test_cases(void) {
  /* n, cin, t, cout, h, w, kh, kw, stride, biases */
  static const int64_t cases[][10] = {
      {1, 16, 6, 16, 9, 7, 3, 3, 1, 1},   {1, 16, 6, 24, 9, 7, 3, 3, 2, 1},  {3, 8, 1, 8, 5, 6, 3, 3, 1, 1},
      {1, 8, 1, 12, 11, 13, 3, 3, 2, 0},  {2, 24, 6, 32, 14, 13, 3, 3, 2, 1}, {1, 12, 6, 12, 1, 1, 3, 3, 1, 1},
      {1, 5, 3, 5, 30, 3, 3, 3, 1, 0},    {1, 20, 4, 20, 17, 2, 5, 5, 1, 1},  {1, 4, 2, 6, 7, 40, 3, 1, 2, 1},
      {1, 32, 6, 32, 4, 70, 3, 3, 1, 1},  {1, 6, 3, 6, 2, 3, 5, 5, 2, 1},   {1, 16, 6, 16, 40, 40, 3, 3, 1, 1},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const int64_t* c = cases[ci];
    const int64_t sx[4] = {c[0], c[1], c[4], c[5]};
    for (int dti = 0; dti < 2; dti++) {
      weft_dtype dt = dti ? WEFT_FLOAT64 : WEFT_FLOAT32;
      block b = make_block(c[1], c[1] * c[2], c[3], c[6], c[7], c[8], c[2] != 1, c[9], dt);
      weft_tensor* x = rnd(sx, 4, dt, -2, 2);
      weft_tensor* xcl = x ? weft_contiguous(x, WEFT_CHANNELS_LAST) : NULL;
      for (int threads = 1; threads <= 3; threads += 2) {
        weft_set_num_threads(threads);
        for (int f = 0; f < 2; f++) {
          const weft_tensor* xi = f ? xcl : x;
          weft_tensor* y = run_block(xi, &b);
          weft_tensor* want = composed(xi, &b);
          double d = max_diff(y, want);
          if (d != 0.0) printf("case %zu dtype %d threads %d channels_last %d: %g\n", ci, dti, threads, f, d);
          CHECK(d == 0.0);
          CHECK(y && (f ? y->is_channels_last_contiguous : y->is_contiguous));
          weft_tensor_release(y), weft_tensor_release(want);
        }
      }
      weft_set_num_threads(1);
      weft_tensor_release(x), weft_tensor_release(xcl);
      free_block(&b);
    }
  }
}

/* the projection's K (the hidden channels) over several K blocks, the
 * panels cached on the weights and repacked after a write */
static void test_cache(void) {
  const int64_t sx[4] = {1, 160, 7, 7};
  block b = make_block(160, 960, 160, 3, 3, 1, true, true, WEFT_FLOAT32);
  weft_tensor* x0 = rnd(sx, 4, WEFT_FLOAT32, -2, 2);
  weft_tensor* x = weft_contiguous(x0, WEFT_CHANNELS_LAST);
  weft_tensor* t = rnd(sx, 1, WEFT_FLOAT32, 0, 1); /* registers autograd's kernels: versions are counted */
  CHECK(weft_set_requires_grad(t, true) == WEFT_OK);
  weft_tensor* y1 = run_block(x, &b);
  CHECK(atomic_load(&b.wp->storage->packed) != NULL && atomic_load(&b.we->storage->packed) != NULL);
  weft_tensor* w2 = rnd(b.wp->sizes, 4, WEFT_FLOAT32, -0.3f, 0.3f);
  CHECK(weft_copy_(b.wp, w2) == WEFT_OK);
  weft_tensor* y2 = run_block(x, &b);
  weft_tensor* want = composed(x, &b);
  CHECK(max_diff(y2, want) == 0.0 && max_diff(y1, y2) > 1e-3);
  weft_tensor* list[] = {x0, x, t, y1, w2, y2, want};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  free_block(&b);
}

static void test_op(void) {
  const int64_t sx[4] = {2, 8, 6, 5};
  block b = make_block(8, 24, 8, 3, 3, 1, true, true, WEFT_FLOAT32);
  weft_tensor* x0 = rnd(sx, 4, WEFT_FLOAT32, -2, 2);
  weft_tensor* x = weft_contiguous(x0, WEFT_CHANNELS_LAST);
  /* unbatched */
  weft_tensor* x3 = weft_select(x, 0, 1);
  weft_tensor* y3 = run_block(x3, &b);
  weft_tensor* want3 = composed(x3, &b);
  CHECK(y3 && y3->ndim == 3 && max_diff(y3, want3) == 0.0);
  weft_tensor_release(x3), weft_tensor_release(y3), weft_tensor_release(want3);
  /* refusals */
  block bad = b;
  bad.stride = 2;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: residual needs stride 1 and as many output channels as input channels "
                  "(stride 2, 8 -> 8 channels)");
  bad = b, bad.stride = 0, bad.residual = false;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: expected a positive stride but got 0");
  bad = b, bad.we = NULL;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: expandBias was given without expandWeight");
  bad.be = NULL;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: without expandWeight, dwWeight needs the input's 8 channels but has 24");
  bad = b, bad.we = b.wp;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: expected expandWeight of size [24, 8, 1, 1] but got [8, 24, 1, 1]");
  bad = b, bad.wp = b.we;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: expected projectWeight of size [*, 24, 1, 1] but got [24, 8, 1, 1]");
  bad = b, bad.wd = b.we;
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: expected dwWeight of size [hidden, 1, kH, kW] with odd kH and kW but got "
                  "[24, 8, 1, 1]");
  const int64_t s7[1] = {7};
  weft_tensor* b7 = rnd(s7, 1, WEFT_FLOAT32, 0, 1);
  bad = b, bad.bd = b7; /* conv2d's own check, naming this op */
  CHECK(!run_block(x, &bad));
  CHECK_ERROR_HAS("_inverted_residual: Given weight of size [24, 1, 3, 3], expected bias to be 1-dimensional with 24 "
                  "elements, but got bias of size [7] instead");
  weft_tensor_release(b7);
  weft_tensor* x2 = weft_select(x0, 0, 0);
  weft_tensor* x1 = x2 ? weft_select(x2, 0, 0) : NULL;
  CHECK(!run_block(x1, &b));
  CHECK_ERROR_HAS("_inverted_residual: expected a 3-D or 4-D input");
  weft_tensor_release(x1), weft_tensor_release(x2);
  /* no gradient: refused while grad mode is on, computed under no_grad */
  weft_set_requires_grad(b.wd, true);
  weft_tensor* yg = run_block(x, &b);
  CHECK(!yg);
  CHECK_ERROR_HAS("the derivative for '_inverted_residual' is not implemented.");
  bool was = weft_set_grad_enabled(false);
  yg = run_block(x, &b);
  CHECK(yg != NULL);
  weft_set_grad_enabled(was);
  weft_tensor_release(yg);
  weft_set_requires_grad(b.wd, false);
  /* explain: the fused plan */
  weft_stack st;
  weft_stack_init(&st);
  weft_tensor* args[] = {x, b.we, b.be, b.wd, b.bd, b.wp, b.bp};
  for (int i = 0; i < 7; i++) weft_stack_push_tensor(&st, args[i]);
  weft_stack_push_int(&st, 1);
  weft_stack_push_bool(&st, true);
  char* json = NULL;
  CHECK(weft_explain_boxed(weft_op_find("_inverted_residual"), &st, &json) == WEFT_OK);
  CHECK(json && strstr(json, "\"algorithm\":\"fused_row_bands_nhwc\"") && strstr(json, "\"hidden\":24") &&
        strstr(json, "\"band_rows\":6") && strstr(json, "\"residual\":true"));
  free(json);
  json = NULL;
  /* on several threads (3 asked, the pool's size at most) one image of this small map runs staged */
  weft_set_num_threads(3);
  const int64_t s1[4] = {1, 8, 6, 5};
  weft_tensor* one0 = rnd(s1, 4, WEFT_FLOAT32, -2, 2);
  weft_tensor* one = one0 ? weft_contiguous(one0, WEFT_CHANNELS_LAST) : NULL;
  if (weft_get_num_threads() > 1 && one) {
    char tasks[32];
    snprintf(tasks, sizeof tasks, "\"tasks\":%d", weft_get_num_threads());
    weft_stack_clear(&st);
    weft_stack_push_tensor(&st, one);
    for (int i = 1; i < 7; i++) weft_stack_push_tensor(&st, args[i]);
    weft_stack_push_int(&st, 1);
    weft_stack_push_bool(&st, true);
    CHECK(weft_explain_boxed(weft_op_find("_inverted_residual"), &st, &json) == WEFT_OK);
    CHECK(json && strstr(json, "\"algorithm\":\"fused_staged_nhwc\"") && strstr(json, tasks));
    free(json);
  }
  weft_tensor_release(one0), weft_tensor_release(one);
  weft_set_num_threads(1);
  weft_stack_clear(&st);
  /* Meta */
  weft_tensor* xm = weft_empty(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CHANNELS_LAST);
  block bm = b;
  bm.we = weft_empty(b.we->sizes, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  bm.wd = weft_empty(b.wd->sizes, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  bm.wp = weft_empty(b.wp->sizes, 4, WEFT_FLOAT32, WEFT_DEVICE_META, WEFT_CONTIGUOUS_FORMAT);
  bm.be = bm.bd = bm.bp = NULL;
  weft_tensor* ym = run_block(xm, &bm);
  CHECK(ym && weft_tensor_device(ym) == WEFT_DEVICE_META && ym->is_channels_last_contiguous && ym->sizes[1] == 8);
  weft_tensor* list[] = {x0, x, xm, bm.we, bm.wd, bm.wp, ym};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) weft_tensor_release(list[i]);
  free_block(&b);
}

int main(void) {
  test_cases();
  test_cache();
  test_op();
  TEST_REPORT();
}
