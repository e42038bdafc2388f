/* Losses (PyTorch 1.13's Loss.cpp, LossNLL.cpp). mse_loss,
 * binary_cross_entropy_with_logits and cross_entropy are composites: each
 * step is a dispatcher call, so their gradients come from the steps' (the
 * CompositeImplicitAutograd key, as in PyTorch). nll_loss reads one
 * element per target with its own kernel: a gather plus a masked weighted
 * mean would cost several tensors of the batch's size. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/scalar.h"
#include "iter/iter_internal.h"
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

typedef enum { RED_NONE, RED_MEAN, RED_SUM } reduction;

static bool parse_reduction(const char* op, const char* s, reduction* r) {
  if (s && !strcmp(s, "none")) *r = RED_NONE;
  else if (s && !strcmp(s, "mean")) *r = RED_MEAN;
  else if (s && !strcmp(s, "sum")) *r = RED_SUM;
  else {
    weft__error(WEFT_INVALID_ARGUMENT, "%s: %s is not a valid value for reduction (expected 'none', 'mean' or 'sum')", op,
                s ? s : "null");
    return false;
  }
  return true;
}

/* The temporaries of a composite, released together: each step is
 * `if (!(x = keep(&s, weft_op(...)))) goto done;`. */
#define LOSS_MAX_TMPS 24
typedef struct {
  weft_tensor* t[LOSS_MAX_TMPS];
  int n;
} tmps;

static weft_tensor* keep(tmps* s, weft_tensor* t) {
  if (t) s->t[s->n++] = t;
  return t;
}

/* the result: a new reference to r (or NULL), the temporaries released */
static weft_tensor* finish(tmps* s, weft_tensor* r) {
  if (r) weft_tensor_retain(r);
  for (int i = 0; i < s->n; i++) weft_tensor_release(s->t[i]);
  return r;
}

/* apply_loss_reduction: the loss itself, its mean or its sum */
static weft_tensor* reduce_loss(tmps* s, weft_tensor* loss, reduction red) {
  if (!loss || red == RED_NONE) return loss;
  return keep(s, red == RED_MEAN ? weft_mean(loss, (weft_dtype)-1) : weft_sum(loss, (weft_dtype)-1));
}

static bool sizes_equal(const weft_tensor* a, const weft_tensor* b) {
  return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof(int64_t));
}

/* "[3, 4]" into buf */
static const char* sizes_text(const weft_tensor* t, char* buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < t->ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

/* ---- mse_loss: (self - target)^2, reduced ---- */

static weft_tensor* mse_loss_kernel(const weft_tensor* self, const weft_tensor* target, const char* reduction_) {
  reduction red;
  if (!parse_reduction("mse_loss", reduction_, &red)) return NULL;
  weft_dtype t = weft_promote_types(self->dtype, target->dtype);
  if (!weft_dtype_is_floating(t) || t == WEFT_BFLOAT16) {
    weft__error(WEFT_TYPE_ERROR, "mse_loss: \"mse_cpu\" not implemented for '%s'", weft_dtype_name(t));
    return NULL;
  }
  tmps s = {0};
  weft_tensor *d, *sq = NULL;
  if ((d = keep(&s, weft_sub(self, target, weft_scalar_int(1))))) sq = keep(&s, weft_mul(d, d));
  return finish(&s, reduce_loss(&s, sq, red));
}

/* ---- binary_cross_entropy_with_logits ---- */

/* (1 - target) x + log_weight (log(exp(-m) + exp(-x - m)) + m), m =
 * max(-x, 0), log_weight = 1 + (pos_weight - 1) target: the shift by m keeps
 * both exps <= 1, so no overflow for large |x| */
static weft_tensor* bce_terms(tmps* s, const weft_tensor* x, const weft_tensor* target, const weft_tensor* pos_weight) {
  const weft_scalar one = weft_scalar_int(1);
  weft_tensor *nx, *m, *nm, *e1, *nxm, *e2, *lse, *nt, *omt, *lin, *soft;
  if (!(nx = keep(s, weft_neg(x))) || !(m = keep(s, weft_relu(nx))) || !(nm = keep(s, weft_neg(m))) ||
      !(e1 = keep(s, weft_exp(nm))) || !(nxm = keep(s, weft_sub(nx, m, one))) || !(e2 = keep(s, weft_exp(nxm))) ||
      !(lse = keep(s, weft_add(e1, e2, one))) || !(lse = keep(s, weft_log(lse))) ||
      !(nt = keep(s, weft_neg(target))) || !(omt = keep(s, weft_add_scalar(nt, one, one))) ||
      !(lin = keep(s, weft_mul(omt, x))))
    return NULL;
  if (!pos_weight) {
    if (!(lin = keep(s, weft_add(lin, m, one)))) return NULL;
    return keep(s, weft_add(lin, lse, one));
  }
  weft_tensor *pw1, *lw;
  if (!(pw1 = keep(s, weft_sub_scalar(pos_weight, one, one))) || !(lw = keep(s, weft_mul(pw1, target))) ||
      !(lw = keep(s, weft_add_scalar(lw, one, one))) || !(soft = keep(s, weft_add(lse, m, one))) ||
      !(soft = keep(s, weft_mul(lw, soft))))
    return NULL;
  return keep(s, weft_add(lin, soft, one));
}

static weft_tensor* bce_logits_kernel(const weft_tensor* self, const weft_tensor* target, const weft_tensor* weight,
                                      const weft_tensor* pos_weight, const char* reduction_) {
  const char* op = "binary_cross_entropy_with_logits";
  reduction red;
  if (!parse_reduction(op, reduction_, &red)) return NULL;
  if (!sizes_equal(self, target)) {
    char a[160], b[160];
    weft__error(WEFT_SHAPE_ERROR, "%s: Target size (%s) must be the same as input size (%s)", op,
                sizes_text(target, a, sizeof a), sizes_text(self, b, sizeof b));
    return NULL;
  }
  tmps s = {0};
  weft_tensor* loss = bce_terms(&s, self, target, pos_weight);
  if (loss && weight) loss = keep(&s, weft_mul(loss, weight));
  if (loss && !sizes_equal(loss, self)) { /* PyTorch's in-place steps refuse to grow the loss */
    char a[160], b[160];
    weft__error(WEFT_SHAPE_ERROR, "%s: output with shape %s doesn't match the broadcast shape %s", op,
                sizes_text(self, a, sizeof a), sizes_text(loss, b, sizeof b));
    loss = NULL;
  }
  return finish(&s, reduce_loss(&s, loss, red));
}

/* ---- nll_loss ---- */

/* self seen as [N, C, K] (K: the flattened dims after C), target as [N, K] */
typedef struct {
  int64_t n, c, k;
} nll_dims;

static bool nll_check(const char* op, const weft_tensor* self, const weft_tensor* target, const weft_tensor* weight,
                      nll_dims* d) {
  char a[160], b[160];
  if (self->ndim < 1) return weft__error(WEFT_SHAPE_ERROR, "%s: Expected 1 or more dimensions (got 0)", op), false;
  if (self->ndim != 1 && (target->ndim < 1 || self->sizes[0] != target->sizes[0]))
    return weft__error(WEFT_SHAPE_ERROR, "%s: Expected input batch_size (%lld) to match target batch_size (%lld).", op,
                       (long long)self->sizes[0], (long long)(target->ndim ? target->sizes[0] : 1)),
           false;
  if (self->ndim <= 2) {
    if (target->ndim > 1)
      return weft__error(WEFT_SHAPE_ERROR, "%s: 0D or 1D target tensor expected, multi-target not supported", op), false;
    if (!(self->ndim == 1 && target->ndim == 0) && self->sizes[0] != target->sizes[0])
      return weft__error(WEFT_SHAPE_ERROR, "%s: size mismatch (got input: %s, target: %s)", op,
                         sizes_text(self, a, sizeof a), sizes_text(target, b, sizeof b)),
             false;
  } else if (target->ndim != self->ndim - 1 ||
             memcmp(self->sizes + 2, target->sizes + 1, (size_t)(self->ndim - 2) * sizeof(int64_t))) {
    if (self->ndim == 4)
      return weft__error(WEFT_SHAPE_ERROR, "%s: size mismatch (got input: %s , target: %s", op,
                         sizes_text(self, a, sizeof a), sizes_text(target, b, sizeof b)),
             false;
    char want[160];
    size_t k = (size_t)snprintf(want, sizeof want, "[%lld", (long long)self->sizes[0]);
    for (int i = 2; i < self->ndim && k < sizeof want; i++)
      k += (size_t)snprintf(want + k, sizeof want - k, ", %lld", (long long)self->sizes[i]);
    if (k < sizeof want) snprintf(want + k, sizeof want - k, "]");
    return weft__error(WEFT_SHAPE_ERROR, "%s: Expected target size %s, got %s", op, want, sizes_text(target, b, sizeof b)),
           false;
  }
  d->n = self->ndim == 1 ? 1 : self->sizes[0];
  d->c = self->ndim == 1 ? self->sizes[0] : self->sizes[1];
  d->k = 1;
  for (int i = 2; i < self->ndim; i++) d->k *= self->sizes[i];
  if (weight && (weight->ndim != 1 || weight->numel != d->c))
    return weft__error(WEFT_SHAPE_ERROR,
                       "%s: weight tensor should be defined either for all %lld classes or no classes but got weight "
                       "tensor of shape: %s",
                       op, (long long)d->c, sizes_text(weight, a, sizeof a)),
           false;
  if (target->dtype != WEFT_INT64)
    return weft__error(WEFT_TYPE_ERROR, "%s: expected scalar type int64 but found %s", op,
                       weft_dtype_name(target->dtype)),
           false;
  weft_dtype t = self->dtype;
  if (t != WEFT_FLOAT32 && t != WEFT_FLOAT64 && t != WEFT_BFLOAT16)
    return weft__error(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", op,
                       self->ndim == 4 ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame", weft_dtype_name(t)),
           false;
  if (weight && weight->dtype != t)
    return weft__error(WEFT_TYPE_ERROR, "%s: expected scalar type %s but found %s", op, weft_dtype_name(t),
                       weft_dtype_name(weight->dtype)),
           false;
  return true;
}

/* x[idx] as a double (data_ptr is the first element's address) */
static double elem(const weft_tensor* x, const int64_t* idx) {
  int64_t off = 0;
  for (int d = 0; d < x->ndim; d++) off += idx[d] * x->strides[d];
  return weft__load_f64((const char*)weft_tensor_data_ptr(x) + off * (int64_t)weft_dtype_size(x->dtype), x->dtype);
}

/* the logical index of self's element (n, c, k) and target's (n, k) */
static void nll_index(const weft_tensor* self, int64_t n, int64_t c, int64_t k, int64_t* si, int64_t* ti) {
  if (self->ndim == 1) {
    si[0] = c;
    return;
  }
  si[0] = ti[0] = n;
  si[1] = c;
  for (int d = self->ndim - 1; d >= 2; d--) {
    si[d] = ti[d - 1] = k % self->sizes[d];
    k /= self->sizes[d];
  }
}

static void store_f64(char* p, weft_dtype t, double v) {
  weft__store(p, t, weft__value_from_double(v));
}

static weft_tensor* nll_loss_kernel(const weft_tensor* self, const weft_tensor* target, const weft_tensor* weight,
                                    const char* reduction_, int64_t ignore_index) {
  const char* op = "nll_loss";
  reduction red;
  nll_dims d;
  if (!parse_reduction(op, reduction_, &red) || !nll_check(op, self, target, weight, &d)) return NULL;
  int64_t strides[WEFT_MAX_DIMS] = {0};
  weft__strides_for_format(target->sizes, target->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
  weft_tensor* out = red == RED_NONE ? weft__tensor_alloc(op, target->sizes, strides, target->ndim, self->dtype, self->device)
                                     : weft__tensor_alloc(op, NULL, NULL, 0, self->dtype, self->device);
  if (!out || self->device == WEFT_DEVICE_META) return out;
  char* o = weft_tensor_data_ptr(out);
  size_t es = weft_dtype_size(self->dtype);
  double sum = 0, total_weight = 0;
  int64_t si[WEFT_MAX_DIMS] = {0}, ti[WEFT_MAX_DIMS] = {0};
  for (int64_t n = 0; n < d.n; n++)
    for (int64_t k = 0; k < d.k; k++) {
      nll_index(self, n, 0, k, si, ti);
      int64_t c = (int64_t)elem(target, ti); /* int64 targets; exact below 2^53 */
      double v = 0;
      if (c != ignore_index) {
        if (c < 0 || c >= d.c) {
          weft_tensor_release(out);
          weft__error(WEFT_INDEX_ERROR, "%s: Target %lld is out of bounds.", op, (long long)c);
          return NULL;
        }
        double w = weight ? elem(weight, &c) : 1.0;
        nll_index(self, n, c, k, si, ti);
        v = -w * elem(self, si);
        sum += v;
        total_weight += w;
      }
      if (red == RED_NONE) store_f64(o + (n * d.k + k) * (int64_t)es, self->dtype, v);
    }
  if (red != RED_NONE) store_f64(o, self->dtype, red == RED_SUM ? sum : sum / total_weight);
  return out;
}

/* d loss / d self: -weight[t] at (n, t, k), times the gradient of that
 * element of the loss ('none': grad_output[n, k]; 'sum': the scalar; 'mean':
 * the scalar / the total weight), zero elsewhere and for ignored targets */
static weft_tensor* nll_loss_backward_kernel(const weft_tensor* grad_output, const weft_tensor* self,
                                             const weft_tensor* target, const weft_tensor* weight,
                                             const char* reduction_, int64_t ignore_index) {
  const char* op = "nll_loss_backward";
  reduction red;
  nll_dims d;
  if (!parse_reduction(op, reduction_, &red) || !nll_check(op, self, target, weight, &d)) return NULL;
  if (red == RED_NONE ? !sizes_equal(grad_output, target) : grad_output->numel != 1) {
    char a[160];
    weft__error(WEFT_SHAPE_ERROR, "%s: grad_output of shape %s does not match the loss", op,
                sizes_text(grad_output, a, sizeof a));
    return NULL;
  }
  int64_t strides[WEFT_MAX_DIMS] = {0};
  weft__strides_for_format(self->sizes, self->ndim, WEFT_CONTIGUOUS_FORMAT, strides);
  weft_tensor* gi = weft__tensor_alloc(op, self->sizes, strides, self->ndim, self->dtype, self->device);
  if (!gi || self->device == WEFT_DEVICE_META) return gi;
  char* o = weft_tensor_data_ptr(gi);
  size_t es = weft_dtype_size(self->dtype);
  memset(o, 0, (size_t)gi->numel * es);
  int64_t si[WEFT_MAX_DIMS] = {0}, ti[WEFT_MAX_DIMS] = {0}, zero[WEFT_MAX_DIMS] = {0};
  double scale = red == RED_NONE ? 0 : elem(grad_output, zero);
  if (red == RED_MEAN) {
    double total = 0;
    for (int64_t n = 0; n < d.n; n++)
      for (int64_t k = 0; k < d.k; k++) {
        nll_index(self, n, 0, k, si, ti);
        int64_t c = (int64_t)elem(target, ti);
        if (c != ignore_index && c >= 0 && c < d.c) total += weight ? elem(weight, &c) : 1.0;
      }
    scale /= total;
  }
  for (int64_t n = 0; n < d.n; n++)
    for (int64_t k = 0; k < d.k; k++) {
      nll_index(self, n, 0, k, si, ti);
      int64_t c = (int64_t)elem(target, ti);
      if (c == ignore_index) continue;
      if (c < 0 || c >= d.c) {
        weft_tensor_release(gi);
        weft__error(WEFT_INDEX_ERROR, "%s: Target %lld is out of bounds.", op, (long long)c);
        return NULL;
      }
      double g = red == RED_NONE ? elem(grad_output, ti) : scale;
      double w = weight ? elem(weight, &c) : 1.0;
      int64_t off = self->ndim == 1 ? c : (n * d.c + c) * d.k + k;
      store_f64(o + off * (int64_t)es, self->dtype, -w * g);
    }
  return gi;
}

/* ---- cross_entropy ---- */

/* weight as [C] along the class dim and 1 elsewhere, for broadcasting */
static weft_tensor* class_view(tmps* s, const weft_tensor* weight, const weft_tensor* self, int class_dim) {
  int64_t shape[WEFT_MAX_DIMS];
  for (int i = 0; i < self->ndim; i++) shape[i] = i == class_dim ? weight->numel : 1;
  return keep(s, weft_view(weight, shape, self->ndim));
}

/* probability targets: -(log_softmax(x) * target' * weight).sum over the
 * class dim, target' = target (1 - ls) + ls / C; the mean divides by the
 * number of class vectors */
static weft_tensor* ce_probs(tmps* s, const weft_tensor* logp, const weft_tensor* target, const weft_tensor* weight,
                             reduction red, double ls, int class_dim, int64_t n_classes) {
  const weft_scalar one = weft_scalar_int(1);
  weft_tensor* tg = (weft_tensor*)target;
  if (ls > 0 && (!(tg = keep(s, weft_mul_scalar(target, weft_scalar_double(1 - ls)))) ||
                 !(tg = keep(s, weft_add_scalar(tg, weft_scalar_double(ls / (double)n_classes), one)))))
    return NULL;
  weft_tensor* p = keep(s, weft_mul(logp, tg));
  if (p && weight) {
    weft_tensor* w = class_view(s, weight, logp, class_dim);
    p = w ? keep(s, weft_mul(p, w)) : NULL;
  }
  if (!p) return NULL;
  if (red == RED_NONE) {
    int64_t dim = class_dim;
    weft_tensor* r = keep(s, weft_sum_dim(p, &dim, 1, false, (weft_dtype)-1));
    return r ? keep(s, weft_neg(r)) : NULL;
  }
  weft_tensor* r = keep(s, weft_sum(p, (weft_dtype)-1));
  if (r) r = keep(s, weft_neg(r));
  if (r && red == RED_MEAN)
    r = keep(s, weft_div_scalar(r, weft_scalar_double(logp->numel ? (double)(logp->numel / n_classes) : NAN)));
  return r;
}

/* the mean's denominator of the smoothing term: the weights of the targets
 * not ignored (or their count), a constant of the targets */
static weft_tensor* kept_weight(const weft_tensor* target, const weft_tensor* weight, int64_t ignore_index, weft_dtype t) {
  if (weft__host_readable("cross_entropy", target) != WEFT_OK || weft__host_readable("cross_entropy", weight) != WEFT_OK)
    return NULL;
  double total = 0;
  int64_t idx[WEFT_MAX_DIMS] = {0};
  for (int64_t i = 0; target->device != WEFT_DEVICE_META && i < target->numel; i++) {
    int64_t lin = i;
    for (int dd = target->ndim - 1; dd >= 0; dd--) idx[dd] = lin % target->sizes[dd], lin /= target->sizes[dd];
    int64_t c = (int64_t)elem(target, idx);
    if (c != ignore_index) total += weight ? elem(weight, &c) : 1.0;
  }
  weft_tensor* r = weft__tensor_alloc("cross_entropy", NULL, NULL, 0, t, target->device);
  if (r && r->device != WEFT_DEVICE_META) store_f64(weft_tensor_data_ptr(r), t, total);
  return r;
}

/* class indices with label smoothing: (1 - ls) nll + ls / C * smooth, the
 * smooth term -sum_c(log_softmax * weight) with ignored targets zeroed */
static weft_tensor* ce_smooth(tmps* s, const weft_tensor* logp, const weft_tensor* target, const weft_tensor* weight,
                              reduction red, int64_t ignore_index, double ls, int class_dim, int64_t n_classes,
                              const char* reduction_) {
  const weft_scalar one = weft_scalar_int(1);
  weft_tensor* nll = keep(s, weft_nll_loss(logp, target, weight, reduction_, ignore_index));
  if (!nll) return NULL;
  weft_tensor* p = (weft_tensor*)logp;
  if (weight) {
    weft_tensor* w = class_view(s, weight, logp, class_dim);
    if (!w || !(p = keep(s, weft_mul(logp, w)))) return NULL;
  }
  int64_t dim = class_dim;
  weft_tensor *sm, *ign;
  if (!(sm = keep(s, weft_sum_dim(p, &dim, 1, false, (weft_dtype)-1))) || !(sm = keep(s, weft_neg(sm))) ||
      !(ign = keep(s, weft_eq_scalar(target, weft_scalar_int(ignore_index)))) ||
      !(sm = keep(s, weft_where_scalar_self(ign, weft_scalar_double(0), sm))))
    return NULL;
  if (red != RED_NONE && !(sm = keep(s, weft_sum(sm, (weft_dtype)-1)))) return NULL;
  if (red == RED_MEAN) {
    weft_tensor* den = keep(s, kept_weight(target, weight, ignore_index, logp->dtype));
    if (!den || !(sm = keep(s, weft_div(sm, den)))) return NULL;
  }
  weft_tensor *a, *b;
  if (!(a = keep(s, weft_mul_scalar(nll, weft_scalar_double(1 - ls)))) ||
      !(b = keep(s, weft_mul_scalar(sm, weft_scalar_double(ls / (double)n_classes)))))
    return NULL;
  return keep(s, weft_add(a, b, one));
}

static weft_tensor* cross_entropy_kernel(const weft_tensor* self, const weft_tensor* target, const weft_tensor* weight,
                                         const char* reduction_, int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  reduction red;
  if (!parse_reduction(op, reduction_, &red)) return NULL;
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    weft__error(WEFT_INVALID_ARGUMENT, "%s: labelSmoothing must be between 0.0 and 1.0. Got: %g", op, label_smoothing);
    return NULL;
  }
  if (self->ndim < 1) {
    weft__error(WEFT_SHAPE_ERROR, "%s: Expected 1 or more dimensions (got 0)", op);
    return NULL;
  }
  int class_dim = self->ndim == 1 ? 0 : 1;
  int64_t n_classes = self->sizes[class_dim];
  bool probs = sizes_equal(self, target);
  if (probs) {
    if (!weft_dtype_is_floating(target->dtype)) {
      weft__error(WEFT_TYPE_ERROR, "%s: Expected floating point type for target with class probabilities, got %s", op,
                  weft_dtype_name(target->dtype));
      return NULL;
    }
    if (ignore_index >= 0) {
      weft__error(WEFT_INVALID_ARGUMENT, "%s: ignoreIndex is not supported for floating point target", op);
      return NULL;
    }
    if (weight && (weight->ndim != 1 || weight->numel != n_classes)) {
      char a[160];
      weft__error(WEFT_SHAPE_ERROR,
                  "%s: weight tensor should be defined either for all %lld classes or no classes but got weight tensor "
                  "of shape: %s",
                  op, (long long)n_classes, sizes_text(weight, a, sizeof a));
      return NULL;
    }
  }
  tmps s = {0};
  weft_tensor* logp = keep(&s, weft_log_softmax(self, class_dim, self->dtype));
  weft_tensor* r = NULL;
  if (logp && probs) r = ce_probs(&s, logp, target, weight, red, label_smoothing, class_dim, n_classes);
  else if (logp && label_smoothing > 0)
    r = ce_smooth(&s, logp, target, weight, red, ignore_index, label_smoothing, class_dim, n_classes, reduction_);
  else if (logp) r = keep(&s, weft_nll_loss(logp, target, weight, reduction_, ignore_index));
  if (!r) {
    /* the nll_loss / log_softmax it ran name cross_entropy */
    weft__error_rename("nll_loss", op);
    weft__error_rename("log_softmax", op);
  }
  return finish(&s, r);
}

/* ---- issue 23: l1_loss, smooth_l1_loss, huber_loss ---- */

static weft_tensor* l1_loss_kernel(const weft_tensor* self, const weft_tensor* target, const char* reduction_) {
  reduction red;
  if (!parse_reduction("l1_loss", reduction_, &red)) return NULL;
  tmps s = {0};
  weft_tensor* d = keep(&s, weft_sub(self, target, weft_scalar_int(1)));
  return finish(&s, reduce_loss(&s, d ? keep(&s, weft_abs(d)) : NULL, red));
}

/* The checks smooth_l1_loss / huber_loss make: reduction, the parameter's
 * sign, a floating compute dtype (their CPU kernels' AT_DISPATCH). */
static bool regression_checks(const char* op, const char* kname, const weft_tensor* self, const weft_tensor* target,
                              const char* reduction_, reduction* red) {
  if (!parse_reduction(op, reduction_, red)) return false;
  weft_dtype t = weft_promote_types(self->dtype, target->dtype);
  if (!weft_dtype_is_floating(t)) {
    weft__error(WEFT_TYPE_ERROR, "%s: \"%s\" not implemented for '%s'", op, kname, weft_dtype_name(t));
    return false;
  }
  return true;
}

/* |d| < k ? 0.5 |d|^2 / k * quad_scale : (|d| - k / 2) * lin_scale, d = self - target */
static weft_tensor* piecewise_loss(tmps* s, const weft_tensor* self, const weft_tensor* target, double k, bool huber) {
  weft_tensor *d, *z, *quad = NULL, *lin = NULL, *small = NULL;
  if (!(d = keep(s, weft_sub(self, target, weft_scalar_int(1)))) || !(z = keep(s, weft_abs(d)))) return NULL;
  weft_tensor* half_z2 = keep(s, weft_mul(keep(s, weft_mul_scalar(z, weft_scalar_double(0.5))), z));
  if (half_z2) quad = huber ? half_z2 : keep(s, weft_div_scalar(half_z2, weft_scalar_double(k)));
  lin = keep(s, weft_add_scalar(z, weft_scalar_double(-0.5 * k), weft_scalar_int(1)));
  if (lin && huber) lin = keep(s, weft_mul_scalar(lin, weft_scalar_double(k)));
  small = keep(s, weft_lt_scalar(z, weft_scalar_double(k)));
  return quad && lin && small ? keep(s, weft_where(small, quad, lin)) : NULL;
}

static weft_tensor* smooth_l1_loss_kernel(const weft_tensor* self, const weft_tensor* target, const char* reduction_,
                                          double beta) {
  reduction red;
  if (!regression_checks("smooth_l1_loss", "smooth_l1_cpu", self, target, reduction_, &red)) return NULL;
  if (beta < 0)
    return weft__error_null(WEFT_INVALID_ARGUMENT, "smooth_l1_loss: smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return l1_loss_kernel(self, target, reduction_);
  tmps s = {0};
  return finish(&s, reduce_loss(&s, piecewise_loss(&s, self, target, beta, false), red));
}

static weft_tensor* huber_loss_kernel(const weft_tensor* self, const weft_tensor* target, const char* reduction_,
                                      double delta) {
  reduction red;
  if (!regression_checks("huber_loss", "huber_cpu", self, target, reduction_, &red)) return NULL;
  if (!(delta > 0))
    return weft__error_null(WEFT_INVALID_ARGUMENT, "huber_loss: huber_loss does not support non-positive values for delta.");
  tmps s = {0};
  weft_tensor* loss = piecewise_loss(&s, self, target, delta, true);
  /* its output is empty_like(self): the promoted values cast back to self's dtype */
  if (loss && loss->dtype != self->dtype) loss = keep(&s, weft_to_dtype(loss, self->dtype, false));
  return finish(&s, reduce_loss(&s, loss, red));
}

/* clamp(q, -b, b) through where (clamp refuses float16, the losses take it); NaN passes */
static weft_tensor* clamp_by_where(tmps* s, weft_tensor* q, double b) {
  weft_tensor *below = NULL, *above = NULL, *lo = NULL;
  if (q && (below = keep(s, weft_lt_scalar(q, weft_scalar_double(-b)))))
    lo = keep(s, weft_where_scalar_self(below, weft_scalar_double(-b), q));
  if (lo && (above = keep(s, weft_gt_scalar(lo, weft_scalar_double(b)))))
    return keep(s, weft_where_scalar_self(above, weft_scalar_double(b), lo));
  return NULL;
}

/* d/dself: clamp(d, -k, k) (huber) or clamp(d / k, -1, 1) (smooth_l1), times
 * grad_output and 1/numel(self) for 'mean'. smooth_l1 with k = 0 keeps its
 * kernel's test order, d <= -k first: -1 where d <= 0, 1 above, NaN for NaN */
static weft_tensor* piecewise_backward(const char* op, const weft_tensor* grad_output, const weft_tensor* self,
                                       const weft_tensor* target, const char* reduction_, double k, bool huber) {
  reduction red;
  if (!parse_reduction(op, reduction_, &red)) return NULL;
  double norm = red == RED_MEAN ? 1.0 / (double)weft_tensor_numel(self) : 1.0;
  weft_dtype t = weft_promote_types(self->dtype, target->dtype);
  if (!huber && t == WEFT_FLOAT16)
    return weft__error_null(WEFT_TYPE_ERROR, "%s: \"smooth_l1_backward_cpu_out\" not implemented for 'float16'", op);
  tmps s = {0};
  weft_tensor *d = keep(&s, weft_sub(self, target, weft_scalar_int(1))), *e = NULL;
  if (d) e = clamp_by_where(&s, huber ? d : keep(&s, weft_div_scalar(d, weft_scalar_double(k))), huber ? k : 1.0);
  if (e && !huber && k == 0) {
    weft_tensor* nonpos = keep(&s, weft_le_scalar(d, weft_scalar_int(0)));
    e = nonpos ? keep(&s, weft_where_scalar_self(nonpos, weft_scalar_int(-1), e)) : NULL;
  }
  weft_tensor* scaled = e ? keep(&s, weft_mul_scalar(e, weft_scalar_double(norm))) : NULL;
  return finish(&s, scaled ? keep(&s, weft_mul(scaled, grad_output)) : NULL);
}

static weft_tensor* smooth_l1_loss_backward_kernel(const weft_tensor* grad_output, const weft_tensor* self,
                                                   const weft_tensor* target, const char* reduction_, double beta) {
  return piecewise_backward("smooth_l1_loss_backward", grad_output, self, target, reduction_, beta, false);
}
static weft_tensor* huber_loss_backward_kernel(const weft_tensor* grad_output, const weft_tensor* self,
                                               const weft_tensor* target, const char* reduction_, double delta) {
  return piecewise_backward("huber_loss_backward", grad_output, self, target, reduction_, delta, true);
}

weft_status weft__loss_register(void) {
  WEFT_KERNEL(l1_loss, COMPOSITE_IMPLICIT_AUTOGRAD, l1_loss_kernel);
  WEFT_KERNEL(smooth_l1_loss, CPU, smooth_l1_loss_kernel);
  WEFT_KERNEL(smooth_l1_loss, META, smooth_l1_loss_kernel);
  WEFT_KERNEL(smooth_l1_loss_backward, CPU, smooth_l1_loss_backward_kernel);
  WEFT_KERNEL(smooth_l1_loss_backward, META, smooth_l1_loss_backward_kernel);
  WEFT_KERNEL(huber_loss, CPU, huber_loss_kernel);
  WEFT_KERNEL(huber_loss, META, huber_loss_kernel);
  WEFT_KERNEL(huber_loss_backward, CPU, huber_loss_backward_kernel);
  WEFT_KERNEL(huber_loss_backward, META, huber_loss_backward_kernel);
  WEFT_KERNEL(mse_loss, COMPOSITE_IMPLICIT_AUTOGRAD, mse_loss_kernel);
  WEFT_KERNEL(binary_cross_entropy_with_logits, COMPOSITE_IMPLICIT_AUTOGRAD, bce_logits_kernel);
  WEFT_KERNEL(nll_loss, CPU, nll_loss_kernel);
  WEFT_KERNEL(nll_loss, META, nll_loss_kernel);
  WEFT_KERNEL(nll_loss_backward, CPU, nll_loss_backward_kernel);
  WEFT_KERNEL(nll_loss_backward, META, nll_loss_backward_kernel);
  WEFT_KERNEL(cross_entropy, COMPOSITE_IMPLICIT_AUTOGRAD, cross_entropy_kernel);
  return WEFT_OK;
}
