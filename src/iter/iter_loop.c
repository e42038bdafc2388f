/* Walking a built iterator: for_each -> parallel_for -> serial_for_each ->
 * DimCounter -> loop2d (PyTorch's TensorIterator.cpp and
 * TensorIteratorInternal.h). */
#include <assert.h>
#include <string.h>

#include "iter/iter_internal.h"
#include "weft/iter.h"
#include "weft/parallel.h"

/* ---- DimCounter ---- */

void weft_dim_counter_init(weft_dim_counter* dc, const int64_t* shape, int ndim, int64_t begin,
                           int64_t end) {
  dc->shape = shape;
  dc->ndim = ndim;
  dc->begin = begin;
  dc->end = end;
  dc->offset = begin;
  memset(dc->values, 0, sizeof dc->values);
  int64_t linear = begin;
  for (int d = 0; d < ndim && linear > 0; d++) {
    if (shape[d] > 0) {
      dc->values[d] = linear % shape[d];
      linear /= shape[d];
    }
  }
  assert(linear == 0);
}

void weft_dim_counter_max_2d_step(const weft_dim_counter* dc, int64_t step[2]) {
  int64_t left = dc->end - dc->offset;
  int64_t step0 = dc->shape[0] - dc->values[0];
  if (step0 > left) step0 = left;
  int64_t step1 = 1;
  /* a whole row: take as many rows as the range and dim 1 allow */
  if (step0 == dc->shape[0] && dc->ndim >= 2) {
    step1 = dc->shape[1] - dc->values[1];
    if (step1 > left / dc->shape[0]) step1 = left / dc->shape[0];
  }
  step[0] = step0;
  step[1] = step1;
}

void weft_dim_counter_increment(weft_dim_counter* dc, const int64_t step[2]) {
  dc->offset += step[0] * step[1];
  int64_t overflow = step[0];
  int d = 0;
  if (step[1] != 1) {
    /* only whole rows are taken 2-D, so dim 0 stays at 0 */
    assert(step[0] == dc->shape[0] && dc->values[0] == 0);
    d = 1;
    overflow = step[1];
  }
  for (; d < dc->ndim && overflow > 0; d++) {
    int64_t value = dc->values[d] + overflow;
    if (value >= dc->shape[d]) {
      overflow = 1;
      value -= dc->shape[d];
      assert(value < dc->shape[d]);
    } else {
      overflow = 0;
    }
    dc->values[d] = value;
  }
  assert(overflow == 0 || overflow == 1);
}

/* ---- serial_for_each ---- */

/* strides[dim * ntensors + arg], at least 2 dims (zeros past ndim). */
static void get_strides(const weft_iter* it, int64_t* strides) {
  int nt = it->ntensors, nd = it->ndim < 2 ? 2 : it->ndim;
  for (int d = 0; d < nd; d++)
    for (int a = 0; a < nt; a++) strides[d * nt + a] = d < it->ndim ? it->ops[a].stride_bytes[d] : 0;
}

void weft_iter_serial_for_each(const weft_iter* it, weft_loop2d_fn loop, void* ctx, int64_t begin,
                               int64_t end) {
  if (end <= begin) return;
  int nt = it->ntensors;
  char* base[WEFT_ITER_MAX_OPERANDS];
  char* ptrs[WEFT_ITER_MAX_OPERANDS];
  int64_t strides[WEFT_ITER_MAX_OPERANDS * WEFT_MAX_DIMS];
  for (int a = 0; a < nt; a++) base[a] = it->ops[a].data;
  get_strides(it, strides);
  if (it->ndim <= 1) {
    for (int a = 0; a < nt; a++) ptrs[a] = base[a] + begin * strides[a];
    loop(ctx, ptrs, strides, end - begin, 1);
    return;
  }
  weft_dim_counter dc;
  weft_dim_counter_init(&dc, it->shape, it->ndim, begin, end);
  while (!weft_dim_counter_is_done(&dc)) {
    for (int a = 0; a < nt; a++) {
      char* p = base[a];
      for (int d = 0; d < it->ndim; d++) p += dc.values[d] * strides[d * nt + a];
      ptrs[a] = p;
    }
    int64_t step[2];
    weft_dim_counter_max_2d_step(&dc, step);
    loop(ctx, ptrs, strides, step[0], step[1]);
    weft_dim_counter_increment(&dc, step);
  }
}

/* ---- for_each ---- */

typedef struct {
  const weft_iter* it;
  weft_loop2d_fn loop;
  void* ctx;
} chunk_job;

static weft_status run_chunk(void* p, int64_t begin, int64_t end) {
  const chunk_job* job = p;
  weft_iter_serial_for_each(job->it, job->loop, job->ctx, begin, end);
  return WEFT_OK;
}

/* A pointwise iterator of 2 dims, a long one inside and 2..4 outside
 * (pixels and their channels: widened, or a CHW result beside an HWC view),
 * splits between threads by the long dim, each chunk taking every channel:
 * each loop call then sees whole pixels (a split of the linear range would
 * cut every call down to one channel, one strided row at a time). */
bool weft__splits_long_dim(const weft_iter* it) {
  return it->widen_tiny_inner && !it->is_reduction && !it->enforce_linear_iteration && it->ndim == 2 &&
         it->shape[1] >= 2 && it->shape[1] <= 4;
}

static weft_status run_long_dim_chunk(void* p, int64_t begin, int64_t end) {
  const chunk_job* job = p;
  const weft_iter* it = job->it;
  int nt = it->ntensors;
  char* ptrs[WEFT_ITER_MAX_OPERANDS];
  int64_t strides[WEFT_ITER_MAX_OPERANDS * 2];
  for (int a = 0; a < nt; a++) {
    strides[a] = it->ops[a].stride_bytes[0];
    strides[nt + a] = it->ops[a].stride_bytes[1];
    ptrs[a] = it->ops[a].data + begin * strides[a];
  }
  job->loop(job->ctx, ptrs, strides, end - begin, it->shape[1]);
  return WEFT_OK;
}

/* The grain along the long dim: as many elements a chunk as the linear split's. */
int64_t weft__long_dim_grain(const weft_iter* it, int64_t grain) {
  int64_t g = grain / it->shape[1];
  return g < 1 ? 1 : g;
}

weft_status weft_iter_for_each(const weft_iter* it, weft_loop2d_fn loop, void* ctx, int64_t grain) {
  if (weft_explaining()) return weft__explain_record(it, weft_iter_loop_kind(it), weft_iter_num_chunks(it, grain));
  int64_t numel = weft_iter_numel(it);
  if (numel == 0 || it->is_meta) return WEFT_OK;
  if (grain < 1) grain = 1;
  if (numel < grain || weft_get_num_threads() == 1) {
    weft_iter_serial_for_each(it, loop, ctx, 0, numel);
    return WEFT_OK;
  }
  chunk_job job = {it, loop, ctx};
  if (weft__splits_long_dim(it))
    return weft_parallel_for(0, it->shape[0], weft__long_dim_grain(it, grain), run_long_dim_chunk, &job);
  return weft_parallel_for(0, numel, grain, run_chunk, &job);
}
