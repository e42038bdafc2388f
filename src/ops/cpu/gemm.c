/* The GEMM driver: BLIS's loop nest over the micro-kernels of src/kernels
 * (gemm.c), with XNNPACK's 2-D output tiling for the pool.
 *
 *   for ic0 in M, MB rows at a time          (bounds the packed A)
 *     for pc in K, blocks of <= KC           (C += A[:, pc] B[pc, :] after the first)
 *       for jc in N, NC columns at a time
 *         pack B[pc, jc block] into NR-column panels, and with the first
 *         block A[ic0 block, pc] into MR-row panels     (one parallel_for)
 *         parallel over tiles (MC rows x NS columns):
 *           for jr NR panel: for ir MR panel: micro-kernel
 *
 * A panel is kc x MR values (column k's MR rows together), zero-padded
 * past m; a B panel kc x NR, zero-padded past n. The packers read A and B
 * through their strides, so a transposed operand (x @ w.T) is never copied
 * first; each picks its loop order by which stride is unit. Inside a tile
 * the B micro-panel (KC x NR) stays in L1 while the A block (MC x KC) is
 * reused from L2. Tiles are numbered row block first, so a thread's
 * consecutive tiles share its A block. A product of a few rows (or columns)
 * goes to the matrix-vector driver (gemv.c) instead.
 *
 * When B packed whole fits FULL_B_MAX (or comes packed: a weight kept by
 * ops/packed_cache.c), the loop nest is turned inside out as XNNPACK's
 * pthreadpool does it (parallelize_2d_tile_2d over the output): B is
 * packed once, then one parallel_for over the output tiles, each running
 * every K block itself (its A rows packed per block into the chunk's
 * scratch, or read in place: in_place_lda). One fork/join instead of two
 * per K block: on 2 threads the waits at each join were what the second
 * thread lost. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemv.h"
#include "weft/parallel.h"

#define F32_MR 4
#define F32_NR 8
#define F64_MR 4
#define F64_NR 4
#define KC 256
#define MC_PANELS 16   /* MC = 16 MR-row panels (64 rows) */
#define NC 4096        /* columns of B packed at once */
#define MB 4096        /* rows of A packed at once */
#define PACK_GRAIN 16384 /* values per packing chunk at least */
#define PARALLEL_MIN_MACS (1 << 18) /* multiply-adds of the smallest product worth splitting */
#define FULL_B_MAX (16 << 20) /* bytes of B packed whole (gemm_full) at most */

void weft__gemm_tile(weft_dtype dtype, int* mr, int* nr, int* kc) {
  *mr = dtype == WEFT_FLOAT64 ? F64_MR : F32_MR;
  *nr = dtype == WEFT_FLOAT64 ? F64_NR : F32_NR;
  *kc = KC;
}

/* ---- packing: one template per element type ---- */

struct pack_ctx {
  const char* src; /* element (0, 0) of the block */
  ptrdiff_t rs, cs; /* strides of the panel's "row" (the MR / NR side) and of k */
  int64_t rows, kc;  /* valid rows (m or n side) and depth */
  int r;             /* MR or NR */
  void* dst;
};

/* Panel q holds rows [q r, q r + r) at dst + q * kc * r: dst[k * r + i].
 * A full panel whose rows are contiguous along k (x @ w.T's w, a row-major
 * A) is an r x kc transpose: the transpose kernel's vector tiles, not one
 * value at a time. */
#define DEF_PACK(T, name)                                                                \
  static weft_status name(void* p, int64_t begin, int64_t end) {                         \
    const struct pack_ctx* c = p;                                                        \
    const T* s = (const T*)c->src;                                                       \
    const int r = c->r;                                                                  \
    weft_transpose_fn* tr = weft__transpose_kernel(weft__kernels(), sizeof(T));         \
    for (int64_t q = begin; q < end; q++) {                                              \
      T* d = (T*)c->dst + q * c->kc * r;                                                 \
      int64_t i0 = q * r, nv = c->rows - i0 < r ? c->rows - i0 : r;                      \
      if (c->cs == 1 && c->rs > 0 && nv == r && tr) {                                    \
        tr(s + i0 * c->rs, d, sizeof(T) * (size_t)c->rs, sizeof(T) * (size_t)r,          \
           (size_t)c->kc, (size_t)r);                                                    \
        continue;                                                                        \
      }                                                                                  \
      if (c->rs == 1 && nv == r) { /* rows contiguous: copy r at a time, with constant \
                                      counts (wasm's memcpy is a call) */               \
        for (int64_t k = 0; k < c->kc; k++) {                                            \
          const T* sk = s + i0 + k * c->cs;                                              \
          if (r == 8)                                                                    \
            for (int j = 0; j < 8; j++) d[k * 8 + j] = sk[j];                            \
          else if (r == 4)                                                               \
            for (int j = 0; j < 4; j++) d[k * 4 + j] = sk[j];                            \
          else                                                                           \
            memcpy(d + k * r, sk, sizeof(T) * (size_t)r);                                \
        }                                                                                \
        continue;                                                                        \
      }                                                                                  \
      for (int64_t i = 0; i < nv; i++) {                                                 \
        const T* si = s + (i0 + i) * c->rs;                                              \
        for (int64_t k = 0; k < c->kc; k++) d[k * r + i] = si[k * c->cs];                \
      }                                                                                  \
      for (int64_t i = nv; i < r; i++)                                                   \
        for (int64_t k = 0; k < c->kc; k++) d[k * r + i] = 0;                            \
    }                                                                                    \
    return WEFT_OK;                                                                      \
  }
DEF_PACK(float, pack_f32)
DEF_PACK(double, pack_f64)

/* A's panels [0, na), then B's: both packers in one parallel_for */
struct pack2_ctx {
  weft_range_fn fn;
  struct pack_ctx a, b;
  int64_t na;
};

static weft_status run_packs(void* p, int64_t begin, int64_t end) {
  struct pack2_ctx* c = p;
  weft_status s = WEFT_OK;
  if (begin < c->na) s = c->fn(&c->a, begin, end < c->na ? end : c->na);
  if (s == WEFT_OK && end > c->na) s = c->fn(&c->b, begin > c->na ? begin - c->na : 0, end - c->na);
  return s;
}

/* Packs the A block (when a.dst) and the B block, parallel over panels
 * unless serial. */
static weft_status pack(weft_range_fn fn, struct pack_ctx a, struct pack_ctx b, bool serial) {
  struct pack2_ctx c = {fn, a, b, a.dst ? (a.rows + a.r - 1) / a.r : 0};
  int64_t nb = (b.rows + b.r - 1) / b.r, per = b.kc * b.r;
  int64_t grain = serial ? INT64_MAX : PACK_GRAIN / (per > 0 ? per : 1);
  return weft_parallel_for(0, c.na + nb, grain < 1 ? 1 : grain, run_packs, &c);
}

/* ---- the tiles ---- */

struct tile_ctx {
  const weft_kernels* kt;
  bool f64;
  int mr, nr;
  int64_t m, nc, kc;   /* rows of this ic0 block, columns of this jc block, depth */
  int64_t mc, ns;      /* tile rows and columns */
  int64_t ntn;         /* tiles along n */
  const char *apack, *bpack;
  size_t lda;          /* 0: apack holds MR-row panels; else A's rows in place, lda elements apart */
  char* c;             /* C at (ic0, jc) */
  ptrdiff_t c_rs;      /* elements */
  size_t es;
  double alpha;
  int accumulate;
};

/* float32: all the tile's rows against one B panel per call
 * (f32_gemm_4x8_rows), from A's panels or A's rows in place */
static weft_status run_tiles(void* p, int64_t begin, int64_t end) {
  const struct tile_ctx* t = p;
  struct weft_f32_gemm_params p32 = {.alpha = (float)t->alpha, .accumulate = t->accumulate, .lda = t->lda};
  struct weft_f64_gemm_params p64 = {.alpha = t->alpha, .accumulate = t->accumulate};
  for (int64_t tile = begin; tile < end; tile++) {
    int64_t i0 = (tile / t->ntn) * t->mc, j0 = (tile % t->ntn) * t->ns;
    int64_t i1 = i0 + t->mc < t->m ? i0 + t->mc : t->m, j1 = j0 + t->ns < t->nc ? j0 + t->ns : t->nc;
    for (int64_t j = j0; j < j1; j += t->nr) {
      size_t nc = (size_t)(j1 - j < t->nr ? j1 - j : t->nr);
      const char* bp = t->bpack + (size_t)(j / t->nr * t->kc * t->nr) * t->es;
      if (!t->f64) { /* i0 is a multiple of MR: panel i0 / MR starts i0 x kc values in */
        const char* ap = t->apack + (size_t)i0 * (t->lda ? t->lda : (size_t)t->kc) * t->es;
        t->kt->f32_gemm_4x8_rows((size_t)(i1 - i0), nc, (size_t)t->kc, (const float*)ap, (const float*)bp,
                                 (float*)(t->c + (size_t)(i0 * t->c_rs + j) * t->es), (size_t)t->c_rs, &p32);
        continue;
      }
      for (int64_t i = i0; i < i1; i += t->mr) {
        size_t mr = (size_t)(i1 - i < t->mr ? i1 - i : t->mr);
        const char* ap = t->apack + (size_t)(i / t->mr * t->kc * t->mr) * t->es;
        t->kt->f64_gemm_4x4(mr, nc, (size_t)t->kc, (const double*)ap, (const double*)bp,
                            (double*)(t->c + (size_t)(i * t->c_rs + j) * t->es), (size_t)t->c_rs, &p64);
      }
    }
  }
  return WEFT_OK;
}

/* With more than one column of tiles (ntn), a float32 A with unit column
 * stride (each row's k values contiguous) is read in place by the
 * micro-kernel, as XNNPACK's GEMMs read their input, instead of packed
 * again by every tile of its rows ([64, 784] x [784, 256]: A packed 4 times
 * on 1 thread, 8 on 2). A packed A for all tiles at once (42edf62) left
 * the cache on a large conv. With one column its rows are packed once, and
 * the packed panel's constant offsets beat the in-place rows' address adds
 * (mm 512^3). Returns A's row stride, or 0: packed. */
static size_t in_place_lda(bool f64, weft_gemm_operand a, int64_t ntn) {
  return !f64 && ntn > 1 && a.cs == 1 && a.rs > 0 ? (size_t)a.rs : 0;
}

static void zero_c(char* c, int64_t m, int64_t n, ptrdiff_t rs, size_t es) {
  for (int64_t i = 0; i < m; i++) memset(c + (size_t)(i * rs) * es, 0, (size_t)n * es);
}

/* ---- B packed whole, and tiles that run all of K (XNNPACK's 2-D tiling) ---- */

/* K in equal blocks of at most KC (784 = 4 x 196, not 3 x 256 + 16) */
static int64_t k_block(int64_t k) {
  int64_t nkb = (k + KC - 1) / KC;
  return (k + nkb - 1) / nkb;
}

static int64_t round_up(int64_t v, int r) { return (v + r - 1) / r * r; }

/* All of B (k x n) as weft__gemm_pack_b lays it out: K block pc's panels at
 * pc x npad values, panel q of it at q x kc x NR; parallel over panels. */
struct pack_b_all {
  weft_range_fn packer;
  weft_gemm_operand b;
  int64_t n, k, kcb, npad;
  int nr;
  size_t es;
  char* dst;
};

static weft_status run_pack_b_all(void* p, int64_t begin, int64_t end) {
  const struct pack_b_all* c = p;
  for (int64_t pc = 0; pc < c->k; pc += c->kcb) {
    int64_t kc = c->k - pc < c->kcb ? c->k - pc : c->kcb;
    struct pack_ctx pb = {(const char*)c->b.p + (ptrdiff_t)c->es * pc * c->b.rs, c->b.cs, c->b.rs, c->n, kc, c->nr,
                          c->dst + (size_t)(pc * c->npad) * c->es};
    c->packer(&pb, begin, end);
  }
  return WEFT_OK;
}

static weft_status pack_b_whole(weft_dtype dtype, int64_t k, int64_t n, weft_gemm_operand b, void* dst, bool serial) {
  int mr, nr, kcmax;
  weft__gemm_tile(dtype, &mr, &nr, &kcmax);
  struct pack_b_all c = {dtype == WEFT_FLOAT64 ? pack_f64 : pack_f32, b, n, k, k_block(k), round_up(n, nr), nr,
                         dtype == WEFT_FLOAT64 ? 8 : 4, dst};
  int64_t grain = serial ? INT64_MAX : PACK_GRAIN / (k * nr > 0 ? k * nr : 1);
  return weft_parallel_for(0, c.npad / nr, grain < 1 ? 1 : grain, run_pack_b_all, &c);
}

/* Output tiles (MC rows x NS columns) over all of C, each running every K
 * block: its A rows packed per block into the chunk's scratch, B's panels
 * from the whole packed B. One fork/join for the product. */
struct full_ctx {
  struct tile_ctx t; /* one tile at a time: m, nc, apack, bpack, c, accumulate set per (tile, K block) */
  weft_range_fn packer;
  weft_gemm_operand a;
  int64_t m, n, k, kcb, npad, ntn;
  const char* bpacked;
  char* c;
  bool accumulate;
};

static weft_status run_full_tiles(void* p, int64_t begin, int64_t end) {
  const struct full_ctx* f = p;
  struct tile_ctx t = f->t;
  char* apack = t.lda ? NULL : malloc((size_t)(round_up(t.mc, t.mr) * f->kcb) * t.es);
  if (!t.lda && !apack) return weft__error(WEFT_OUT_OF_MEMORY, "gemm: out of memory (packing)");
  for (int64_t tile = begin; tile < end; tile++) {
    int64_t i0 = tile / f->ntn * t.mc, j0 = tile % f->ntn * t.ns;
    t.m = f->m - i0 < t.mc ? f->m - i0 : t.mc;
    t.nc = f->n - j0 < t.ns ? f->n - j0 : t.ns;
    t.c = f->c + (size_t)(i0 * t.c_rs + j0) * t.es;
    for (int64_t pc = 0; pc < f->k; pc += f->kcb) {
      t.kc = f->k - pc < f->kcb ? f->k - pc : f->kcb;
      const char* a0 = (const char*)f->a.p + (ptrdiff_t)t.es * (i0 * f->a.rs + pc * f->a.cs);
      if (!t.lda) {
        struct pack_ctx pa = {a0, f->a.rs, f->a.cs, t.m, t.kc, t.mr, apack};
        f->packer(&pa, 0, (t.m + t.mr - 1) / t.mr);
      }
      t.apack = t.lda ? a0 : apack;
      t.bpack = f->bpacked + (size_t)(pc * f->npad + j0 * t.kc) * t.es;
      t.accumulate = f->accumulate || pc > 0;
      run_tiles(&t, 0, 1); /* one tile: mc = m rows, ns = nc columns */
    }
  }
  free(apack);
  return WEFT_OK;
}

static weft_status gemm_blocks(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k,
                               double alpha, weft_gemm_operand a, weft_gemm_operand b, const char* bpacked,
                               bool accumulate, void* c, ptrdiff_t c_rs);

weft_status weft__gemm(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha,
                       weft_gemm_operand a, weft_gemm_operand b, bool accumulate, void* c, ptrdiff_t c_rs,
                       ptrdiff_t c_cs) {
  if (dtype != WEFT_FLOAT32 && dtype != WEFT_FLOAT64)
    return weft__error(WEFT_INTERNAL, "gemm: no kernel for dtype %s", weft_dtype_name(dtype));
  if (m <= 0 || n <= 0) return WEFT_OK;
  weft_status gs;
  if (weft__gemv(kt, dtype, m, n, k, alpha, a, b, accumulate, NULL, c, c_rs, c_cs, &gs)) return gs;
  if (n == 1) c_cs = 1;
  if (m == 1) c_rs = n;
  if (c_cs != 1) {
    if (c_rs != 1) return weft__error(WEFT_INTERNAL, "gemm: C needs a unit stride");
    /* column-major C: C^T = B^T A^T */
    weft_gemm_operand at = {b.p, b.cs, b.rs}, bt = {a.p, a.cs, a.rs};
    return weft__gemm(kt, dtype, n, m, k, alpha, at, bt, accumulate, c, c_cs, 1);
  }
  const size_t es = dtype == WEFT_FLOAT64 ? 8 : 4;
  if (k <= 0) {
    if (!accumulate) zero_c(c, m, n, c_rs, es);
    return WEFT_OK;
  }
  return gemm_blocks(kt, dtype, m, n, k, alpha, a, b, NULL, accumulate, c, c_rs);
}

/* Tiles over all of C, ~4 per thread: MC rows, columns cut to make the
 * count, NS between 4 NR and 512 */
static int64_t tile_cols(int64_t m, int64_t n, int64_t mc, int nr, int threads) {
  int64_t ntm = (m + mc - 1) / mc, want = 4 * (int64_t)threads, ntn_want = (want + ntm - 1) / ntm;
  int64_t ns = round_up((n + ntn_want - 1) / ntn_want, nr);
  return ns < 4 * nr ? 4 * nr : ns > 512 ? 512 : ns;
}

/* The product as output tiles that each run all of K (one fork/join; B
 * packed whole first unless bpacked): a product whose whole packed B is
 * small enough, or comes packed. */
static weft_status gemm_full(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k, double alpha,
                             weft_gemm_operand a, weft_gemm_operand b, const char* bpacked, bool accumulate, void* c,
                             ptrdiff_t c_rs, bool serial, int threads) {
  const size_t es = dtype == WEFT_FLOAT64 ? 8 : 4;
  int mr, nr, kcmax;
  weft__gemm_tile(dtype, &mr, &nr, &kcmax);
  char* own = NULL;
  if (!bpacked) {
    own = malloc(weft__gemm_packed_b_bytes(dtype, k, n));
    if (!own) return weft__error(WEFT_OUT_OF_MEMORY, "gemm: out of memory (%zu bytes for packing)",
                                 weft__gemm_packed_b_bytes(dtype, k, n));
    weft_status s = pack_b_whole(dtype, k, n, b, own, serial);
    if (s != WEFT_OK) {
      free(own);
      return s;
    }
  }
  int64_t mc = (int64_t)MC_PANELS * mr, ns = tile_cols(m, n, mc, nr, threads);
  int64_t ntn = (n + ns - 1) / ns;
  struct full_ctx f = {{kt, dtype == WEFT_FLOAT64, mr, nr, 0, 0, 0, mc, ns, 1, NULL, NULL,
                        in_place_lda(dtype == WEFT_FLOAT64, a, ntn), NULL, c_rs, es, alpha, 0},
                       dtype == WEFT_FLOAT64 ? pack_f64 : pack_f32, a, m, n, k, k_block(k), round_up(n, nr), ntn,
                       bpacked ? bpacked : own, c, accumulate};
  int64_t ntiles = (m + mc - 1) / mc * f.ntn;
  int64_t per_tile = (mc < m ? mc : m) * (ns < n ? ns : n) * k, grain = 65536 / (per_tile > 0 ? per_tile : 1);
  weft_status s = weft_parallel_for(0, ntiles, serial ? INT64_MAX : grain < 1 ? 1 : grain, run_full_tiles, &f);
  free(own);
  return s;
}

/* The loop nest (see the top), C row-major; B's panels from bpacked
 * (weft__gemm_pack_b's layout) when not NULL, else packed here. */
static weft_status gemm_blocks(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k,
                               double alpha, weft_gemm_operand a, weft_gemm_operand b, const char* bpacked,
                               bool accumulate, void* c, ptrdiff_t c_rs) {
  const size_t es = dtype == WEFT_FLOAT64 ? 8 : 4;
  int mr, nr, kcmax;
  weft__gemm_tile(dtype, &mr, &nr, &kcmax);
  /* a small product stays on the calling thread: its fork/joins cost more than the worker's share of
   * the work, e.g. a training step's [64, 10] x [10, 256] */
  bool serial = (double)m * (double)n * (double)k < PARALLEL_MIN_MACS;
  int threads = serial || weft_in_parallel_region() ? 1 : weft_get_num_threads();
  if (bpacked || (m <= MB && weft__gemm_packed_b_bytes(dtype, k, n) <= FULL_B_MAX))
    return gemm_full(kt, dtype, m, n, k, alpha, a, b, bpacked, accumulate, c, c_rs, serial, threads);
  weft_range_fn packer = dtype == WEFT_FLOAT64 ? pack_f64 : pack_f32;
  int64_t mb = m < MB ? m : MB, nb = n < NC ? n : NC, kcb = k_block(k);
  size_t abytes = (size_t)(round_up(mb, mr) * kcb) * es, bbytes = bpacked ? 0 : (size_t)(round_up(nb, nr) * kcb) * es;
  char* apack = malloc(abytes);
  char* bpack = bbytes ? malloc(bbytes) : NULL;
  if (!apack || (bbytes && !bpack)) {
    free(apack);
    free(bpack);
    return weft__error(WEFT_OUT_OF_MEMORY, "gemm: out of memory (%zu bytes for packing)", abytes + bbytes);
  }
  weft_status s = WEFT_OK;
  int64_t npad = round_up(n, nr);
  for (int64_t ic0 = 0; ic0 < m && s == WEFT_OK; ic0 += MB) {
    int64_t mrows = m - ic0 < MB ? m - ic0 : MB;
    for (int64_t pc = 0; pc < k && s == WEFT_OK; pc += kcb) {
      int64_t kc = k - pc < kcb ? k - pc : kcb;
      for (int64_t jc = 0; jc < n && s == WEFT_OK; jc += NC) {
        int64_t ncols = n - jc < NC ? n - jc : NC;
        /* A[ic0 block, pc] once per pc (with the first B block), B[pc, jc] unless packed before */
        struct pack_ctx pa = {(const char*)a.p + (ptrdiff_t)es * (ic0 * a.rs + pc * a.cs), a.rs, a.cs, mrows, kc,
                              mr, jc == 0 ? apack : NULL};
        struct pack_ctx pb = {(const char*)b.p + (ptrdiff_t)es * (pc * b.rs + jc * b.cs), b.cs, b.rs,
                              bpacked ? 0 : ncols, kc, nr, bpack};
        s = pack(packer, pa, pb, serial);
        if (s != WEFT_OK) break;
        int64_t mc = (int64_t)MC_PANELS * mr, ntm = (mrows + mc - 1) / mc, ns = tile_cols(mrows, ncols, mc, nr, threads);
        int64_t ntn = (ncols + ns - 1) / ns;
        /* the packed B's block (pc, jc): the K blocks before it hold pc x npad values, its panels
         * left of jc jc x kc */
        const char* bp = bpacked ? bpacked + (size_t)(pc * npad + jc * kc) * es : bpack;
        struct tile_ctx t = {kt, dtype == WEFT_FLOAT64, mr, nr, mrows, ncols, kc, mc, ns, ntn, apack, bp, 0,
                             (char*)c + (size_t)(ic0 * c_rs + jc) * es, c_rs, es, alpha,
                             accumulate || pc > 0};
        /* a tile of at least ~64K multiply-adds per chunk */
        int64_t per_tile = (mc < mrows ? mc : mrows) * (ns < ncols ? ns : ncols) * kc;
        int64_t grain = 65536 / (per_tile > 0 ? per_tile : 1);
        s = weft_parallel_for(0, ntm * ntn, serial ? INT64_MAX : grain < 1 ? 1 : grain, run_tiles, &t);
      }
    }
  }
  free(apack);
  free(bpack);
  return s;
}

size_t weft__gemm_packed_b_bytes(weft_dtype dtype, int64_t k, int64_t n) {
  int mr, nr, kc;
  weft__gemm_tile(dtype, &mr, &nr, &kc);
  return (size_t)(k * round_up(n, nr)) * (dtype == WEFT_FLOAT64 ? 8 : 4);
}

weft_status weft__gemm_pack_b(weft_dtype dtype, int64_t k, int64_t n, weft_gemm_operand b, void* dst) {
  return pack_b_whole(dtype, k, n, b, dst, false);
}

weft_status weft__gemm_packed(const weft_kernels* kt, weft_dtype dtype, int64_t m, int64_t n, int64_t k,
                              double alpha, weft_gemm_operand a, const void* bpacked, bool accumulate, void* c,
                              ptrdiff_t c_rs) {
  if (m <= 0 || n <= 0 || k <= 0 || (dtype != WEFT_FLOAT32 && dtype != WEFT_FLOAT64))
    return weft__error(WEFT_INTERNAL, "gemm: a packed B needs a float product with m, n, k > 0");
  weft_gemm_operand none = {NULL, 0, 0};
  return gemm_blocks(kt, dtype, m, n, k, alpha, a, none, bpacked, accumulate, c, c_rs);
}

struct batch_ctx {
  const weft_kernels* kt;
  weft_dtype dtype;
  int64_t m, n, k;
  double alpha;
  weft_gemm_operand a, b;
  ptrdiff_t a_bs, b_bs, c_rs, c_cs, c_bs;
  bool accumulate;
  char* c;
  size_t es;
};

static weft_status run_batch(void* p, int64_t begin, int64_t end) {
  const struct batch_ctx* x = p;
  for (int64_t i = begin; i < end; i++) {
    weft_gemm_operand a = {(const char*)x->a.p + (ptrdiff_t)x->es * i * x->a_bs, x->a.rs, x->a.cs};
    weft_gemm_operand b = {(const char*)x->b.p + (ptrdiff_t)x->es * i * x->b_bs, x->b.rs, x->b.cs};
    weft_status s = weft__gemm(x->kt, x->dtype, x->m, x->n, x->k, x->alpha, a, b, x->accumulate,
                               x->c + (ptrdiff_t)x->es * i * x->c_bs, x->c_rs, x->c_cs);
    if (s != WEFT_OK) return s;
  }
  return WEFT_OK;
}

weft_status weft__gemm_batched(const weft_kernels* kt, weft_dtype dtype, int64_t batch, int64_t m, int64_t n,
                               int64_t k, double alpha, weft_gemm_operand a, ptrdiff_t a_bs, weft_gemm_operand b,
                               ptrdiff_t b_bs, bool accumulate, void* c, ptrdiff_t c_rs, ptrdiff_t c_cs,
                               ptrdiff_t c_bs) {
  struct batch_ctx x = {kt, dtype, m, n, k, alpha, a, b, a_bs, b_bs, c_rs, c_cs, c_bs, accumulate, c,
                        dtype == WEFT_FLOAT64 ? 8 : 4};
  if (batch <= 0) return WEFT_OK;
  int64_t work = m * n * (k > 0 ? k : 1);
  /* a large product keeps all threads busy by itself */
  if (batch == 1 || work >= (1 << 20)) return run_batch(&x, 0, batch);
  int64_t grain = (1 << 18) / (work > 0 ? work : 1);
  return weft_parallel_for(0, batch, grain < 1 ? 1 : grain, run_batch, &x);
}
