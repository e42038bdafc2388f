/* The fused attention driver (src/ops/cpu/attention.c) over the kernels of
 * src/kernels/attention.c and the GEMM's: tiling, masks and threading. */
#ifndef WEFT_OPS_CPU_ATTENTION_H
#define WEFT_OPS_CPU_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "weft/error.h"

/* One attention over float32 [b, hq, l, e] queries, [b, hkv, s, e] keys and
 * [b, hkv, s, ev] values (hkv divides hq: query head h reads key/value head
 * h / (hq / hkv)), each with a unit last stride and the element strides of
 * its first three dims in *st. mask (NULL: none) is added to the scores,
 * element (b, h, i, j) at mask[b mst[0] + h mst[1] + i mst[2] + j mst[3]]
 * (0 strides broadcast). causal keeps key j <= query i (PyTorch's
 * tril(ones(l, s)), top-left aligned). */
typedef struct {
  int64_t b, hq, hkv, l, s, e, ev;
  const float *q, *k, *v, *mask;
  int64_t qst[3], kst[3], vst[3], mst[4];
  float scale;
  bool causal;
  /* dropout on the probabilities (0 <= dropout_p < 1): element (b, h, i, j)
   * is kept, times 1 / (1 - p), when a counter-based hash of seed, b, h, i
   * and j is at least p 2^32, so the backward regenerates the forward's
   * mask without storing it */
  float dropout_p;
  uint64_t seed;
} weft_attn_args;

typedef enum { WEFT_ATTN_FUSED, WEFT_ATTN_DECODE } weft_attn_path;

/* The path the forward takes: decode for up to 4 query rows (the GEMV
 * kernels: every row against each key as it streams by, nothing packed),
 * else fused (query tiles against key tiles
 * through the GEMM micro-kernels with an online softmax). */
weft_attn_path weft__attn_path(const weft_attn_args* a);
const char* weft__attn_path_name(weft_attn_path p);

/* z[0, n) = the dropout factors (0 or 1 / (1 - p)) of keys [j0, j0 + n) of
 * query row i of head bh = b hq + h: the mask the fused kernels apply (the
 * tests build the composite from it). */
void weft__attn_dropout_factors(const weft_attn_args* a, int64_t bh, int64_t i, int64_t j0, int64_t n, float* z);

/* out: contiguous [b, hq, l, ev]; lse: contiguous [b, hq, l], each row's
 * log-sum-exp of its (scaled, masked) scores (-inf for a fully masked row,
 * whose output is NaN). Threaded over b x hq x query tiles. */
weft_status weft__attn_forward(const weft_kernels* kt, const weft_attn_args* a, weft_attn_path path, float* out,
                               float* lse);

/* The gradients from dout (contiguous [b, hq, l, ev]) and the forward's
 * lse: dq contiguous like the queries, dk and dv contiguous like the keys
 * and values (zeroed by the caller; the query heads of a group add into
 * them). Recomputes the scores one query tile at a time (FlashAttention-2's
 * dS = P (dP - rowsum(P dP))), threaded over b x hkv. */
weft_status weft__attn_backward(const weft_kernels* kt, const weft_attn_args* a, const float* dout, const float* lse,
                                float* dq, float* dk, float* dv);

#endif
