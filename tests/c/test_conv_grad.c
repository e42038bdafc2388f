/* Gradients of conv2d and 2-D pooling through autograd (issue 15): a
 * float64 finite-difference gradcheck of every input, NCHW and
 * channels_last inputs, groups/stride/padding/dilation, at 1 and 3
 * threads (the gradients identical bit for bit); node names; a wrong
 * grad_output size; no leak. PyTorch's values and strides are
 * tests/js/conv-grad.test.mjs (tests/fixtures/conv_grad.json). */
#include <math.h>
#include <stdlib.h>

#include "core/internal.h"
#include "ops/ops.h"
#include "test.h"
#include "weft/autograd.h"
#include "weft/parallel.h"

typedef struct {
  const char* name;
  int kind; /* 0 conv2d (x, w, b), 1 max_pool2d, 2 avg_pool2d, 3 adaptive_avg_pool2d, 4 conv_transpose2d, 5 conv1d,
              * 6 conv_transpose1d (5, 6: x and w 3-D, the first 3 sizes) */
  int64_t x[4], w[4];
  int64_t stride, pad, dil, groups; /* pools: kernel in w[2], w[3] */
  bool cl, wcl, bias, ceil;
  const char* node;
  const char* pad_str; /* conv2d.padding's 'same' / 'valid', or NULL */
  int64_t out_pad;     /* conv_transpose2d */
} gc_conv;

static const gc_conv CASES[] = {
  {"conv 3x3 pad 1", 0, {2, 3, 6, 5}, {4, 3, 3, 3}, 1, 1, 1, 1, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv 3x3 pad 1 channels_last", 0, {2, 3, 6, 5}, {4, 3, 3, 3}, 1, 1, 1, 1, true, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv weight channels_last", 0, {1, 4, 5, 5}, {2, 4, 2, 3}, 2, 1, 1, 1, false, true, false, false, "ConvolutionBackward0", NULL, 0},
  {"conv groups stride dilation", 0, {1, 6, 9, 8}, {6, 2, 3, 2}, 2, 2, 2, 3, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  /* one input channel per group in NCHW: the direct weight gradient (dwconv_wgrad) */
  {"conv one input channel pad 1", 0, {3, 1, 6, 7}, {4, 1, 3, 3}, 1, 1, 1, 1, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv one input channel stride 2 dilation 2", 0, {2, 1, 9, 8}, {3, 1, 2, 3}, 2, 0, 2, 1, false, false, false, false,
   "ConvolutionBackward0", NULL, 0},
  {"conv depthwise multiplier 2", 0, {2, 3, 7, 6}, {6, 1, 3, 3}, 2, 1, 1, 3, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv depthwise channels_last", 0, {2, 4, 5, 6}, {4, 1, 3, 3}, 1, 1, 1, 4, true, true, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv unbatched", 0, {0, 2, 5, 5}, {3, 2, 3, 3}, 1, 0, 1, 1, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv padding same, even kernel (asymmetric)", 0, {2, 2, 6, 5}, {3, 2, 2, 4}, 1, 0, 2, 1, false, false, true, false,
   "ConvolutionBackward0", "same", 0},
  {"conv padding same channels_last", 0, {1, 4, 5, 5}, {4, 2, 3, 3}, 1, 0, 1, 2, true, false, true, false,
   "ConvolutionBackward0", "same", 0},
  {"conv padding valid", 0, {1, 2, 6, 5}, {3, 2, 3, 2}, 2, 0, 1, 1, false, false, false, false,
   "ConvolutionBackward0", "valid", 0},
  {"conv_transpose2d", 4, {2, 3, 4, 5}, {3, 2, 3, 3}, 1, 0, 1, 1, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv_transpose2d stride 2 pad 1 output_padding 1", 4, {2, 4, 3, 4}, {4, 3, 3, 2}, 2, 1, 1, 1, false, false, true,
   false, "ConvolutionBackward0", NULL, 1},
  {"conv_transpose2d groups dilation channels_last", 4, {1, 4, 4, 3}, {4, 2, 2, 3}, 3, 1, 2, 2, true, true, true, false,
   "ConvolutionBackward0", NULL, 2},
  {"conv_transpose2d unbatched", 4, {0, 2, 3, 3}, {2, 3, 2, 2}, 2, 0, 1, 1, false, false, false, false,
   "ConvolutionBackward0", NULL, 1},
  {"conv1d", 5, {2, 4, 9}, {6, 2, 3}, 2, 1, 2, 2, false, false, true, false, "ConvolutionBackward0", NULL, 0},
  {"conv1d unbatched same", 5, {0, 3, 7}, {2, 3, 4}, 1, 0, 1, 1, false, false, true, false, "ConvolutionBackward0",
   "same", 0},
  {"conv_transpose1d", 6, {2, 4, 5}, {4, 3, 3}, 2, 1, 1, 2, false, false, true, false, "ConvolutionBackward0", NULL, 1},
  {"conv_transpose1d unbatched dilation", 6, {0, 2, 4}, {2, 3, 2}, 1, 0, 2, 1, false, false, false, false,
   "ConvolutionBackward0", NULL, 1},
  {"max_pool2d", 1, {2, 3, 7, 6}, {0, 0, 3, 2}, 2, 1, 1, 1, false, false, false, true, "MaxPool2DWithIndicesBackward0", NULL, 0},
  {"max_pool2d channels_last", 1, {2, 3, 7, 6}, {0, 0, 3, 3}, 1, 1, 2, 1, true, false, false, false,
   "MaxPool2DWithIndicesBackward0", NULL, 0},
  {"avg_pool2d", 2, {2, 3, 7, 6}, {0, 0, 3, 2}, 2, 1, 1, 1, false, false, false, true, "AvgPool2DBackward0", NULL, 0},
  {"avg_pool2d channels_last", 2, {1, 5, 6, 6}, {0, 0, 2, 2}, 1, 1, 1, 1, true, false, false, false,
   "AvgPool2DBackward0", NULL, 0},
  {"adaptive_avg_pool2d", 3, {2, 3, 7, 5}, {0, 0, 3, 4}, 1, 0, 1, 1, false, false, false, false,
   "AdaptiveAvgPool2DBackward0", NULL, 0},
  {"adaptive_avg_pool2d channels_last", 3, {1, 4, 5, 7}, {0, 0, 2, 3}, 1, 0, 1, 1, true, false, false, false,
   "AdaptiveAvgPool2DBackward0", NULL, 0},
  /* global pooling of NHWC: the mean over the NHWC view, permuted back (was an as_strided with no derivative) */
  {"adaptive_avg_pool2d 1x1 channels_last", 3, {2, 5, 4, 3}, {0, 0, 1, 1}, 1, 0, 1, 1, true, false, false, false,
   "PermuteBackward0", NULL, 0},
  {"adaptive_avg_pool2d 1x1", 3, {2, 5, 4, 3}, {0, 0, 1, 1}, 1, 0, 1, 1, false, false, false, false,
   "MeanBackward1", NULL, 0},
};

static weft_tensor* input(const int64_t* sizes, int64_t nd, bool cl) {
  weft_tensor* r = weft_randn(sizes, nd, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  if (!cl || !r) return r;
  weft_tensor* c = weft_contiguous(r, WEFT_CHANNELS_LAST);
  weft_tensor_release(r);
  return c;
}

static weft_tensor* forward(const gc_conv* k, weft_tensor* const* in) {
  const int64_t s[2] = {k->stride, k->stride}, p[2] = {k->pad, k->pad}, d[2] = {k->dil, k->dil};
  const int64_t ks[2] = {k->w[2], k->w[3]}, op[2] = {k->out_pad, k->out_pad};
  switch (k->kind) {
    case 4: return weft_conv_transpose2d(in[0], in[1], in[2], s, 2, p, 2, op, 2, k->groups, d, 2);
    case 6: return weft_conv_transpose1d(in[0], in[1], in[2], s, 1, p, 1, op, 1, k->groups, d, 1);
    case 5:
      if (k->pad_str) return weft_conv1d_padding(in[0], in[1], in[2], s, 1, k->pad_str, d, 1, k->groups);
      return weft_conv1d(in[0], in[1], in[2], s, 1, p, 1, d, 1, k->groups);
    case 0:
      if (k->pad_str) return weft_conv2d_padding(in[0], in[1], in[2], s, 2, k->pad_str, d, 2, k->groups);
      return weft_conv2d(in[0], in[1], in[2], s, 2, p, 2, d, 2, k->groups);
    case 1: return weft_max_pool2d(in[0], ks, 2, s, 2, p, 2, d, 2, k->ceil);
    case 2: return weft_avg_pool2d(in[0], ks, 2, s, 2, p, 2, k->ceil, false, INT64_MIN);
    default: return weft_adaptive_avg_pool2d(in[0], ks, 2);
  }
}

/* sum(f(in) * w): its gradient is the VJP with w */
static double objective(const gc_conv* k, weft_tensor* const* in, const weft_tensor* w) {
  weft_tensor* y = forward(k, in);
  double s = 0;
  for (int64_t j = 0; y && j < weft_tensor_numel(y); j++) s += weft_tensor_get_double(y, j) * weft_tensor_get_double(w, j);
  weft_tensor_release(y);
  return s;
}

/* d objective / d *p by central differences (step 1e-6) */
/* p: an element of x, written as PyTorch's gradcheck does, in place (the
 * version bumped: a weight's packed panels are cached until it changes) */
static double central_difference(const gc_conv* k, weft_tensor* const* in, const weft_tensor* w, weft_tensor* x,
                                 double* p) {
  const double x0 = *p, h = 1e-6;
  double f[2];
  for (int side = 0; side < 2; side++) {
    *p = side ? x0 - h : x0 + h;
    weft_tensor_bump_version(x);
    f[side] = objective(k, in, w);
  }
  *p = x0;
  weft_tensor_bump_version(x);
  return (f[0] - f[1]) / (2 * h);
}

/* element j (logical order) of t's storage */
static double* elem(const weft_tensor* t, int64_t j) {
  int64_t off = 0;
  for (int64_t d = weft_tensor_dim(t) - 1; d >= 0; d--) {
    off += j % weft_tensor_sizes(t)[d] * weft_tensor_strides(t)[d];
    j /= weft_tensor_sizes(t)[d];
  }
  return (double*)weft_tensor_data_ptr(t) + off;
}

/* analytic gradients at `threads` threads (new references in g) */
static weft_status grads(const gc_conv* k, weft_tensor* const* in, int n, weft_tensor* w, int threads,
                         weft_tensor** g) {
  weft_set_num_threads(threads);
  weft_tensor* y = forward(k, in);
  weft_status s = y ? WEFT_OK : weft_last_status();
  if (y && strcmp(weft_node_name(weft_grad_fn(y)), k->node) != 0) {
    fprintf(stderr, "%s: node %s\n", k->name, weft_node_name(weft_grad_fn(y)));
    s = WEFT_INTERNAL;
  }
  if (!s) s = weft_autograd_grad(&y, &w, 1, in, n, false, false, false, g);
  weft_tensor_release(y);
  weft_set_num_threads(1);
  return s;
}

/* the first element of x whose analytic gradient (in g) is off the numeric one, or -1 */
static int64_t first_mismatch(const gc_conv* k, weft_tensor* const* in, const weft_tensor* w, weft_tensor* x,
                              const weft_tensor* g, double* ana, double* num) {
  for (int64_t j = 0; j < weft_tensor_numel(x); j++) {
    *num = central_difference(k, in, w, x, elem(x, j));
    *ana = *elem(g, j);
    if (fabs(*num - *ana) > 1e-5 * (1 + fabs(*num))) return j;
  }
  return -1;
}

static bool same(const weft_tensor* a, const weft_tensor* b) {
  if (weft_tensor_numel(a) != weft_tensor_numel(b)) return false;
  for (int64_t j = 0; j < weft_tensor_numel(a); j++)
    if (*elem(a, j) != *elem(b, j)) return false;
  return true;
}

static void gradcheck(const gc_conv* k) {
  bool unbatched = k->x[0] == 0, conv = k->kind == 0 || k->kind >= 4;
  int nd = k->kind >= 5 ? 3 : 4;
  weft_tensor* in[3] = {input(k->x + unbatched, nd - unbatched, k->cl), NULL, NULL};
  int n = 1;
  if (conv) {
    in[1] = input(k->w, nd, k->wcl);
    n = 2;
    const int64_t nb = k->kind == 4 || k->kind == 6 ? k->w[1] * k->groups : k->w[0];
    if (k->bias) in[n++] = input(&nb, 1, false);
  }
  for (int i = 0; i < n; i++) weft_set_requires_grad(in[i], true);
  weft_tensor* y = forward(k, in);
  CHECK(y != NULL);
  weft_tensor* w = y ? weft_randn(weft_tensor_sizes(y), weft_tensor_dim(y), WEFT_FLOAT64, WEFT_DEVICE_CPU) : NULL;
  weft_tensor_release(y);
  weft_tensor *g[3] = {0}, *g3[3] = {0};
  weft_status s = w ? grads(k, in, n, w, 1, g) : WEFT_INTERNAL;
  if (!s) s = grads(k, in, n, w, 3, g3);
  if (s) fprintf(stderr, "%s: %s\n", k->name, weft_last_error());
  CHECK(s == WEFT_OK);
  bool was = weft_set_grad_enabled(false);
  for (int i = 0; i < n && !s; i++) {
    CHECK(same(g[i], g3[i]));
    /* the gradient keeps its input's memory format, as AccumulateGrad's .grad in PyTorch */
    bool fmt = weft_tensor_dim(g[i]) != 4 || weft_tensor_sizes(g[i])[1] == 1 || /* both formats at once */
               weft_tensor_suggest_memory_format(g[i]) == weft_tensor_suggest_memory_format(in[i]) ||
               weft_tensor_strides(g[i])[3] == 0; /* a mean's expanded gradient: no format (.grad gets one) */
    if (!fmt) fprintf(stderr, "%s: input %d: gradient in another memory format\n", k->name, i);
    CHECK(fmt);
    double ana = 0, num = 0;
    int64_t j = first_mismatch(k, in, w, in[i], g[i], &ana, &num);
    if (j >= 0) fprintf(stderr, "%s: input %d [%lld]: analytic %.10g, numeric %.10g\n", k->name, i, (long long)j, ana, num);
    CHECK(j < 0);
  }
  weft_set_grad_enabled(was);
  weft_tensor* all[] = {in[0], in[1], in[2], g[0], g[1], g[2], g3[0], g3[1], g3[2], w};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) weft_tensor_release(all[i]);
}

/* a grad_output of the wrong size is refused by the engine; the gradient op itself names the sizes */
static void test_errors(void) {
  const int64_t sx[4] = {1, 2, 5, 5}, sw[4] = {3, 2, 3, 3}, sg[4] = {1, 3, 4, 3}, one[1] = {1}, zero[1] = {0};
  weft_tensor* x = weft_randn(sx, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(sw, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  weft_tensor* gy = weft_randn(sg, 4, WEFT_FLOAT32, WEFT_DEVICE_CPU);
  CHECK(!weft__conv2d_backward(gy, x, w, one, 1, zero, 1, one, 1, 1, 0));
  CHECK_ERROR_HAS("conv2d: expected grad_output of size [1, 3, 3, 3] but got [1, 3, 4, 3]");
  weft_tensor_release(x);
  weft_tensor_release(w);
  weft_tensor_release(gy);
}

/* convolution_backward, the op ConvolutionBackward0 calls: the outputs its
 * mask asks for (NULL for the others), the same as the driver's, called
 * directly and boxed (bool[3] as an int list, None for an undefined return). */
static bool same_values(const weft_tensor* a, const weft_tensor* b) {
  bool ok = a && b && weft_tensor_numel(a) == weft_tensor_numel(b);
  for (int64_t i = 0; ok && i < weft_tensor_numel(a); i++)
    ok = weft_tensor_get_double(a, i) == weft_tensor_get_double(b, i);
  return ok;
}

static void test_convolution_backward_op(void) {
  const int64_t sx[4] = {2, 4, 5, 5}, sw[4] = {6, 2, 3, 3}, sg[4] = {2, 6, 5, 5}, one[2] = {1, 1}, no_pad[2] = {0, 0};
  weft_tensor* x = weft_randn(sx, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* w = weft_randn(sw, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  weft_tensor* gy = weft_randn(sg, 4, WEFT_FLOAT64, WEFT_DEVICE_CPU);
  const bool mask[3] = {true, false, true};
  weft_tensor3 r = weft_convolution_backward(gy, x, w, NULL, 0, one, 2, one, 2, one, 2, false, no_pad, 2, 2, mask, 3);
  weft_tensor* gx = weft__conv2d_backward(gy, x, w, one, 2, one, 2, one, 2, 2, 0);
  weft_tensor* gb = weft__conv2d_backward(gy, x, w, one, 2, one, 2, one, 2, 2, 2);
  CHECK(r.status == WEFT_OK && r.t[1] == NULL && same_values(r.t[0], gx) && same_values(r.t[2], gb));
  weft_tensor3_release(r);
  weft_stack st;
  weft_stack_init(&st);
  const int64_t mask_list[3] = {1, 0, 1};
  weft_stack_push_tensor(&st, gy);
  weft_stack_push_tensor(&st, x);
  weft_stack_push_tensor(&st, w);
  weft_stack_push_none(&st);
  weft_stack_push_int_list(&st, one, 2);
  weft_stack_push_int_list(&st, one, 2);
  weft_stack_push_int_list(&st, one, 2);
  weft_stack_push_bool(&st, false);
  weft_stack_push_int_list(&st, no_pad, 2);
  weft_stack_push_int(&st, 2);
  weft_stack_push_int_list(&st, mask_list, 3);
  CHECK(weft_op_call_boxed(weft_op_find("aten::convolution_backward"), &st) == WEFT_OK && st.size == 3);
  CHECK(st.size == 3 && st.v[1].tag == WEFT_IV_NONE && same_values(st.v[0].u.t, gx) && same_values(st.v[2].u.t, gb));
  weft_stack_clear(&st);
  /* transposed: conv_transpose2d's checks (x must have the weight's C_in = 6 channels), nothing returned */
  r = weft_convolution_backward(gy, x, w, NULL, 0, one, 2, one, 2, one, 2, true, no_pad, 2, 2, mask, 3);
  CHECK(r.status == WEFT_INVALID_ARGUMENT && !r.t[0] && !r.t[1] && !r.t[2]);
  CHECK_ERROR_HAS("convolution_backward: Given transposed=1, weight of size [6, 2, 3, 3], expected input[2, 4, 5, 5] "
                  "to have 6 channels, but got 4 channels instead");
  weft_tensor* rel[] = {x, w, gy, gx, gb};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) weft_tensor_release(rel[i]);
}

/* Allocation failures (the fail-the-Nth allocator, as test_fault_injection.c):
 * every gradient op, both formats, ends in a clean OutOfMemory with nothing
 * left allocated, until it completes. */
static weft_tensor* grad_op(int which, weft_tensor* const* in) { /* 6, 7: conv_transpose2d and its gradients */
  const int64_t one[1] = {1}, two[1] = {2}, zero[1] = {0};
  switch (which) {
    case 0: case 1: case 2: return weft__conv2d_backward(in[2], in[0], in[1], one, 1, one, 1, one, 1, 1, which);
    case 3: return weft_avg_pool2d_backward(in[3], in[0], two, 1, two, 1, zero, 1, false, true, INT64_MIN);
    case 4: return weft_op__adaptive_avg_pool2d_backward(in[3], in[0]);
    case 6: return weft_conv_transpose2d(in[2], in[1], NULL, one, 1, one, 1, zero, 1, 1, one, 1);
    case 7: { /* transposed (input in[2], output gradient in[0]): all three, the weight's returned */
      const bool all[3] = {true, true, true};
      weft_tensor3 r = weft_convolution_backward(in[0], in[2], in[1], NULL, 0, one, 1, one, 1, one, 1, true, zero, 1,
                                                 1, all, 3);
      weft_tensor_release(r.t[0]);
      weft_tensor_release(r.t[2]);
      return r.t[1];
    }
    default: { /* all three outputs of convolution_backward: the input's returned, the others released */
      const bool all[3] = {true, true, true};
      weft_tensor3 r = weft_convolution_backward(in[2], in[0], in[1], NULL, 0, one, 1, one, 1, one, 1, false, zero, 1,
                                                 1, all, 3);
      weft_tensor_release(r.t[1]);
      weft_tensor_release(r.t[2]);
      return r.t[0];
    }
  }
}

static void test_allocation_failures(void) {
  static weft_fail_nth_allocator inj;
  weft_fail_nth_allocator_init(&inj);
  const int64_t sx[4] = {2, 3, 6, 6}, sw[4] = {4, 3, 3, 3}, sy[4] = {2, 4, 6, 6}, sp[4] = {2, 3, 3, 3};
  for (int cl = 0; cl < 2; cl++) {
    weft_tensor* in[4] = {input(sx, 4, cl), input(sw, 4, false), input(sy, 4, cl), input(sp, 4, cl)};
    for (int which = 0; which < 8; which++) {
      weft_memory_stats base = weft_memory();
      int bad = 0, fails = 0;
      for (long n = 1; n < 1000; n++, fails++) {
        inj.countdown = n;
        weft_set_allocator(&inj.allocator);
        weft_tensor* r = grad_op(which, in);
        weft_set_allocator(NULL);
        inj.countdown = 0;
        if (r) {
          weft_tensor_release(r);
          break;
        }
        weft_memory_stats m = weft_memory();
        bad += weft_last_status() != WEFT_OUT_OF_MEMORY || m.tensors != base.tensors || m.storages != base.storages ||
               m.bytes_in_use != base.bytes_in_use;
      }
      if (bad) fprintf(stderr, "allocation failures: gradient op %d (channels_last %d): %d bad runs\n", which, cl, bad);
      CHECK(bad == 0 && fails > 0);
    }
    for (int i = 0; i < 4; i++) weft_tensor_release(in[i]);
  }
}

int main(void) {
  weft_manual_seed(15);
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) gradcheck(&CASES[i]);
  test_errors();
  test_convolution_backward_op();
  test_allocation_failures();
  CHECK_NO_LEAKS();
  TEST_REPORT();
}
