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
 * A thin matrix (the 3 or 4 channels of an image) gets blocks of the same
 * 16 KB, stretched along its long side: 64 x 3 blocks would spend more on
 * the call than on the copy.
 *
 * Blocks are numbered image, then output row block, then column block, so
 * a chunk of consecutive blocks writes neighbouring output lines. */
#include "base/error.h"
#include "ops/cpu/transpose.h"
#include "weft/parallel.h"

#define BLOCK_ROWS 64
#define BLOCK_ROW_BYTES 256
#define BLOCK_BYTES (BLOCK_ROWS * BLOCK_ROW_BYTES)
/* elements per parallel chunk at least */
#define GRAIN_ELEMS 32768

struct tctx {
  weft_transpose_fn* fn;
  const char* in;
  char* out;
  size_t es, in_stride, out_stride, width, height;
  ptrdiff_t in_bstride, out_bstride;
  size_t nbi, per_image; /* blocks along height; blocks per image */
  size_t bh, bw;         /* block height (rows) and width (elements) */
};

static weft_status run_blocks(void* p, int64_t begin, int64_t end) {
  const struct tctx* c = p;
  for (int64_t b = begin; b < end; b++) {
    size_t img = (size_t)b / c->per_image, r = (size_t)b % c->per_image;
    size_t bj = r / c->nbi, bi = r % c->nbi; /* output row block, then column block */
    size_t i = bi * c->bh, j = bj * c->bw;
    size_t h = c->height - i < c->bh ? c->height - i : c->bh;
    size_t w = c->width - j < c->bw ? c->width - j : c->bw;
    const char* in = c->in + (ptrdiff_t)img * c->in_bstride;
    char* out = c->out + (ptrdiff_t)img * c->out_bstride;
    c->fn(in + i * c->in_stride + j * c->es, out + j * c->out_stride + i * c->es, c->in_stride, c->out_stride,
          w, h);
  }
  return WEFT_OK;
}

/* Up to BLOCK_ROWS x BLOCK_ROW_BYTES; a side shorter than that lends its
 * bytes to the other (rounded to 16 rows or columns, a whole x8 tile). */
static void block_shape(size_t es, size_t width, size_t height, size_t* bh, size_t* bw) {
  es = es ? es : 1;
  *bh = BLOCK_ROWS;
  *bw = BLOCK_ROW_BYTES / es;
  if (width < *bw && width > 0) *bh = (BLOCK_BYTES / (width * es)) & ~(size_t)15;
  else if (height < *bh && height > 0) *bw = (BLOCK_BYTES / (height * es)) & ~(size_t)15;
  if (*bh < BLOCK_ROWS) *bh = BLOCK_ROWS;
  if (*bw < BLOCK_ROW_BYTES / es) *bw = BLOCK_ROW_BYTES / es;
}

int64_t weft__transpose_2d_blocks(size_t elem_size, size_t width, size_t height, size_t batch, int64_t* grain) {
  size_t bh, bw;
  block_shape(elem_size, width, height, &bh, &bw);
  if (grain) { /* by the elements a block really holds */
    size_t rows = height < bh ? height : bh, cols = width < bw ? width : bw;
    *grain = GRAIN_ELEMS / (int64_t)(rows * cols > 0 ? rows * cols : 1);
    if (*grain < 1) *grain = 1;
  }
  return (int64_t)(batch * ((height + bh - 1) / bh) * ((width + bw - 1) / bw));
}

weft_status weft__transpose_2d_batched(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                                       size_t in_stride, size_t out_stride, size_t width, size_t height,
                                       size_t batch, ptrdiff_t in_batch_stride, ptrdiff_t out_batch_stride) {
  if (width == 0 || height == 0 || batch == 0) return WEFT_OK;
  size_t bh, bw;
  block_shape(elem_size, width, height, &bh, &bw);
  size_t nbi = (height + bh - 1) / bh;
  struct tctx c = {weft__transpose_kernel(k, elem_size), in, out, elem_size, in_stride, out_stride,
                   width, height, in_batch_stride, out_batch_stride, nbi, nbi * ((width + bw - 1) / bw), bh, bw};
  if (!c.fn) return weft__error(WEFT_INTERNAL, "transpose: no kernel for %zu-byte elements", elem_size);
  int64_t grain;
  int64_t nblocks = weft__transpose_2d_blocks(elem_size, width, height, batch, &grain);
  return weft_parallel_for(0, nblocks, grain, run_blocks, &c);
}

weft_status weft__transpose_2d(const weft_kernels* k, size_t elem_size, const void* in, void* out,
                               size_t in_stride, size_t out_stride, size_t width, size_t height) {
  return weft__transpose_2d_batched(k, elem_size, in, out, in_stride, out_stride, width, height, 1, 0, 0);
}
