/* The iterator's plan, for weft_iter_explain_json and the JS explain():
 * what build decided and which inner loop the built-in loops will take. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "base/strbuf.h"
#include "iter/iter_internal.h"
#include "weft/iter.h"
#include "weft/parallel.h"

const char* weft_loop_kind_name(weft_loop_kind k) {
  static const char* const names[WEFT_LOOP_KIND_COUNT] = {"vectorized", "scalar-broadcast", "transpose",
                                                          "strided",    "interleaved",      "deinterleave"};
  return (int)k >= 0 && k < WEFT_LOOP_KIND_COUNT ? names[k] : "?";
}

const char* weft_iter_fast_setup_name(weft_iter_fast_setup f) {
  switch (f) {
    case WEFT_ITER_FAST_NONE: return "none";
    case WEFT_ITER_FAST_CONTIGUOUS: return "contiguous";
    case WEFT_ITER_FAST_CHANNELS_LAST: return "channels_last";
    case WEFT_ITER_FAST_NON_OVERLAPPING_DENSE: return "non_overlapping_dense";
  }
  return "?";
}

static int64_t elsize(const weft_iter* it, int arg) {
  return (int64_t)weft_dtype_size(it->ops[arg].dtype);
}

/* One input whose inner two dims are the output's transposed: the output
 * moves by one element along dim 0 and the input along dim 1. */
static bool is_transpose(const weft_iter* it) {
  if (it->ntensors != 2 || it->noutputs != 1 || it->ndim < 2) return false;
  if (it->ops[0].dtype != it->ops[1].dtype) return false;
  const int64_t* so = it->ops[0].stride_bytes;
  const int64_t* si = it->ops[1].stride_bytes;
  int64_t es = elsize(it, 0);
  return so[0] == es && si[1] == es && si[0] != es && si[0] != 0;
}

/* A pointwise iterator over 2..4 channels (dim 1) of pixels (dim 0): the
 * output interleaves them, or it is planar and an input interleaves them. */
static weft_loop_kind channel_loop(const weft_iter* it) {
  if (!it->widen_tiny_inner || it->ndim < 2 || it->shape[1] < 2 || it->shape[1] > 4) return WEFT_LOOP_STRIDED;
  int64_t c = it->shape[1];
  const int64_t* so = it->ops[0].stride_bytes;
  int64_t es = elsize(it, 0);
  if (so[0] == es * c && so[1] == es) return WEFT_LOOP_INTERLEAVED;
  if (so[0] != es) return WEFT_LOOP_STRIDED;
  for (int a = it->noutputs; a < it->ntensors; a++) {
    const int64_t* si = it->ops[a].stride_bytes;
    if (si[0] == elsize(it, a) * c && si[1] == elsize(it, a)) return WEFT_LOOP_DEINTERLEAVE;
  }
  return WEFT_LOOP_STRIDED;
}

weft_loop_kind weft_iter_loop_kind(const weft_iter* it) {
  if (it->ndim == 0) return WEFT_LOOP_VECTORIZED;
  bool contiguous = true, broadcast_ok = true, any_zero = false;
  for (int a = 0; a < it->ntensors; a++) {
    int64_t s = it->ops[a].stride_bytes[0], es = elsize(it, a);
    if (s != es) contiguous = false;
    if (s == 0 && !it->ops[a].is_output) any_zero = true;
    else if (s != es) broadcast_ok = false;
  }
  if (contiguous) return WEFT_LOOP_VECTORIZED;
  if (broadcast_ok && any_zero) return WEFT_LOOP_SCALAR_BROADCAST;
  if (is_transpose(it)) return WEFT_LOOP_TRANSPOSE;
  return channel_loop(it);
}

int64_t weft__parallel_chunks(int64_t len, int64_t grain) {
  if (len <= 0) return 0;
  if (grain < 1) grain = 1;
  int64_t t = weft_get_num_threads();
  if (len <= grain || t <= 1) return 1;
  /* src/parallel: a few chunks per thread for stealing, each >= grain */
  int64_t chunk = (len + 4 * t - 1) / (4 * t);
  if (chunk < grain) chunk = grain;
  return (len + chunk - 1) / chunk;
}

int64_t weft_iter_num_chunks(const weft_iter* it, int64_t grain) {
  int64_t numel = weft_iter_numel(it);
  if (weft__splits_long_dim(it) && numel >= grain && grain >= 1)
    return weft__parallel_chunks(it->shape[0], weft__long_dim_grain(it, grain));
  return weft__parallel_chunks(numel, grain);
}

/* ---- JSON ---- */

static void put_i64s(weft__strbuf* b, const int64_t* v, int n) {
  weft__strbuf_put(b, "[");
  for (int i = 0; i < n; i++) weft__strbuf_put(b, i ? ",%lld" : "%lld", (long long)v[i]);
  weft__strbuf_put(b, "]");
}

char* weft_iter_explain_json(const weft_iter* it, int64_t grain) {
  return weft__iter_explain_json_ex(it, weft_iter_loop_kind(it), weft_iter_num_chunks(it, grain));
}

char* weft__iter_explain_json_ex(const weft_iter* it, weft_loop_kind loop, int64_t chunks) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "{\"op\":\"%s\",\"numel\":%lld,\"broadcastShape\":", it->op_name,
      (long long)weft_iter_numel(it));
  put_i64s(&b, it->broadcast_shape, it->broadcast_ndim);
  weft__strbuf_put(&b, ",\"permutation\":[");
  for (int d = 0; d < it->perm_ndim; d++) weft__strbuf_put(&b, d ? ",%d" : "%d", it->perm[d]);
  weft__strbuf_put(&b, "],\"shape\":");
  put_i64s(&b, it->shape, it->ndim);
  weft__strbuf_put(&b, ",\"strides\":[");
  for (int a = 0; a < it->ntensors; a++) {
    if (a) weft__strbuf_put(&b, ",");
    put_i64s(&b, it->ops[a].stride_bytes, it->ndim);
  }
  weft__strbuf_put(&b, "],\"dtypes\":[");
  for (int a = 0; a < it->ntensors; a++) weft__strbuf_put(&b, a ? ",\"%s\"" : "\"%s\"", weft_dtype_name(it->ops[a].dtype));
  weft__strbuf_put(&b, "],\"commonDtype\":");
  if (it->has_common_dtype) weft__strbuf_put(&b, "\"%s\"", weft_dtype_name(it->common_dtype));
  else weft__strbuf_put(&b, "null");
  weft__strbuf_put(&b, ",\"fastSetup\":\"%s\",\"loop\":\"%s\",\"widenedInner\":%s,\"chunks\":%lld}",
      weft_iter_fast_setup_name(it->fast_setup), weft_loop_kind_name(loop), it->widened_inner ? "true" : "false",
      (long long)chunks);
  return weft__strbuf_finish(&b, "explain");
}
