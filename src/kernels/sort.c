/* Sort keys, radix sort and k-selection: see sort.h. */
#include "kernels/sort.h"

#include <math.h>
#include <string.h>

#include "base/half.h"

/* IEEE bits to an order-preserving unsigned key: negative values have every
 * bit flipped, others only the sign bit. NaNs are made one value above +inf
 * (all NaNs compare equal in PyTorch's sort), -0.0 becomes 0.0. */
static inline uint64_t f32_key(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t mag = b & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return 0xFFFFFFFFu;
  if (mag == 0) b = 0;
  return b ^ ((uint32_t)((int32_t)b >> 31) | 0x80000000u);
}

static inline uint64_t f64_key(double d) {
  if (d != d) return UINT64_MAX;
  if (d == 0) d = 0;
  uint64_t b;
  memcpy(&b, &d, 8);
  return (b >> 63) ? ~b : (b | (1ull << 63));
}

/* the key of one element; integers biased by their own width so narrow
 * types keep their high key bytes constant (the radix skips those) */
static inline uint64_t key_at(weft_dtype t, const char* p) {
  switch (t) {
    case WEFT_BOOL: return *(const uint8_t*)p != 0;
    case WEFT_UINT8: return *(const uint8_t*)p;
    case WEFT_INT8: return (uint64_t)(*(const int8_t*)p + 128);
    case WEFT_INT16: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(v + 32768); }
    case WEFT_INT32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)((int64_t)v + 2147483648ll); }
    case WEFT_INT64: { uint64_t v; memcpy(&v, p, 8); return v ^ (1ull << 63); }
    case WEFT_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return f32_key(weft__f16_to_f32(h)); }
    case WEFT_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); return f32_key(weft__bf16_to_f32(h)); }
    case WEFT_FLOAT32: { float f; memcpy(&f, p, 4); return f32_key(f); }
    default: { double d; memcpy(&d, p, 8); return f64_key(d); }
  }
}

/* flipping a 32-bit-or-narrower key keeps it below 2^32 (and its high bytes constant) */
static inline uint64_t key_mask(weft_dtype t) {
  return t == WEFT_INT64 || t == WEFT_FLOAT64 ? UINT64_MAX : 0xFFFFFFFFu;
}

void weft__sort_keys(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, bool flip, weft_sort_pair* p) {
  uint64_t m = flip ? key_mask(t) : 0;
  if (t == WEFT_FLOAT32 && xs == 4) { /* the common case, without the switch */
    const float* f = (const float*)(const void*)x;
    for (size_t j = 0; j < n; j++) p[j] = (weft_sort_pair){f32_key(f[j]) ^ m, j};
    return;
  }
  for (size_t j = 0; j < n; j++) p[j] = (weft_sort_pair){key_at(t, x + (ptrdiff_t)j * xs) ^ m, j};
}

static inline bool less(weft_sort_pair a, weft_sort_pair b) {
  return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

static void insertion_sort(size_t n, weft_sort_pair* p) {
  for (size_t i = 1; i < n; i++) {
    weft_sort_pair v = p[i];
    size_t j = i;
    while (j > 0 && less(v, p[j - 1])) {
      p[j] = p[j - 1];
      j--;
    }
    p[j] = v;
  }
}

/* LSD radix: one histogram pass counts all 8 key bytes; a byte with a single
 * value over the line is skipped. Each pass is stable, so pairs that start in
 * index order end ordered by (key, idx). */
void weft__sort_pairs(size_t n, weft_sort_pair* p, weft_sort_pair* tmp) {
  if (n < 32) {
    insertion_sort(n, p);
    return;
  }
  static const int B = 8;
  size_t hist[8][256];
  memset(hist, 0, sizeof hist);
  for (size_t j = 0; j < n; j++) {
    uint64_t k = p[j].key;
    for (int b = 0; b < B; b++) hist[b][(k >> (8 * b)) & 255]++;
  }
  weft_sort_pair *src = p, *dst = tmp;
  for (int b = 0; b < B; b++) {
    size_t* h = hist[b];
    if (h[(src[0].key >> (8 * b)) & 255] == n) continue;
    size_t sum = 0;
    for (int v = 0; v < 256; v++) {
      size_t c = h[v];
      h[v] = sum;
      sum += c;
    }
    for (size_t j = 0; j < n; j++) dst[h[(src[j].key >> (8 * b)) & 255]++] = src[j];
    weft_sort_pair* s = src;
    src = dst;
    dst = s;
  }
  if (src != p) memcpy(p, src, n * sizeof *p);
}

static void sift_down(weft_sort_pair* h, size_t k, size_t i) {
  weft_sort_pair v = h[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= k) break;
    if (c + 1 < k && less(h[c], h[c + 1])) c++;
    if (!less(v, h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = v;
}

/* the heap's pairs sorted in place (ascending by (key, idx)) */
static void heap_to_sorted(weft_sort_pair* best, size_t k) {
  for (size_t m = k; m > 1; m--) { /* the largest to the end */
    weft_sort_pair v = best[0];
    best[0] = best[m - 1];
    best[m - 1] = v;
    sift_down(best, m - 1, 0);
  }
}

static void heap_init(weft_sort_pair* best, size_t k) {
  for (size_t i = k / 2; i-- > 0;) sift_down(best, k, i);
}

/* float32 with contiguous elements: keys made as the scan goes, and four at
 * a time tested against the heap's top before any of them is looked at */
static void select_f32(size_t n, const float* x, uint32_t m, size_t k, weft_sort_pair* best) {
  for (size_t j = 0; j < k; j++) best[j] = (weft_sort_pair){f32_key(x[j]) ^ m, j};
  heap_init(best, k);
  uint64_t top = best[0].key;
  size_t j = k;
  for (; j + 4 <= n; j += 4) {
    uint64_t k0 = f32_key(x[j]) ^ m, k1 = f32_key(x[j + 1]) ^ m, k2 = f32_key(x[j + 2]) ^ m,
             k3 = f32_key(x[j + 3]) ^ m;
    if ((k0 < top) | (k1 < top) | (k2 < top) | (k3 < top)) {
      uint64_t ks[4] = {k0, k1, k2, k3};
      for (size_t i = 0; i < 4; i++) {
        if (ks[i] < top) {
          best[0] = (weft_sort_pair){ks[i], j + i};
          sift_down(best, k, 0);
          top = best[0].key;
        }
      }
    }
  }
  for (; j < n; j++) {
    uint64_t key = f32_key(x[j]) ^ m;
    if (key < top) {
      best[0] = (weft_sort_pair){key, j};
      sift_down(best, k, 0);
      top = best[0].key;
    }
  }
  heap_to_sorted(best, k);
}

void weft__sort_select_keys(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, bool flip, size_t k,
                            weft_sort_pair* best) {
  uint64_t m = flip ? key_mask(t) : 0;
  if (t == WEFT_FLOAT32 && xs == 4) {
    select_f32(n, (const float*)(const void*)x, (uint32_t)m, k, best);
    return;
  }
  for (size_t j = 0; j < k; j++) best[j] = (weft_sort_pair){key_at(t, x + (ptrdiff_t)j * xs) ^ m, j};
  heap_init(best, k);
  uint64_t top = best[0].key;
  for (size_t j = k; j < n; j++) {
    uint64_t key = key_at(t, x + (ptrdiff_t)j * xs) ^ m;
    if (key < top) {
      best[0] = (weft_sort_pair){key, j};
      sift_down(best, k, 0);
      top = best[0].key;
    }
  }
  heap_to_sorted(best, k);
}

/* ---- radix select ---- */

static unsigned bit_length(uint64_t v) {
  unsigned b = 0;
  while (v) {
    v >>= 1;
    b++;
  }
  return b;
}

/* One round over the m candidates c: those in buckets below the k-th's go
 * to best (in order), those in its bucket to next (in order); returns how
 * many went to best (*nm: to next). */
static size_t select_round(size_t m, const weft_sort_pair* c, size_t need, uint64_t lo, unsigned shift,
                           weft_sort_pair* best, weft_sort_pair* next, size_t* nm) {
  size_t hist[256] = {0};
  for (size_t j = 0; j < m; j++) hist[(c[j].key - lo) >> shift]++;
  size_t below = 0;
  unsigned b = 0;
  while (below + hist[b] < need) below += hist[b++];
  size_t taken = 0, kept = 0;
  for (size_t j = 0; j < m; j++) {
    uint64_t d = (c[j].key - lo) >> shift;
    if (d < b) best[taken++] = c[j];
    else if (d == b) next[kept++] = c[j];
  }
  *nm = kept;
  return taken;
}

void weft__sort_select_radix(size_t n, weft_sort_pair* p, size_t k, bool sorted, weft_sort_pair* best,
                             weft_sort_pair* scratch) {
  weft_sort_pair *c = p, *other = scratch; /* the candidates, and where the next round's go */
  size_t m = n, need = k, got = 0;
  while (need < m) {
    uint64_t lo = c[0].key, hi = c[0].key;
    for (size_t j = 1; j < m; j++) {
      lo = c[j].key < lo ? c[j].key : lo;
      hi = c[j].key > hi ? c[j].key : hi;
    }
    if (lo == hi) break; /* all equal: the first need of them */
    unsigned bits = bit_length(hi - lo), shift = bits > 8 ? bits - 8 : 0;
    size_t nm;
    size_t taken = select_round(m, c, need, lo, shift, best + got, other, &nm);
    got += taken;
    need -= taken;
    weft_sort_pair* t = c;
    c = other;
    other = t;
    m = nm;
  }
  memcpy(best + got, c, need * sizeof *c);
  /* equal keys all came through one bucket in index order: a stable sort by key is by (key, idx) */
  if (sorted) weft__sort_pairs(k, best, scratch);
}

/* ---- sampled select ---- */

#define SAMPLE 128

/* the key of element j, the float32 common case without the switch */
static inline uint64_t key_j(weft_dtype t, const char* x, ptrdiff_t xs, size_t j) {
  if (t == WEFT_FLOAT32 && xs == 4) return f32_key(((const float*)(const void*)x)[j]);
  return key_at(t, x + (ptrdiff_t)j * xs);
}

/* A key at or above the k-th smallest with high probability: the r-th
 * smallest of SAMPLE evenly spaced elements, r the expected count plus two
 * standard deviations and two. UINT64_MAX when the sample cannot tell. */
static uint64_t sample_bound(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, uint64_t m, size_t k,
                             weft_sort_pair* p, weft_sort_pair* scratch) {
  double e = (double)k * SAMPLE / (double)n;
  size_t r = (size_t)ceil(e + 2 * sqrt(e) + 2);
  if (n < 4 * SAMPLE || r >= SAMPLE) return UINT64_MAX;
  for (size_t i = 0; i < SAMPLE; i++) p[i] = (weft_sort_pair){key_j(t, x, xs, i * (n / SAMPLE)) ^ m, i};
  /* the r smallest into scratch, the select's own scratch after them (n >= 4 SAMPLE) */
  weft__sort_select_radix(SAMPLE, p, r, false, scratch, scratch + SAMPLE);
  uint64_t bound = 0;
  for (size_t i = 0; i < r; i++) bound = scratch[i].key > bound ? scratch[i].key : bound;
  return bound;
}

void weft__sort_select_sampled(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, bool flip, size_t k, bool sorted,
                               weft_sort_pair* best, weft_sort_pair* p, weft_sort_pair* scratch) {
  uint64_t m = flip ? key_mask(t) : 0;
  uint64_t bound = sample_bound(t, n, x, xs, m, k, p, scratch);
  size_t c = n;
  if (bound != UINT64_MAX) {
    /* the candidates at or below the bound, in index order, without a branch */
    c = 0;
    for (size_t j = 0; j < n; j++) {
      uint64_t key = key_j(t, x, xs, j) ^ m;
      p[c] = (weft_sort_pair){key, j};
      c += key <= bound;
    }
  }
  if (c < k || bound == UINT64_MAX) { /* the sample was unlucky (or too small to ask): every element */
    weft__sort_keys(t, n, x, xs, flip, p);
    c = n;
  }
  weft__sort_select_radix(c, p, k, sorted, best, scratch);
}
