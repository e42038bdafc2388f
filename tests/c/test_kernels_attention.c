/* The attention kernels (src/kernels/attention.c) on every backend against
 * double references and bit for bit against the scalar backend, at sizes
 * around the vector width; then the driver (src/ops/cpu/attention.c): the
 * fused tiles and the decode path, with masks, causal cuts and grouped
 * heads, against a naive softmax(q k^T scale + mask) v in double, on both
 * backends and at 1 and 3 threads; its backward against the naive
 * gradients. */
#include <math.h>
#include <stdlib.h>

#include "kernel_test_util.h"
#include "ops/cpu/attention.h"
#include "test.h"
#include "weft/parallel.h"

static float* randv(size_t n) {
  float* x = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) x[i] = kt_randf(-2.0f, 2.0f);
  return x;
}

static void test_dot_rows(void) {
  for (size_t s = 0; s < 20; s++) {
    size_t e = kt_sizes[s], n = 13, ks = e + 3;
    float *q = randv(e), *k = randv(n * ks), y[13], y0[13];
    weft__kernels_scalar()->f32_attn_dot_rows(n, e, q, k, ks, 0.5f, y0);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      kt_backend(b)->f32_attn_dot_rows(n, e, q, k, ks, 0.5f, y);
      for (size_t j = 0; j < n; j++) {
        double ref = 0;
        for (size_t d = 0; d < e; d++) ref += (double)q[d] * k[j * ks + d];
        CHECK(fabs(y[j] - 0.5 * ref) <= 1e-5 * (1 + fabs(ref)));
        CHECK(kt_same_f32(y[j], y0[j]));
      }
    }
    free(q);
    free(k);
  }
}

static void test_axpy_rows(void) {
  for (size_t s = 0; s < 24; s++) {
    size_t e = kt_sizes[s] + 30 * (s > 20), n = 9, vs = e + 1;
    float *p = randv(n), *v = randv(n * vs), *acc = randv(e), *a0 = malloc(e * 4), *a1 = malloc(e * 4);
    memcpy(a0, acc, e * 4);
    weft__kernels_scalar()->f32_attn_axpy_rows(n, e, p, v, vs, a0);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      memcpy(a1, acc, e * 4);
      kt_backend(b)->f32_attn_axpy_rows(n, e, p, v, vs, a1);
      for (size_t d = 0; d < e; d++) {
        double ref = acc[d];
        for (size_t j = 0; j < n; j++) ref += (double)p[j] * v[j * vs + d];
        CHECK(fabs(a1[d] - ref) <= 1e-5 * (1 + fabs(ref)));
        CHECK(kt_same_f32(a1[d], a0[d]));
      }
    }
    free(p), free(v), free(acc), free(a0), free(a1);
  }
}

static void test_dscore(void) {
  for (size_t s = 0; s < KT_NSIZES; s++) {
    size_t n = kt_sizes[s];
    float *p = randv(n), *dp = randv(n), *y = malloc(n * 4), *y0 = malloc(n * 4);
    weft__kernels_scalar()->f32_attn_dscore(n, p, dp, 0.25f, y0);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      kt_backend(b)->f32_attn_dscore(n, p, dp, 0.25f, y);
      for (size_t j = 0; j < n; j++) CHECK(kt_same_f32(y[j], p[j] * (dp[j] - 0.25f)) && kt_same_f32(y[j], y0[j]));
    }
    free(p), free(dp), free(y), free(y0);
  }
}

/* two tiles of scores through the online softmax equal one softmax of the
 * whole rows; a row masked in the first tile starts clean in the second, a
 * row masked in both ends with l = 0 */
static void test_online_softmax(void) {
  enum { R = 3, N1 = 37, N2 = 20 };
  float x[R][N1 + N2];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < N1 + N2; j++) x[i][j] = kt_randf(-8.0f, 8.0f);
  for (int j = 0; j < N1; j++) x[1][j] = -INFINITY;
  for (int j = 0; j < N1 + N2; j++) x[2][j] = -INFINITY;
  for (int b = 0; b < KT_NBACKENDS; b++) {
    float s1[R * N1], s2[R * N2], m[R], l[R], alpha[R], acc[R] = {0};
    for (int i = 0; i < R; i++) {
      m[i] = -INFINITY, l[i] = 0;
      memcpy(s1 + i * N1, x[i], N1 * 4);
      memcpy(s2 + i * N2, x[i] + N1, N2 * 4);
    }
    /* acc: the weighted sum of the column index, rescaled as the output would be */
    kt_backend(b)->f32_attn_softmax(R, N1, s1, N1, m, l, alpha);
    for (int i = 0; i < R; i++)
      for (int j = 0; j < N1; j++) acc[i] = acc[i] * (j ? 1 : alpha[i]) + s1[i * N1 + j] * j;
    kt_backend(b)->f32_attn_softmax(R, N2, s2, N2, m, l, alpha);
    for (int i = 0; i < R; i++) {
      acc[i] *= alpha[i];
      for (int j = 0; j < N2; j++) acc[i] += s2[i * N2 + j] * (N1 + j);
    }
    for (int i = 0; i < 2; i++) {
      double mx = -INFINITY, sum = 0, ref = 0;
      for (int j = 0; j < N1 + N2; j++) mx = x[i][j] > mx ? x[i][j] : mx;
      for (int j = 0; j < N1 + N2; j++) sum += exp(x[i][j] - mx), ref += exp(x[i][j] - mx) * j;
      CHECK(fabs(m[i] - mx) == 0);
      CHECK(fabs(l[i] - sum) <= 1e-5 * sum);
      CHECK(fabs(acc[i] / l[i] - ref / sum) <= 1e-4 * (1 + ref / sum));
    }
    CHECK(l[2] == 0 && m[2] == -INFINITY && acc[2] == 0);
  }
}

/* ---- the driver against a double reference ---- */

typedef struct {
  int64_t b, hq, hkv, l, s, e, ev;
  bool causal, mask, mask_bcast;
  float dropout_p;
} shape_case;

/* the composite with the fused kernels' dropout mask (its factors z) */
static void reference(const weft_attn_args* a, double* out) {
  int64_t g = a->hq / a->hkv;
  double* p = malloc(sizeof(double) * (size_t)a->s);
  float* z = malloc(sizeof(float) * (size_t)a->s);
  for (int64_t b = 0; b < a->b; b++)
    for (int64_t h = 0; h < a->hq; h++)
      for (int64_t i = 0; i < a->l; i++) {
        const float* q = a->q + b * a->qst[0] + h * a->qst[1] + i * a->qst[2];
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < a->s; j++) {
          const float* k = a->k + b * a->kst[0] + h / g * a->kst[1] + j * a->kst[2];
          double d = 0;
          for (int64_t e = 0; e < a->e; e++) d += (double)q[e] * k[e];
          d *= a->scale;
          if (a->mask) d += a->mask[b * a->mst[0] + h * a->mst[1] + i * a->mst[2] + j * a->mst[3]];
          if (a->causal && j > i) d = -INFINITY;
          p[j] = d;
          mx = d > mx ? d : mx;
        }
        for (int64_t j = 0; j < a->s; j++) sum += (p[j] = exp(p[j] - mx));
        if (a->dropout_p > 0) {
          weft__attn_dropout_factors(a, b * a->hq + h, i, 0, a->s, z);
          for (int64_t j = 0; j < a->s; j++) p[j] *= z[j];
        }
        double* o = out + ((b * a->hq + h) * a->l + i) * a->ev;
        for (int64_t d = 0; d < a->ev; d++) {
          double acc = 0;
          for (int64_t j = 0; j < a->s; j++) acc += p[j] * a->v[b * a->vst[0] + h / g * a->vst[1] + j * a->vst[2] + d];
          o[d] = acc / sum;
        }
      }
  free(p);
  free(z);
}

static void setup(const shape_case* c, weft_attn_args* a, float** bufs) {
  memset(a, 0, sizeof *a);
  a->b = c->b, a->hq = c->hq, a->hkv = c->hkv, a->l = c->l, a->s = c->s, a->e = c->e, a->ev = c->ev;
  /* padded rows, so the row strides are not the widths */
  int64_t qr = c->e + 2, kr = c->e + 1, vr = c->ev + 3;
  bufs[0] = randv((size_t)(c->b * c->hq * c->l * qr));
  bufs[1] = randv((size_t)(c->b * c->hkv * c->s * kr));
  bufs[2] = randv((size_t)(c->b * c->hkv * c->s * vr));
  bufs[3] = c->mask ? randv((size_t)(c->b * c->hq * c->l * c->s)) : NULL;
  a->q = bufs[0], a->k = bufs[1], a->v = bufs[2], a->mask = bufs[3];
  int64_t qst[3] = {c->hq * c->l * qr, c->l * qr, qr}, kst[3] = {c->hkv * c->s * kr, c->s * kr, kr};
  int64_t vst[3] = {c->hkv * c->s * vr, c->s * vr, vr};
  memcpy(a->qst, qst, sizeof qst), memcpy(a->kst, kst, sizeof kst), memcpy(a->vst, vst, sizeof vst);
  if (c->mask) {
    int64_t mst[4] = {c->mask_bcast ? 0 : c->hq * c->l * c->s, c->mask_bcast ? 0 : c->l * c->s, c->s, 1};
    memcpy(a->mst, mst, sizeof mst);
  }
  a->scale = 1.0f / sqrtf((float)c->e);
  a->causal = c->causal;
  a->dropout_p = c->dropout_p, a->seed = 0x5eed0000u + (uint64_t)c->s;
}

/* a case's arguments over fresh data, and its sizes (elements) */
typedef struct {
  weft_attn_args a;
  float* bufs[4];
  size_t no, nl, nq, nk, nv; /* out, lse, dq, dk, dv */
} fixture;

static void fixture_make(const shape_case* c, fixture* f) {
  setup(c, &f->a, f->bufs);
  f->no = (size_t)(c->b * c->hq * c->l * c->ev), f->nl = (size_t)(c->b * c->hq * c->l);
  f->nq = (size_t)(c->b * c->hq * c->l * c->e), f->nk = (size_t)(c->b * c->hkv * c->s * c->e);
  f->nv = (size_t)(c->b * c->hkv * c->s * c->ev);
}

static void fixture_free(fixture* f) {
  for (int i = 0; i < 4; i++) free(f->bufs[i]);
}

static void forward_case(const shape_case* c) {
  fixture f;
  fixture_make(c, &f);
  const weft_attn_args* a = &f.a;
  double* ref = malloc(f.no * sizeof(double));
  reference(a, ref);
  float *o0 = malloc(f.no * 4), *o = malloc(f.no * 4), *lse = malloc(f.nl * 4);
  weft__attn_forward(weft__kernels_scalar(), a, weft__attn_path(a), o0, lse);
  for (int threads = 1; threads <= 3; threads += 2) {
    weft_set_num_threads(threads);
    for (int b = 0; b < KT_NBACKENDS; b++) {
      CHECK(weft__attn_forward(kt_backend(b), a, weft__attn_path(a), o, lse) == WEFT_OK);
      int bad = 0;
      for (size_t i = 0; i < f.no; i++) bad += fabs(o[i] - ref[i]) > 1e-5 * (1 + fabs(ref[i]));
      CHECK_EQ_I64(bad, 0);
      if (b == 1) CHECK(memcmp(o, o0, f.no * 4) == 0); /* the scalar backend at any thread count */
    }
  }
  weft_set_num_threads(1);
  free(ref), free(o0), free(o), free(lse);
  fixture_free(&f);
}

static void test_forward(void) {
  const shape_case cases[] = {
      {1, 2, 2, 5, 7, 8, 8, false, false, false, 0},   {2, 4, 2, 70, 300, 16, 12, false, true, false, 0},
      {1, 3, 1, 130, 270, 9, 5, true, false, false, 0}, {1, 2, 2, 1, 300, 64, 64, false, true, true, 0},
      {2, 4, 4, 3, 10, 7, 6, true, false, false, 0},   {1, 1, 1, 64, 64, 4, 4, true, true, false, 0},
      {1, 2, 2, 4, 33, 8, 8, false, false, false, 0},  {1, 4, 2, 3, 40, 6, 5, true, false, false, 0.25f},
      {1, 2, 1, 1, 1100, 64, 8, false, false, false, 0.2f},
      {2, 2, 1, 70, 300, 16, 12, false, true, false, 0.5f}, {1, 1, 1, 64, 64, 4, 4, true, true, false, 0.1f},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) forward_case(&cases[i]);
}

/* the gradients of sum(out * go) against central differences of the double reference */
static void backward_case(const shape_case* c) {
  fixture f;
  fixture_make(c, &f);
  weft_attn_args* a = &f.a;
  float *go = randv(f.no), *o = malloc(f.no * 4), *lse = malloc(f.nl * 4);
  float *dq = malloc(f.nq * 4), *dk = calloc(f.nk, 4), *dv = calloc(f.nv, 4);
  float *dq3 = malloc(f.nq * 4), *dk3 = calloc(f.nk, 4), *dv3 = calloc(f.nv, 4);
  CHECK(weft__attn_forward(weft__kernels(), a, WEFT_ATTN_FUSED, o, lse) == WEFT_OK);
  CHECK(weft__attn_backward(weft__kernels(), a, go, lse, dq, dk, dv) == WEFT_OK);
  weft_set_num_threads(3); /* the same bits: each dk, dv row has one writer, the mask one hash */
  CHECK(weft__attn_backward(weft__kernels(), a, go, lse, dq3, dk3, dv3) == WEFT_OK);
  weft_set_num_threads(1);
  CHECK(!memcmp(dq, dq3, f.nq * 4) && !memcmp(dk, dk3, f.nk * 4) && !memcmp(dv, dv3, f.nv * 4));
  free(dq3), free(dk3), free(dv3);
  double* ref = malloc(f.no * sizeof(double));
  /* one element of each of q, k, v (strided storage: the element's address) */
  float* targets[3] = {f.bufs[0] + a->qst[2] + 1, f.bufs[1] + a->kst[2] * 2, f.bufs[2] + a->vst[2] * 3 + 1};
  float got[3] = {dq[c->e + 1], dk[2 * c->e], dv[3 * c->ev + 1]};
  for (int t = 0; t < 3; t++) {
    float keep = *targets[t];
    double sums[2];
    for (int sgn = 0; sgn < 2; sgn++) {
      *targets[t] = keep + (sgn ? 1e-2f : -1e-2f);
      reference(a, ref);
      sums[sgn] = 0;
      for (size_t i = 0; i < f.no; i++) sums[sgn] += ref[i] * go[i];
    }
    *targets[t] = keep;
    double num = (sums[1] - sums[0]) / ((double)(keep + 1e-2f) - (double)(keep - 1e-2f));
    CHECK(fabs(got[t] - num) <= 2e-3 * (1 + fabs(num)));
  }
  free(go), free(o), free(lse), free(dq), free(dk), free(dv), free(ref);
  fixture_free(&f);
}

static void test_backward(void) {
  const shape_case cases[] = {{1, 2, 1, 6, 9, 5, 4, true, true, false, 0},
                              {1, 2, 2, 70, 40, 4, 3, false, false, false, 0},
                              {1, 2, 1, 6, 9, 5, 4, true, true, false, 0.3f},
                              {1, 2, 2, 70, 40, 4, 3, false, false, false, 0.5f}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) backward_case(&cases[i]);
}

/* the mask's statistics: kept fraction 1 - p overall, per-row fractions
 * with the binomial variance p (1 - p) / s, neighbours uncorrelated, the
 * factors 1 / (1 - p); another seed another mask */
static void test_dropout_mask(void) {
  enum { ROWS = 64, S = 1000 };
  const float p = 0.3f;
  weft_attn_args a = {.b = 1, .hq = 2, .hkv = 2, .l = ROWS, .s = S, .dropout_p = p, .seed = 12345};
  float* z = malloc(sizeof(float) * ROWS * S);
  double kept = 0, var = 0, pairs = 0, both = 0;
  for (int64_t i = 0; i < ROWS; i++) weft__attn_dropout_factors(&a, 1, i, 0, S, z + i * S);
  for (int64_t i = 0; i < ROWS; i++) {
    double row = 0;
    for (int64_t j = 0; j < S; j++) {
      float x = z[i * S + j];
      CHECK(x == 0 || x == 1.0f / (1.0f - p));
      row += x != 0;
      if (j) pairs++, both += x != 0 && z[i * S + j - 1] != 0;
    }
    kept += row, var += (row / S - (1 - p)) * (row / S - (1 - p));
  }
  double frac = kept / (ROWS * S), want = (double)p * (1 - p) / S;
  CHECK(fabs(frac - (1 - p)) < 0.01);                                /* sigma 0.0018 */
  CHECK(var / ROWS > 0.5 * want && var / ROWS < 1.6 * want);        /* rel. sigma 0.18 */
  CHECK(fabs(both / pairs - (1 - p) * (1 - p)) < 0.015);            /* independent neighbours */
  float z1[S], z2[S];
  weft__attn_dropout_factors(&a, 1, 5, 0, S, z1);
  weft__attn_dropout_factors(&a, 1, 5, 100, S - 100, z2); /* a tile starting at key 100: the same factors */
  CHECK(!memcmp(z1 + 100, z2, sizeof(float) * (S - 100)));
  a.seed = 12346;
  weft__attn_dropout_factors(&a, 1, 5, 0, S, z2);
  int same = 0;
  for (int j = 0; j < S; j++) same += (z1[j] != 0) == (z2[j] != 0);
  CHECK(same < 700); /* independent masks agree on p^2 + (1 - p)^2 = 58% */
  free(z);
}

int main(void) {
  test_dropout_mask();
  test_dot_rows();
  test_axpy_rows();
  test_dscore();
  test_online_softmax();
  test_forward();
  test_backward();
  TEST_REPORT();
}
