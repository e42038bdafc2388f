/* The benchmark workloads of issue 5, written once in C and run natively
 * (bench/bench_weft.c) and in wasm (src/wasm/bench_exports.c, driven by
 * bench/run.mjs). Each run of a workload is one call; the caller times it,
 * warms up, and takes medians.
 *
 * Every workload writes into outputs allocated once by weft_bench_setup, as
 * the memcpy ceilings do, except "nchw_to_nhwc_alloc", which is the API call
 * contiguous(channels_last) with its allocation. */
#ifndef WEFT_BENCH_WORKLOADS_H
#define WEFT_BENCH_WORKLOADS_H

#include "weft/error.h"

typedef enum {
  WEFT_BENCH_MEMCPY_X,      /* memcpy of the [32,64,56,56] float32 bytes (the ceiling of W1, W3) */
  WEFT_BENCH_MEMCPY_4M,     /* memcpy of 4,194,304 float32 (the ceiling of W4) */
  WEFT_BENCH_ADD3_CEILING,  /* a plain 128-bit SIMD c[i] = a[i] + b[i] loop, 4M (the ceiling of W2) */
  WEFT_BENCH_NCHW_TO_NHWC,  /* W1: copy_ of [32,64,56,56] NCHW into a channels_last tensor */
  WEFT_BENCH_NCHW_TO_NHWC_ALLOC, /* W1 through contiguous(channels_last), allocation included */
  WEFT_BENCH_ADD,           /* W2: add.out of two contiguous 4M float32 (the dispatched op) */
  WEFT_BENCH_BADD,          /* W3: add.out [32,64,56,56] + [64,1,1] */
  WEFT_BENCH_CAST_F16,      /* W4: float32 -> float16, 4M (copy_ into a float16 tensor) */
  WEFT_BENCH_ADD_ITER,      /* W2 on a bare TensorIterator + f32 kernel loop (the op's overhead check) */
  WEFT_BENCH_SUM_16M,       /* issue 11: sum of 16,777,216 float32 (sum.IntList_out, dim=[]) */
  WEFT_BENCH_SUM_HW,        /* [32,64,56,56] summed over (2,3), contiguous */
  WEFT_BENCH_SUM_HW_CL,     /* the same on a channels_last input (no copy) */
  WEFT_BENCH_ARGMAX,        /* argmax [512,1000] over dim 1 */
  WEFT_BENCH_SOFTMAX,       /* softmax [512,1000] over the last dim (the API call, allocation included) */
  WEFT_BENCH_COUNT
} weft_bench_workload;

/* Allocates and fills the operands (idempotent). */
weft_status weft_bench_setup(void);
void weft_bench_teardown(void);
/* Runs workload w once. */
weft_status weft_bench_run(int w);
/* "memcpy", "nchw_to_nhwc", ...; NULL past the end. */
const char* weft_bench_name(int w);
/* Bytes read + written by one run. */
double weft_bench_bytes(int w);
/* The ceiling workload whose bandwidth this one's ratio divides by (itself for ceilings). */
int weft_bench_ceiling(int w);
/* 0 when the outputs of the last runs match a plain C reference, else the workload + 1 that failed. */
int weft_bench_verify(void);

#endif
