/* cat's block copy: the output read as one byte range, rows x row_bytes,
 * row_bytes the sum of the inputs' blocks. A parallel chunk is any byte
 * range, so a cat of two huge blocks (one row) spreads over the threads as
 * well as one of many small rows; each chunk finds its row and input once,
 * then walks the blocks with one memcpy per piece. */
#include "ops/cpu/cat.h"

#include <string.h>

#include "weft/parallel.h"

/* Chunks of at least this many bytes: below it a thread's hand-off costs
 * more than the copy it takes over. */
#define CAT_GRAIN_BYTES (256 * 1024)

typedef struct {
  char* out;
  const char* const* src;
  const size_t* bytes;
  int64_t n;
  int64_t row_bytes;
} cat_job;

static weft_status copy_range(void* ctx, int64_t begin, int64_t end) {
  const cat_job* j = ctx;
  int64_t row = begin / j->row_bytes, off = begin % j->row_bytes;
  int64_t i = 0;
  while (off >= (int64_t)j->bytes[i]) off -= (int64_t)j->bytes[i++]; /* the block holding begin */
  for (int64_t pos = begin; pos < end;) {
    int64_t len = (int64_t)j->bytes[i] - off;
    if (len > end - pos) len = end - pos;
    memcpy(j->out + pos, j->src[i] + row * (int64_t)j->bytes[i] + off, (size_t)len);
    pos += len;
    off = 0;
    if (++i == j->n) { /* next row; empty blocks are skipped by the loop above on the next piece */
      i = 0;
      row++;
    }
    while (pos < end && j->bytes[i] == 0) {
      if (++i == j->n) {
        i = 0;
        row++;
      }
    }
  }
  return WEFT_OK;
}

weft_status weft__cat_blocks(void* out, const void* const* src, const size_t* bytes, int64_t n, int64_t rows) {
  int64_t row_bytes = 0;
  for (int64_t i = 0; i < n; i++) row_bytes += (int64_t)bytes[i];
  if (rows == 0 || row_bytes == 0) return WEFT_OK;
  cat_job j = {out, (const char* const*)src, bytes, n, row_bytes};
  return weft_parallel_for(0, rows * row_bytes, CAT_GRAIN_BYTES, copy_range, &j);
}
