/* dropout / feature_dropout and their in-place forms, as 1.13's
 * _dropout_impl: noise = empty (input's shape, contiguous; [N, C, 1, ...]
 * for the feature form), noise.bernoulli_(1 - p) (so after manual_seed(s)
 * the mask is PyTorch's), noise /= 1 - p, then input * noise. p = 0, eval
 * or an empty input return the input itself; p = 1 multiplies by a zero.
 * Every step is a dispatcher call from a CompositeImplicitAutograd kernel,
 * so autograd records the multiply (MulBackward0) and nothing else. */
#include <math.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "ops/ops.h"

static bool check_p(const char* op, double p) {
  if (p >= 0 && p <= 1) return true;
  weft__error(WEFT_INVALID_ARGUMENT, "%s: dropout probability has to be between 0 and 1, but got %g", op, p);
  return false;
}

/* The scaled Bernoulli(1 - p) mask: input's shape, or [N, C, 1, ...] (feature). */
static weft_tensor* make_noise(const char* op, const weft_tensor* input, double p, bool feature) {
  int64_t sizes[WEFT_MAX_DIMS];
  int nd = input->ndim;
  if (feature && nd < 2)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "%s: Feature dropout requires at least 2 dimensions in the input", op);
  for (int d = 0; d < nd; d++) sizes[d] = feature && d >= 2 ? 1 : input->sizes[d];
  weft_tensor* noise = weft_empty(sizes, nd, input->dtype, input->device, WEFT_CONTIGUOUS_FORMAT);
  if (!noise) return NULL;
  if (weft_bernoulli_float_(noise, 1 - p) != WEFT_OK || weft_div_scalar_(noise, weft_scalar_double(1 - p)) != WEFT_OK) {
    weft_tensor_release(noise);
    return NULL;
  }
  return noise;
}

/* input * noise, or input *= noise (inplace); the result as a new reference */
static weft_tensor* apply(const char* op, weft_tensor* input, double p, bool train, bool feature, bool inplace) {
  if (!check_p(op, p)) return NULL;
  if (p == 0 || !train || weft_tensor_numel(input) == 0) return weft_tensor_retain(input);
  weft_tensor* noise = p == 1 ? weft_full(NULL, 0, 0.0, input->dtype, input->device) : make_noise(op, input, p, feature);
  if (!noise) return NULL;
  weft_tensor* r = NULL;
  if (!inplace) r = weft_mul(input, noise);
  else if (weft_mul_(input, noise) == WEFT_OK) r = weft_tensor_retain(input);
  weft_tensor_release(noise);
  return r;
}

static weft_tensor* dropout_kernel(const weft_tensor* input, double p, bool train) {
  return apply("dropout", (weft_tensor*)input, p, train, false, false);
}
static weft_tensor* feature_dropout_kernel(const weft_tensor* input, double p, bool train) {
  return apply("feature_dropout", (weft_tensor*)input, p, train, true, false);
}
static weft_status status_of(weft_tensor* r) {
  if (!r) return weft_last_status();
  weft_tensor_release(r);
  return WEFT_OK;
}
static weft_status dropout_inplace_kernel(weft_tensor* self, double p, bool train) {
  return status_of(apply("dropout_", self, p, train, false, true));
}
static weft_status feature_dropout_inplace_kernel(weft_tensor* self, double p, bool train) {
  return status_of(apply("feature_dropout_", self, p, train, true, true));
}

weft_status weft__dropout_register(void) {
  WEFT_KERNEL(dropout, COMPOSITE_IMPLICIT_AUTOGRAD, dropout_kernel);
  WEFT_KERNEL(dropout_, COMPOSITE_IMPLICIT_AUTOGRAD, dropout_inplace_kernel);
  WEFT_KERNEL(feature_dropout, COMPOSITE_IMPLICIT_AUTOGRAD, feature_dropout_kernel);
  WEFT_KERNEL(feature_dropout_, COMPOSITE_IMPLICIT_AUTOGRAD, feature_dropout_inplace_kernel);
  return WEFT_OK;
}
