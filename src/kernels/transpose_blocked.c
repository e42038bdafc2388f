/* The blocked 2-D transpose driver: cut the (height x width) input into
 * square blocks small enough that a block's input rows and output rows stay
 * in L1, and hand the blocks to weft_parallel_for (XNNPACK transpose-nd
 * style). Blocks are numbered row-major over the output so one chunk writes
 * neighbouring output lines. */
#include "kernels/kernels.h"
#include "core/internal.h"
#include "weft/parallel.h"

/* block edge in elements: 4 KB (x32) .. 8 KB per block side pair */
#define BLOCK 32
/* blocks per parallel chunk at least: ~32K elements */
#define GRAIN_BLOCKS 32

struct tctx {
  weft_transpose_fn* fn;
  const char* in;
  char* out;
  size_t es, in_stride, out_stride, width, height, nbi; /* nbi: blocks along height */
};

static weft_status run_blocks(void* p, int64_t begin, int64_t end) {
  const struct tctx* c = p;
  for (int64_t b = begin; b < end; b++) {
    size_t bj = (size_t)b / c->nbi, bi = (size_t)b % c->nbi; /* output row block, then column block */
    size_t i = bi * BLOCK, j = bj * BLOCK;
    size_t h = c->height - i < BLOCK ? c->height - i : BLOCK;
    size_t w = c->width - j < BLOCK ? c->width - j : BLOCK;
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

weft_status weft__transpose_2d(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                               size_t in_stride, size_t out_stride, size_t width, size_t height) {
  if (width == 0 || height == 0) return WEFT_OK;
  struct tctx c = {weft__transpose_kernel(k, elem_size), in, out, elem_size, in_stride, out_stride,
                   width, height, (height + BLOCK - 1) / BLOCK};
  if (!c.fn) return weft__error(WEFT_INTERNAL, "transpose: no kernel for %zu-byte elements", elem_size);
  size_t nbj = (width + BLOCK - 1) / BLOCK;
  return weft_parallel_for(0, (int64_t)(c.nbi * nbj), GRAIN_BLOCKS, run_blocks, &c);
}
