/* The tiled GEMM template's member interface (src/webgpu/wgsl_gemm.c), for
 * the members below ops/ (the strided matmul in wgsl_gemm.c, the
 * convolutions in wgsl_conv.c). A member supplies three WGSL functions over
 * its own parameters (p[4] on) and read bindings r1..r3:
 *   fn lda(bt: u32, i: u32, k: u32) -> T   A[bt][i][k], called in range only
 *   fn ldb(bt: u32, k: u32, j: u32) -> T   B[bt][k][j], called in range only
 *   fn stc(bt: u32, i: u32, j: u32, v: T)  stores C[bt][i][j] = v (+ epilogue)
 * T is the accumulation type (f32 or i32); the output binding is `o`. */
#ifndef WEFT_WEBGPU_WGSL_GEMM_H
#define WEFT_WEBGPU_WGSL_GEMM_H

#include "webgpu/webgpu.h"

enum { WEFT_GEMM_FIRST_PARAM = 4 };

typedef struct {
  const char* key; /* the member and its variant, for the pipeline cache */
  weft_dtype dtype;
  int64_t batch, m, n, k;
  int32_t out;
  int nread;
  int32_t read[3];
  const char* functions; /* lda, ldb, stc and their helpers */
  uint32_t params[WEFT_WEBGPU_MAX_PARAMS - WEFT_GEMM_FIRST_PARAM];
  int nparams;
} weft__gemm_member;

/* The program of one member: its WGSL (malloc'ed), buffers, parameters, a
 * grid of 64 x 64 output tiles by batch; refuses sizes past u32 or the
 * grid's 65535 workgroups a dimension. */
weft_status weft__gemm_program(const char* op, const weft__gemm_member* g, weft__webgpu_program* p);

/* True when off + sum (size - 1) * stride stays within u32 (an operand's
 * every element index fits the shader's u32 arithmetic). */
bool weft__webgpu_fits(int64_t off, const int64_t* sizes, const int64_t* strides, int n);
/* The same for a 4-D operand of sizes a x b x c x d. */
bool weft__webgpu_t4_fits(const weft__webgpu_t4* t, int64_t a, int64_t b, int64_t c, int64_t d);
/* Its offset and 4 strides as 5 parameter words at q; returns 5. */
int weft__webgpu_put_t4(uint32_t* q, const weft__webgpu_t4* t);

#endif
