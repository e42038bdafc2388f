/* The blocked 2-D transpose driver: cut the (height x width) input into
 * blocks that fit L1 and hand them to weft_parallel_for (XNNPACK
 * transpose-nd style). Blocks are 16 input rows by 1 KB of each row: long
 * contiguous input runs and 16-element output runs (one cache line for
 * x32) measured ~2x faster than 32x32 squares for NCHW -> NHWC with C = 64.
 * Blocks are numbered row-major over the output so one chunk writes
 * neighbouring output lines. */
#include "kernels/kernels.h"
#include "core/internal.h"
#include "weft/parallel.h"

#define BLOCK_ROWS 16
#define BLOCK_ROW_BYTES 1024
/* elements per parallel chunk at least */
#define GRAIN_ELEMS 32768

struct tctx {
  weft_transpose_fn* fn;
  const char* in;
  char* out;
  size_t es, in_stride, out_stride, width, height, nbi; /* nbi: blocks along height */
  size_t bw;                                            /* block width in elements */
};

static weft_status run_blocks(void* p, int64_t begin, int64_t end) {
  const struct tctx* c = p;
  for (int64_t b = begin; b < end; b++) {
    size_t bj = (size_t)b / c->nbi, bi = (size_t)b % c->nbi; /* output row block, then column block */
    size_t i = bi * BLOCK_ROWS, j = bj * c->bw;
    size_t h = c->height - i < BLOCK_ROWS ? c->height - i : BLOCK_ROWS;
    size_t w = c->width - j < c->bw ? c->width - j : c->bw;
    c->fn(c->in + i * c->in_stride + j * c->es, c->out + j * c->out_stride + i * c->es, c->in_stride,
          c->out_stride, w, h);
  }
  return WEFT_OK;
}

weft_transpose_fn* weft__transpose_kernel(const weft_kernels* k, size_t elem_size) {
  switch (elem_size) {
    case 1: return k->x8_transposec;
    case 2: return k->x16_transposec;
    case 4: return k->x32_transposec;
    case 8: return k->x64_transposec;
    default: return NULL;
  }
}

static size_t block_width(size_t elem_size) { return BLOCK_ROW_BYTES / (elem_size ? elem_size : 1); }

int64_t weft__transpose_2d_blocks(size_t elem_size, size_t width, size_t height, int64_t* grain) {
  size_t bw = block_width(elem_size);
  if (grain) *grain = GRAIN_ELEMS / (int64_t)(BLOCK_ROWS * bw);
  return (int64_t)(((height + BLOCK_ROWS - 1) / BLOCK_ROWS) * ((width + bw - 1) / bw));
}

weft_status weft__transpose_2d(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                               size_t in_stride, size_t out_stride, size_t width, size_t height) {
  if (width == 0 || height == 0) return WEFT_OK;
  size_t bw = block_width(elem_size);
  struct tctx c = {weft__transpose_kernel(k, elem_size), in, out, elem_size, in_stride, out_stride,
                   width, height, (height + BLOCK_ROWS - 1) / BLOCK_ROWS, bw};
  if (!c.fn) return weft__error(WEFT_INTERNAL, "transpose: no kernel for %zu-byte elements", elem_size);
  int64_t grain;
  int64_t nblocks = weft__transpose_2d_blocks(elem_size, width, height, &grain);
  return weft_parallel_for(0, nblocks, grain, run_blocks, &c);
}
