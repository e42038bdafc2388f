/* The WebGPU bridge (docs/webgpu.md): the one narrow interface through which
 * C reaches the GPU. A webgpu storage's bytes are a GPUBuffer in a JS-side
 * table (js/webgpu.js); C holds its integer handle. Below ops/: it knows no
 * operator, only buffers, uploads and compute programs. In the native build
 * (and in wasm before wt.initWebGPU()) every entry refuses with a message. */
#ifndef WEFT_WEBGPU_WEBGPU_H
#define WEFT_WEBGPU_WEBGPU_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/error.h"
#include "weft/dtype.h"
#include "weft/tensor.h"

/* Installs the webgpu storage ops in core (weft_init calls it once). */
void weft__webgpu_install(void);
/* The JS-side buffer handle of a webgpu tensor's storage. */
int32_t weft__webgpu_buffer_of(const weft_tensor* t);
/* Copies n bytes of host memory into buffer `handle` at byte offset 0 (the
 * pending commands are submitted first, so they read the old contents). */
weft_status weft__webgpu_upload(const char* op, int32_t handle, const void* src, int64_t nbytes);

/* One compute dispatch: the program's WGSL (a pipeline per key, cached on
 * the JS side), storage buffers at @binding(0..nbuffers-1) (the first one
 * written), the parameter words as a read-only storage buffer at
 * @binding(nbuffers), the grid in workgroups. Recorded into the current
 * command encoder; submitted at the next sync point. At most 7 buffers: the
 * parameters make 8, WebGPU's default maxStorageBuffersPerShaderStage. */
enum { WEFT_WEBGPU_MAX_BUFFERS = 7, WEFT_WEBGPU_MAX_PARAMS = 128, WEFT_WEBGPU_WORKGROUP = 64 };
typedef struct weft__webgpu_program {
  char key[96];
  char* wgsl; /* malloc'ed; weft__webgpu_program_free */
  int32_t buffers[WEFT_WEBGPU_MAX_BUFFERS];
  int nbuffers;
  uint32_t params[WEFT_WEBGPU_MAX_PARAMS];
  int nparams;
  uint32_t grid[3];
  uint32_t workgroup[3]; /* for explain(); zeros: the map family's WEFT_WEBGPU_WORKGROUP x 1 x 1 */
} weft__webgpu_program;
weft_status weft__webgpu_dispatch(const char* op, const weft__webgpu_program* p);
void weft__webgpu_program_free(weft__webgpu_program* p);

/* The strided map family (src/webgpu/wgsl.c): out[i] = expr(in0[i], ...)
 * over an iterator plan, one invocation per output element. Each operand is
 * an element offset and per-dim element strides over shared sizes (dim 0
 * fastest, as the iterator orders them); loads convert from the memory dtype
 * to `compute`, expr (WGSL over a0, a1, a2) gives a `result`-typed value,
 * stored converted to the output's dtype. float32, int32 and bool (one byte
 * per element, written with word atomics). The copy is expr "a0". An input
 * marked scalar (a cpu number beside webgpu tensors) has no buffer: its
 * 32-bit value, already in `compute`, rides in the parameters; so do the
 * member's extra numbers (e0..e3 in expr, in `compute`: add's alpha). */
enum { WEFT_WEBGPU_MAX_INPUTS = 3 };
typedef struct weft__webgpu_map {
  const char* name;   /* the family member, for the key: "copy", "add", ... */
  const char* expr;
  weft_dtype compute, result;
  int nin;
  int ndim;
  int64_t numel;
  int64_t sizes[WEFT_MAX_DIMS];
  weft_dtype dtype[1 + WEFT_WEBGPU_MAX_INPUTS]; /* output, then inputs */
  int32_t buffer[1 + WEFT_WEBGPU_MAX_INPUTS];
  int64_t offset[1 + WEFT_WEBGPU_MAX_INPUTS];
  int64_t strides[1 + WEFT_WEBGPU_MAX_INPUTS][WEFT_MAX_DIMS];
  bool scalar[1 + WEFT_WEBGPU_MAX_INPUTS];
  uint32_t scalar_bits[1 + WEFT_WEBGPU_MAX_INPUTS];
  int nextra;
  uint32_t extra[4];
  /* in place: input k is the output's own elements (same buffer, dtype,
   * offset and strides), read through the output's read_write binding, as a
   * buffer cannot be bound twice when one binding writes */
  bool alias[1 + WEFT_WEBGPU_MAX_INPUTS];
} weft__webgpu_map;
/* Fills p (its WGSL malloc'ed); an error when a size or offset passes u32. */
weft_status weft__webgpu_map_program(const char* op, const weft__webgpu_map* m, weft__webgpu_program* p);

/* The row-reduction family (src/webgpu/wgsl_reduce.c): reductions, softmax
 * and the norms. Rows (the kept dims, dim 0 fastest) times the reduced dims;
 * every operand has an element offset and strides over both (0 where it does
 * not vary). A workgroup folds a row's elements into a state of WGSL type
 * `state` (`lift` over a0, a1, ... the inputs in `compute`; `comb(a, b)`'s
 * body; `identity`), combines its invocations' states in a tree, then
 * writes row outputs (`row_expr`, in order, over st (the state), n (the
 * count as `compute`), e0..e3 (the extras)) and element outputs (`elem_expr`
 * over the same and the inputs at that element). Mode 0 does it in one pass;
 * a split (`groups` > 1 chunks of `chunk` elements per row, no element
 * outputs) runs mode 1 (partial states into the `partials` buffer, rows x
 * groups x state_words words) then mode 2 (a row's partials, its outputs).
 * pinf() / ninf() / nanv() give the infinities and NaN, wnan(x) / wfinite(x)
 * test for them. Without a `lift` there is no sweep: st is `identity` (an elementwise pass
 * whose operands vary per row, such as a norm's apply step), `groups` workgroups per row,
 * `chunk` elements each. */
typedef enum { WEFT_WEBGPU_RED_IN, WEFT_WEBGPU_RED_ROW_OUT, WEFT_WEBGPU_RED_ELEM_OUT } weft__webgpu_red_role;
typedef struct weft__webgpu_reduce {
  const char* name; /* the member, for the key */
  const char *state, *identity, *lift, *comb, *elem_expr;
  const char* row_expr[4];
  int state_words;
  weft_dtype compute;
  int nops;
  weft__webgpu_red_role role[WEFT_WEBGPU_MAX_BUFFERS];
  weft_dtype dtype[WEFT_WEBGPU_MAX_BUFFERS];
  int32_t buffer[WEFT_WEBGPU_MAX_BUFFERS];
  int64_t offset[WEFT_WEBGPU_MAX_BUFFERS];
  int nkept, nred;
  int64_t kept[WEFT_MAX_DIMS], red[WEFT_MAX_DIMS];
  int64_t kstride[WEFT_WEBGPU_MAX_BUFFERS][WEFT_MAX_DIMS], rstride[WEFT_WEBGPU_MAX_BUFFERS][WEFT_MAX_DIMS];
  int64_t rows, count, groups, chunk;
  int nextra;
  uint32_t extra[4];
} weft__webgpu_reduce;
weft_status weft__webgpu_reduce_program(const char* op, const weft__webgpu_reduce* r, int mode, int32_t partials,
                                        weft__webgpu_program* p);
/* The grid of one invocation per element of n (WEFT_WEBGPU_WORKGROUP per
 * group, 2-D past 65535 groups: idx = gid.y * nwg.x * WORKGROUP + gid.x). */
void weft__webgpu_grid(weft__webgpu_program* p, int64_t n);

/* The index family (src/webgpu/wgsl_index.c): one invocation per element of
 * an iteration shape over three operands: 0 the output, 1 the source (a
 * buffer, or a 32-bit value in the parameters), 2 an int32 index. The index
 * read at operand 2's position j moves one operand by j * dim_stride: the
 * source when gathering (out = src[j]), the output when scattering
 * (out[j] = src, or out[j] += alpha * src with atomics: a compare-exchange
 * loop on the float's bits, so the sum order of duplicates is not fixed).
 * An index outside [0, dim_size), or equal to `skip` when skipping, moves
 * nothing: a gather stores 0, a scatter writes nothing. float32 and int32. */
typedef enum { WEFT_WEBGPU_GATHER, WEFT_WEBGPU_SCATTER, WEFT_WEBGPU_SCATTER_ADD } weft__webgpu_index_mode;
typedef struct weft__webgpu_index {
  const char* name;
  weft__webgpu_index_mode mode;
  weft_dtype dtype;
  int ndim;
  int64_t numel;
  int64_t sizes[WEFT_MAX_DIMS];
  int32_t buffer[3];
  int64_t offset[3];
  int64_t strides[3][WEFT_MAX_DIMS];
  bool src_scalar;
  uint32_t src_bits;
  int64_t dim_stride, dim_size;
  bool skipping;
  int64_t skip;
  uint32_t alpha_bits; /* scatter-add's factor, in dtype */
} weft__webgpu_index;
weft_status weft__webgpu_index_program(const char* op, const weft__webgpu_index* d, weft__webgpu_program* p);

/* nll_loss and its backward (src/webgpu/wgsl_index.c) over contiguous
 * buffers: self (or grad_input) as [n, c, k], target as [n, k] int32, an
 * optional weight [c], grad_output [n, k] or one value. A reduced forward
 * and the 'mean' backward run in one workgroup, summing with a tree. */
typedef struct weft__webgpu_nll {
  bool backward, reduce, mean, has_weight;
  int64_t n, c, k;
  int64_t ignore_index;
  int32_t out, x, target, weight, grad; /* buffers; x is self (forward only) */
  int64_t x_offset, target_offset, weight_offset, grad_offset;
} weft__webgpu_nll;
weft_status weft__webgpu_nll_program(const char* op, const weft__webgpu_nll* d, weft__webgpu_program* p);
/* ---- the tiled GEMM family (src/webgpu/wgsl_gemm.c, wgsl_conv.c) ---- */

/* A batch of strided matrices in a buffer: element offset, batch, row and
 * column strides (any of them 0: broadcast; a transposed view is just its
 * strides, read without a copy). */
typedef struct {
  int32_t buffer;
  int64_t offset, sb, sr, sc;
} weft__webgpu_mat;

/* C[b] = alpha * A[b] @ B[b] (+ beta * D[b] when has_d), b < batch; A is
 * m x k, B k x n, C and D m x n. float32 or int32 (wrapping sums, as the
 * CPU's int64 sums wrapped to int32); alpha, beta are 32-bit values in that
 * dtype. C's buffer must be none of the others (WebGPU's usage rule). */
typedef struct {
  weft_dtype dtype;
  int64_t batch, m, n, k;
  weft__webgpu_mat c, a, b, d;
  bool has_d;
  uint32_t alpha, beta;
} weft__webgpu_matmul;
weft_status weft__webgpu_matmul_program(const char* op, const weft__webgpu_matmul* d, weft__webgpu_program* p);

/* A 4-D operand: buffer, element offset, strides (a 3-D one has stride 0 in
 * front; a 1-D bias uses strides[0]). */
typedef struct {
  int32_t buffer;
  int64_t offset, strides[4];
} weft__webgpu_t4;

/* A 2-D convolution (float32) as an implicit GEMM over the tensors' own
 * strides (NCHW, channels_last or any other; no im2col buffer). The kind
 * says which tensor is written: FORWARD y (+ bias), GRAD_INPUT x from
 * y's gradient and w, GRAD_WEIGHT w from y's gradient and x, GRAD_BIAS bias
 * from y's gradient. Per group: forward is (n ho wo) x cout/g over k =
 * (c/g kh kw); the input gradient (n h w) x c/g over (cout/g kh kw); the
 * weight gradient cout/g x (c/g kh kw) over (n ho wo). */
typedef enum {
  WEFT_WEBGPU_CONV_FORWARD,
  WEFT_WEBGPU_CONV_GRAD_INPUT,
  WEFT_WEBGPU_CONV_GRAD_WEIGHT,
  WEFT_WEBGPU_CONV_GRAD_BIAS
} weft__webgpu_conv_kind;
typedef struct {
  weft__webgpu_conv_kind kind;
  int64_t n, c, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, groups, ho, wo;
  weft__webgpu_t4 x, wt, y, bias;
  bool has_bias;
} weft__webgpu_conv;
weft_status weft__webgpu_conv_program(const char* op, const weft__webgpu_conv* d, weft__webgpu_program* p);

/* 2-D pooling (src/webgpu/wgsl_pool.c), float32, one invocation per output
 * element forward; backward one per element of the input's gradient,
 * gathering from the outputs whose windows hold it (no atomics, the same
 * sum for any schedule). max's indices are int32 on the device (WGSL has no
 * int64): flat h * w offsets, as PyTorch's. Geometry as src/ops/cpu/pool.h;
 * x is the input (its gradient, written, backward), y the output (its
 * gradient, read, backward), idx max's indices (written forward when
 * indices, read backward). */
typedef enum { WEFT_WEBGPU_POOL_MAX, WEFT_WEBGPU_POOL_AVG, WEFT_WEBGPU_POOL_ADAPTIVE } weft__webgpu_pool_kind;
typedef struct {
  weft__webgpu_pool_kind kind;
  bool backward, indices;
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  int64_t divisor_override; /* 0: none */
  weft__webgpu_t4 x, y, idx;
} weft__webgpu_pool;
weft_status weft__webgpu_pool_program(const char* op, const weft__webgpu_pool* d, weft__webgpu_program* p);

#endif
