/* Fused attention on the CPU (PyTorch 2.x's cpu/FlashAttentionKernel.cpp is
 * the shape): the forward takes a tile of QT queries against tiles of KT
 * keys, S = scale Q K^T through the GEMM, adds the mask, cuts the causal
 * corner, then the online softmax (f32_attn_softmax) rescales the output
 * rows and O += P V, so no [l, s] matrix exists; the output is divided by
 * the row sums at the end. The backward recomputes P = exp(S - lse) for one
 * query tile against every key at a time (a QT x s buffer), then dS =
 * P (dP - rowsum(P dP)), dQ = scale dS K, dK += scale dS^T Q, dV += P^T dO.
 * Dropout multiplies P by its factors Z after the row sums (O = (Z P) V / l)
 * and, in the backward, dP = Z dO V^T and dV += (Z P)^T dO; Z comes from a
 * counter-based hash, the same bits in both passes and for any threads. */
#include "ops/cpu/attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/gemm.h"
#include "weft/parallel.h"

#define QT 64        /* query rows per tile */
#define KT 256       /* keys per tile */
#define DECODE_ROWS 4 /* up to the GEMV kernels' rows: no packing, K and V read once */
#define DECODE_GRAIN 32768 /* multiply-adds per decode chunk at least */
#define DECODE_CACHED 65536 /* key floats of a head that stay in L2 (256 KB) */
#define DECODE_SERIAL (1 << 18) /* multiply-adds below which a decode call stays on the calling thread: the
                                   composite's per-head GEMVs do below 2^16 each, and a worker woken on a
                                   loaded machine cost 0.5-9 ms against 20 us of work (8 heads x 128 keys) */

weft_attn_path weft__attn_path(const weft_attn_args* a) {
  return a->l <= DECODE_ROWS ? WEFT_ATTN_DECODE : WEFT_ATTN_FUSED;
}

const char* weft__attn_path_name(weft_attn_path p) { return p == WEFT_ATTN_DECODE ? "decode" : "fused"; }

static const float* q_at(const weft_attn_args* a, int64_t b, int64_t h, int64_t i) {
  return a->q + b * a->qst[0] + h * a->qst[1] + i * a->qst[2];
}
static const float* k_at(const weft_attn_args* a, int64_t b, int64_t h, int64_t j) {
  int64_t kh = h / (a->hq / a->hkv);
  return a->k + b * a->kst[0] + kh * a->kst[1] + j * a->kst[2];
}
static const float* v_at(const weft_attn_args* a, int64_t b, int64_t h, int64_t j) {
  int64_t kh = h / (a->hq / a->hkv);
  return a->v + b * a->vst[0] + kh * a->vst[1] + j * a->vst[2];
}

/* row i of the scores, keys [j0, j0 + n): + mask, and -inf past the causal
 * diagonal */
static void mask_row(const weft_kernels* kt, const weft_attn_args* a, int64_t b, int64_t h, int64_t i, int64_t j0,
                     int64_t n, float* s) {
  if (a->mask) {
    const float* m = a->mask + b * a->mst[0] + h * a->mst[1] + i * a->mst[2] + j0 * a->mst[3];
    if (a->mst[3] == 1) kt->f32_vadd((size_t)n, s, m, s, NULL);
    else if (a->mst[3] == 0) kt->f32_vaddc((size_t)n, s, m, s, NULL);
    else
      for (int64_t j = 0; j < n; j++) s[j] += m[j * a->mst[3]];
  }
  if (a->causal)
    for (int64_t j = i + 1 - j0 > 0 ? i + 1 - j0 : 0; j < n; j++) s[j] = -INFINITY;
}

/* ---- dropout ---- */

/* splitmix64's finalizer of key + (x + 1) * golden: a counter-based draw */
static inline uint64_t mix64(uint64_t key, uint64_t x) {
  uint64_t z = key + (x + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* y[j] *= z[j] over keys [j0, j0 + n) of row i of head bh, or z = y's
 * factors when set. The row's key chains seed, batch, head and query, the
 * element's draw is the row key's at the key index: the same mask for any
 * tiling, thread split or query count (a decode call's rows are a longer
 * call's first rows) */
static void dropout_apply(const weft_attn_args* a, int64_t bh, int64_t i, int64_t j0, int64_t n, float* y, bool set) {
  uint32_t thr = (uint32_t)((double)a->dropout_p * 4294967296.0);
  float keep = 1.0f / (1.0f - a->dropout_p);
  uint64_t row = mix64(mix64(mix64(a->seed, (uint64_t)(bh / a->hq)), (uint64_t)(bh % a->hq)), (uint64_t)i);
  for (int64_t j = 0; j < n; j++) {
    float z = (uint32_t)(mix64(row, (uint64_t)(j0 + j)) >> 32) >= thr ? keep : 0.0f;
    y[j] = set ? z : y[j] * z;
  }
}

void weft__attn_dropout_factors(const weft_attn_args* a, int64_t bh, int64_t i, int64_t j0, int64_t n, float* z) {
  dropout_apply(a, bh, i, j0, n, z, true);
}

/* the probabilities (or dP) of rows [i0, i0 + rows) x keys [j0, j0 + n), row stride n, times their factors */
static void dropout_rows(const weft_attn_args* a, int64_t bh, int64_t i0, int64_t rows, int64_t j0, int64_t n,
                         float* p) {
  if (a->dropout_p > 0)
    for (int64_t i = 0; i < rows; i++) dropout_apply(a, bh, i0 + i, j0, n, p + i * n, false);
}

/* keys a query tile ending at row i1 (exclusive) sees */
static int64_t keys_for(const weft_attn_args* a, int64_t i1) { return a->causal && i1 < a->s ? i1 : a->s; }

/* ---- forward ---- */

typedef struct {
  const weft_kernels* kt;
  const weft_attn_args* a;
  float *out, *lse;
  int64_t ntiles, tpt; /* query tiles per (b, h), per task */
} fwd_job;

static void finish_rows(const weft_kernels* kt, int64_t rows, int64_t ev, float* o, const float* m, const float* l,
                        float* lse) {
  for (int64_t i = 0; i < rows; i++) {
    float inv = 1.0f / l[i]; /* l = 0 (fully masked): 0 * inf = NaN, as softmax of -inf */
    kt->f32_vmulc((size_t)ev, o + i * ev, &inv, o + i * ev, NULL);
    lse[i] = m[i] + logf(l[i]);
  }
}

/* ---- packing for the GEMM micro-kernel (4 x 8 tiles from packed panels) ---- */

/* rows [0, rows) of src (row stride rs, unit column stride) over depth d as
 * panels of w rows: dst[panel][k][r] = src[(panel w + r) rs + k], zeros past
 * rows; each panel one transpose (x32_transposec) */
static void pack_rows(const weft_kernels* kt, const float* src, int64_t rs, int64_t rows, int64_t d, int w,
                      float* dst) {
  for (int64_t p = 0; p < rows; p += w, dst += w * d) {
    int64_t nr = rows - p < w ? rows - p : w;
    kt->x32_transposec(src + p * rs, dst, (size_t)rs * 4, (size_t)w * 4, (size_t)d, (size_t)nr);
    for (int64_t k = 0; nr < w && k < d; k++)
      for (int64_t r = nr; r < w; r++) dst[k * w + r] = 0;
  }
}

/* columns [0, cols) of d rows of src as panels of 8 columns, ps elements
 * apart: dst[panel ps + k 8 + c] */
static void pack_cols(const float* src, int64_t rs, int64_t d, int64_t cols, float* dst, int64_t ps) {
  for (int64_t c0 = 0; c0 < cols; c0 += 8, dst += ps) {
    int64_t w = cols - c0 < 8 ? cols - c0 : 8;
    for (int64_t k = 0; k < d; k++) {
      const float* row = src + k * rs + c0;
      float* o = dst + k * 8;
      if (w == 8) {
        memcpy(o, row, 32);
        continue;
      }
      int64_t c = 0;
      for (; c < w; c++) o[c] = row[c];
      for (; c < 8; c++) o[c] = 0;
    }
  }
}

#define PANELS(n, w) (((n) + (w) - 1) / (w))

/* a task's buffers: the packed query tile, every key of the head (panels of
 * 8 keys over e), every value (panels of 8 columns over s), and the scores,
 * which become the probabilities in place (the P V product reads them as
 * rows, unpacked) */
typedef struct {
  float *q, *k, *v, *s;
} fwd_scratch;

static float* scratch_alloc(const weft_attn_args* a, fwd_scratch* x) {
  size_t nq = (size_t)(PANELS(QT, 4) * 4 * a->e), nk = (size_t)(PANELS(a->s, 8) * 8 * a->e);
  size_t nv = (size_t)(PANELS(a->ev, 8) * 8 * a->s), ns = QT * KT;
  float* buf = malloc(sizeof(float) * (nq + nk + nv + ns));
  if (!buf) return NULL;
  x->q = buf, x->k = x->q + nq, x->v = x->k + nk, x->s = x->v + nv;
  return buf;
}

/* c[rows x cols] (row stride cs) = alpha a b, or += when acc: a packed over
 * depth d (lda 0) or rows lda apart read in place, b's panels bps elements
 * apart */
static void tile_gemm(const weft_kernels* kt, int64_t rows, int64_t cols, int64_t d, const float* a, int64_t lda,
                      const float* b, int64_t bps, float* c, int64_t cs, float alpha, int acc) {
  struct weft_f32_gemm_params gp = {.alpha = alpha, .accumulate = acc, .lda = (size_t)lda};
  int64_t as = lda ? lda : d; /* A's elements per row */
  for (int64_t j = 0; j < cols; j += 8) {
    const float* bp = b + j / 8 * bps;
    size_t nc = (size_t)(cols - j < 8 ? cols - j : 8);
    for (int64_t i = 0; i < rows; i += 4)
      kt->f32_gemm_4x8((size_t)(rows - i < 4 ? rows - i : 4), nc, (size_t)d, a + i * as, bp, c + i * cs + j,
                       (size_t)cs, &gp);
  }
}

/* one query tile [i0, i1) of head (b, h), its keys and values packed in x */
static void fused_tile(const fwd_job* j, int64_t b, int64_t h, int64_t i0, int64_t i1, const fwd_scratch* x) {
  const weft_attn_args* a = j->a;
  const weft_kernels* kt = j->kt;
  int64_t rows = i1 - i0, bh = b * a->hq + h;
  float* o = j->out + (bh * a->l + i0) * a->ev;
  float m[QT], l[QT], alpha[QT];
  for (int64_t i = 0; i < rows; i++) m[i] = -INFINITY, l[i] = 0;
  memset(o, 0, sizeof(float) * (size_t)(rows * a->ev));
  pack_rows(kt, q_at(a, b, h, i0), a->qst[2], rows, a->e, 4, x->q);
  int64_t nkeys = keys_for(a, i1);
  for (int64_t j0 = 0; j0 < nkeys; j0 += KT) {
    int64_t n = nkeys - j0 < KT ? nkeys - j0 : KT;
    tile_gemm(kt, rows, n, a->e, x->q, 0, x->k + j0 * a->e, 8 * a->e, x->s, n, a->scale, 0);
    if (a->mask || a->causal)
      for (int64_t i = 0; i < rows; i++) mask_row(kt, a, b, h, i0 + i, j0, n, x->s + i * n);
    kt->f32_attn_softmax((size_t)rows, (size_t)n, x->s, (size_t)n, m, l, alpha);
    dropout_rows(a, bh, i0, rows, j0, n, x->s); /* after the sums: l is the undropped softmax's */
    for (int64_t i = 0; i < rows; i++)
      if (alpha[i] != 1.0f) kt->f32_vmulc((size_t)a->ev, o + i * a->ev, &alpha[i], o + i * a->ev, NULL);
    tile_gemm(kt, rows, a->ev, n, x->s, n, x->v + j0 * 8, 8 * a->s, o, a->ev, 1.0f, 1);
  }
  finish_rows(kt, rows, a->ev, o, m, l, j->lse + bh * a->l + i0);
}

/* task t: query tiles [c tpt, (c + 1) tpt) of head bh (t = bh * chunks + c) */
static weft_status fused_range(void* p, int64_t begin, int64_t end) {
  const fwd_job* j = p;
  const weft_attn_args* a = j->a;
  fwd_scratch x;
  float* buf = scratch_alloc(a, &x);
  if (!buf) return weft__error(WEFT_OUT_OF_MEMORY, "scaled_dot_product_attention: out of memory");
  int64_t chunks = PANELS(j->ntiles, j->tpt);
  for (int64_t t = begin; t < end; t++) {
    int64_t bh = t / chunks, b = bh / a->hq, h = bh % a->hq, c = t % chunks;
    int64_t i0 = c * j->tpt * QT, iend = i0 + j->tpt * QT < a->l ? i0 + j->tpt * QT : a->l;
    int64_t nkeys = keys_for(a, iend);
    pack_rows(j->kt, k_at(a, b, h, 0), a->kst[2], nkeys, a->e, 8, x.k);
    pack_cols(v_at(a, b, h, 0), a->vst[2], nkeys, a->ev, x.v, 8 * a->s);
    for (; i0 < iend; i0 += QT) fused_tile(j, b, h, i0, i0 + QT < iend ? i0 + QT : iend, &x);
  }
  free(buf);
  return WEFT_OK;
}

/* the m = l <= DECODE_ROWS query rows of (b, h) against their keys
 * through the GEMV kernels (the composite's matrix-vector products): each
 * key and value row is read once for all m rows, in one straight pass, and
 * nothing is packed; s: m x a->s scores */
static void decode_head(const fwd_job* j, int64_t b, int64_t h, float* s) {
  const weft_attn_args* a = j->a;
  const weft_kernels* kt = j->kt;
  int64_t bh = b * a->hq + h, m = a->l, n = keys_for(a, m);
  float* o = j->out + bh * m * a->ev;
  float mx[DECODE_ROWS], l[DECODE_ROWS], alpha[DECODE_ROWS];
  for (int64_t i = 0; i < m; i++) mx[i] = -INFINITY, l[i] = 0;
  if (n == 0) {
    memset(o, 0, sizeof(float) * (size_t)(m * a->ev));
  } else {
    struct weft_f32_gemm_params gs = {.alpha = a->scale}, gv = {.alpha = 1.0f};
    /* one row: four keys at a time while the head's keys fit in L2, else
     * gemv_t's single straight stream, which the prefetcher keeps up with */
    if (m == 1 && n * a->e <= DECODE_CACHED)
      kt->f32_attn_dot_rows((size_t)n, (size_t)a->e, q_at(a, b, h, 0), k_at(a, b, h, 0), (size_t)a->kst[2], a->scale, s);
    else
      kt->f32_gemv_t((size_t)m, (size_t)n, (size_t)a->e, q_at(a, b, h, 0), (size_t)a->qst[2], k_at(a, b, h, 0),
                     (ptrdiff_t)a->kst[2], s, (size_t)n, &gs);
    if (a->mask || a->causal)
      for (int64_t i = 0; i < m; i++) mask_row(kt, a, b, h, i, 0, n, s + i * n);
    kt->f32_attn_softmax((size_t)m, (size_t)n, s, (size_t)n, mx, l, alpha);
    dropout_rows(a, bh, 0, m, 0, n, s);
    if (m == 1) {
      memset(o, 0, sizeof(float) * (size_t)a->ev);
      kt->f32_attn_axpy_rows((size_t)n, (size_t)a->ev, s, v_at(a, b, h, 0), (size_t)a->vst[2], o);
    } else {
      kt->f32_gemv_n((size_t)m, (size_t)a->ev, (size_t)n, s, (size_t)n, v_at(a, b, h, 0), (ptrdiff_t)a->vst[2], o,
                     (size_t)a->ev, &gv);
    }
  }
  finish_rows(kt, m, a->ev, o, mx, l, j->lse + bh * m);
}

/* task t: every query row of head t */
static weft_status decode_range(void* p, int64_t begin, int64_t end) {
  const fwd_job* j = p;
  const weft_attn_args* a = j->a;
  float* s = malloc(sizeof(float) * (size_t)(a->l * (a->s > 0 ? a->s : 1)));
  if (!s) return weft__error(WEFT_OUT_OF_MEMORY, "scaled_dot_product_attention: out of memory");
  for (int64_t t = begin; t < end; t++) decode_head(j, t / a->hq, t % a->hq, s);
  free(s);
  return WEFT_OK;
}

weft_status weft__attn_forward(const weft_kernels* kt, const weft_attn_args* a, weft_attn_path path, float* out,
                               float* lse) {
  int64_t bh = a->b * a->hq;
  if (bh == 0 || a->l == 0) return WEFT_OK;
  fwd_job j = {kt, a, out, lse, PANELS(a->l, QT), 1};
  /* per task: the multiply-adds of its rows against every key */
  if (path == WEFT_ATTN_DECODE) {
    int64_t per = a->l * a->s * (a->e + a->ev) + 1, grain = DECODE_GRAIN / per;
    if (per * bh < DECODE_SERIAL) grain = bh;
    return weft_parallel_for(0, bh, grain < 1 ? 1 : grain, decode_range, &j);
  }
  /* tasks of several query tiles share one packing of the head's keys and
   * values: as few as still leave 4 a thread */
  int64_t want = 4 * (int64_t)weft_get_num_threads(), per_head = PANELS(want, bh);
  j.tpt = PANELS(j.ntiles, per_head < j.ntiles ? per_head : j.ntiles);
  return weft_parallel_for(0, bh * PANELS(j.ntiles, j.tpt), 1, fused_range, &j);
}

/* ---- backward ---- */

typedef struct {
  const weft_kernels* kt;
  const weft_attn_args* a;
  const float *dout, *lse;
  float *dq, *dk, *dv;
} bwd_job;

/* P (into p) and dS (into ds) of query rows [i0, i1) of head (b, h) against
 * its n keys */
static weft_status probs_and_dscores(const bwd_job* j, int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t n,
                                     float* p, float* ds) {
  const weft_attn_args* a = j->a;
  const weft_kernels* kt = j->kt;
  int64_t rows = i1 - i0, bh = b * a->hq + h;
  const float* lse = j->lse + bh * a->l + i0;
  const float* dout = j->dout + (bh * a->l + i0) * a->ev;
  weft_gemm_operand qa = {q_at(a, b, h, i0), a->qst[2], 1}, kb = {k_at(a, b, h, 0), 1, a->kst[2]};
  weft_status st = weft__gemm(kt, WEFT_FLOAT32, rows, n, a->e, a->scale, qa, kb, false, p, n, 1);
  weft_gemm_operand da = {dout, a->ev, 1}, vb = {v_at(a, b, h, 0), 1, a->vst[2]};
  if (st == WEFT_OK) st = weft__gemm(kt, WEFT_FLOAT32, rows, n, a->ev, 1.0, da, vb, false, ds, n, 1);
  if (st != WEFT_OK) return st;
  for (int64_t i = 0; i < rows; i++) {
    float *pi = p + i * n, *di = ds + i * n, d;
    mask_row(kt, a, b, h, i0 + i, 0, n, pi);
    kt->f32_rexpsum((size_t)n, pi, lse[i], pi);
    dropout_rows(a, bh, i0 + i, 1, 0, n, di); /* dP of the undropped P: Z dO V^T */
    kt->f32_attn_dot_rows(1, (size_t)n, pi, di, 0, 1.0f, &d);
    kt->f32_attn_dscore((size_t)n, pi, di, d, di);
    dropout_rows(a, bh, i0 + i, 1, 0, n, pi); /* dV = (Z P)^T dO */
  }
  return WEFT_OK;
}

/* query rows [i0, i1) of head (b, h): dq rows, and their part of dk, dv */
static weft_status backward_tile(const bwd_job* j, int64_t b, int64_t h, int64_t i0, int64_t i1, float* p, float* ds) {
  const weft_attn_args* a = j->a;
  const weft_kernels* kt = j->kt;
  int64_t rows = i1 - i0, n = keys_for(a, i1), bh = b * a->hq + h;
  int64_t kh = b * a->hkv + h / (a->hq / a->hkv);
  if (n == 0) {
    memset(j->dq + (bh * a->l + i0) * a->e, 0, sizeof(float) * (size_t)(rows * a->e));
    return WEFT_OK;
  }
  weft_status st = probs_and_dscores(j, b, h, i0, i1, n, p, ds);
  weft_gemm_operand dsa = {ds, n, 1}, kb = {k_at(a, b, h, 0), a->kst[2], 1};
  if (st == WEFT_OK)
    st = weft__gemm(kt, WEFT_FLOAT32, rows, a->e, n, a->scale, dsa, kb, false, j->dq + (bh * a->l + i0) * a->e, a->e, 1);
  weft_gemm_operand dst = {ds, 1, n}, qb = {q_at(a, b, h, i0), a->qst[2], 1};
  if (st == WEFT_OK)
    st = weft__gemm(kt, WEFT_FLOAT32, n, a->e, rows, a->scale, dst, qb, true, j->dk + kh * a->s * a->e, a->e, 1);
  weft_gemm_operand pt = {p, 1, n}, dob = {j->dout + (bh * a->l + i0) * a->ev, a->ev, 1};
  if (st == WEFT_OK)
    st = weft__gemm(kt, WEFT_FLOAT32, n, a->ev, rows, 1.0, pt, dob, true, j->dv + kh * a->s * a->ev, a->ev, 1);
  return st;
}

/* every query head of key/value head t = (b, kh), so its dk, dv rows have one writer */
static weft_status backward_range(void* p, int64_t begin, int64_t end) {
  const bwd_job* j = p;
  const weft_attn_args* a = j->a;
  int64_t g = a->hq / a->hkv, qt = a->l < QT ? a->l : QT;
  float* buf = malloc(sizeof(float) * (size_t)(2 * qt * (a->s > 0 ? a->s : 1)));
  if (!buf) return weft__error(WEFT_OUT_OF_MEMORY, "scaled_dot_product_attention_backward: out of memory");
  weft_status st = WEFT_OK;
  for (int64_t t = begin; t < end && st == WEFT_OK; t++) {
    int64_t b = t / a->hkv, kh = t % a->hkv;
    for (int64_t h = kh * g; h < (kh + 1) * g && st == WEFT_OK; h++)
      for (int64_t i0 = 0; i0 < a->l && st == WEFT_OK; i0 += QT)
        st = backward_tile(j, b, h, i0, i0 + QT < a->l ? i0 + QT : a->l, buf, buf + qt * a->s);
  }
  free(buf);
  return st;
}

weft_status weft__attn_backward(const weft_kernels* kt, const weft_attn_args* a, const float* dout, const float* lse,
                                float* dq, float* dk, float* dv) {
  if (a->b * a->hkv == 0 || a->l == 0) return WEFT_OK;
  bwd_job j = {kt, a, dout, lse, dq, dk, dv};
  return weft_parallel_for(0, a->b * a->hkv, 1, backward_range, &j);
}
