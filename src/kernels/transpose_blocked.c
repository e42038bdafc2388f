/* The blocked 2-D transpose driver: cut each (height x width) input of a
 * batch into blocks that fit L1 and hand all blocks of all images to one
 * weft_parallel_for (XNNPACK transpose-nd style), so threads split the batch
 * evenly and a batch pays for one fork/join, not one per image.
 *
 * Blocks are up to 64 input rows by 256 bytes of each row (64 x 64 for
 * x32). The kernels walk a block column strip by column strip, so one
 * block writes 256 / elem_size output rows of up to 256 bytes each, front
 * to back: an output line is finished while it is in L1 and its page is
 * written sequentially, and the input lines a block reads (64 rows x 256
 * bytes = 16 KB) stay in L1 between the strips that share them. For NCHW ->
 * NHWC with C = 64 the block is a whole channel column, so the output of an
 * image is written strictly in order.
 *
 * Blocks are numbered image, then output row block, then column block, so
 * a chunk of consecutive blocks writes neighbouring output lines. */
#include "kernels/kernels.h"
#include "core/internal.h"
#include "weft/parallel.h"

#define BLOCK_ROWS 64
#define BLOCK_ROW_BYTES 256
/* elements per parallel chunk at least */
#define GRAIN_ELEMS 32768

struct tctx {
  weft_transpose_fn* fn;
  const char* in;
  char* out;
  size_t es, in_stride, out_stride, width, height;
  ptrdiff_t in_bstride, out_bstride;
  size_t nbi, per_image; /* blocks along height; blocks per image */
  size_t bw;             /* block width in elements */
};

static weft_status run_blocks(void* p, int64_t begin, int64_t end) {
  const struct tctx* c = p;
  for (int64_t b = begin; b < end; b++) {
    size_t img = (size_t)b / c->per_image, r = (size_t)b % c->per_image;
    size_t bj = r / c->nbi, bi = r % c->nbi; /* output row block, then column block */
    size_t i = bi * BLOCK_ROWS, j = bj * c->bw;
    size_t h = c->height - i < BLOCK_ROWS ? c->height - i : BLOCK_ROWS;
    size_t w = c->width - j < c->bw ? c->width - j : c->bw;
    const char* in = c->in + (ptrdiff_t)img * c->in_bstride;
    char* out = c->out + (ptrdiff_t)img * c->out_bstride;
    c->fn(in + i * c->in_stride + j * c->es, out + j * c->out_stride + i * c->es, c->in_stride, c->out_stride,
          w, h);
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

int64_t weft__transpose_2d_blocks(size_t elem_size, size_t width, size_t height, size_t batch, int64_t* grain) {
  size_t bw = block_width(elem_size);
  if (grain) {
    *grain = GRAIN_ELEMS / (int64_t)(BLOCK_ROWS * bw);
    if (*grain < 1) *grain = 1;
  }
  return (int64_t)(batch * ((height + BLOCK_ROWS - 1) / BLOCK_ROWS) * ((width + bw - 1) / bw));
}

weft_status weft__transpose_2d_batched(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                                       size_t in_stride, size_t out_stride, size_t width, size_t height,
                                       size_t batch, ptrdiff_t in_batch_stride, ptrdiff_t out_batch_stride) {
  if (width == 0 || height == 0 || batch == 0) return WEFT_OK;
  size_t bw = block_width(elem_size);
  size_t nbi = (height + BLOCK_ROWS - 1) / BLOCK_ROWS;
  struct tctx c = {weft__transpose_kernel(k, elem_size), in, out, elem_size, in_stride, out_stride,
                   width, height, in_batch_stride, out_batch_stride, nbi, nbi * ((width + bw - 1) / bw), bw};
  if (!c.fn) return weft__error(WEFT_INTERNAL, "transpose: no kernel for %zu-byte elements", elem_size);
  int64_t grain;
  int64_t nblocks = weft__transpose_2d_blocks(elem_size, width, height, batch, &grain);
  return weft_parallel_for(0, nblocks, grain, run_blocks, &c);
}

weft_status weft__transpose_2d(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                               size_t in_stride, size_t out_stride, size_t width, size_t height) {
  return weft__transpose_2d_batched(k, elem_size, in, out, in_stride, out_stride, width, height, 1, 0, 0);
}
