/* The C entry points js/core.js calls: thin wrappers over include/weft/ headers.
 *
 * JS <-> wasm ABI (wasm32; every signature uses only i32 and f64, so no
 * BigInt and no i64 legalization is involved):
 * - Handles: a weft_tensor* is a JS number. Each JS Tensor owns one reference
 *   and gives it back with weft_tensor_release. NULL (0) means failure.
 * - Integer scalars (dims, indices, offsets, starts, ends, steps) that are
 *   int64_t in C arrive as f64. JS has already checked they are integers; C
 *   converts with saturation, so 2**63 and Infinity become INT64_MAX (slice's
 *   "to the end"). Counts that always fit (ndim, dtype, device, format) are i32.
 * - int64 arrays (sizes, strides, dims) go through the scratch area returned
 *   by weft_wasm_scratch(), as f64:
 *       f64 [ 0, 16)  A   first array argument (sizes, src dims)
 *       f64 [16, 32)  B   second array argument (strides, dst dims)
 *       f64 [32, 80)  OUT results: weft_wasm_meta, weft_wasm_memory
 *       u8  [640, 896) STR a NUL-terminated UTF-8 name (dtype, format, device)
 *   JS refuses arrays longer than WEFT_MAX_DIMS before writing them. The area
 *   is a single static buffer: only the thread that owns the JS API uses it.
 * - Errors: a NULL handle, a negative enum or a non-zero status. JS then reads
 *   weft_last_status(), weft_status_name(status) and weft_last_error(), throws
 *   a WeftError, and calls weft_clear_error(). */
#include <stdint.h>

#include <emscripten/emscripten.h>

#include "weft/parallel.h"
#include "weft/weft.h"

#define WEFT_WASM_STR_BYTES 256

static struct {
  double a[WEFT_MAX_DIMS];
  double b[WEFT_MAX_DIMS];
  double out[48];
  char str[WEFT_WASM_STR_BYTES];
} scratch;

_Static_assert(sizeof scratch.a == 16 * 8 && sizeof scratch.out == 48 * 8,
               "js/core.js hard-codes the scratch layout");

#ifndef WEFT_BUILD_ID
#define WEFT_BUILD_ID "unknown"
#endif

/* "<package version>+<git short hash>", the same string scripts/build.sh
 * writes into dist/build-id.js; js/loader.js refuses a mismatch. */
EMSCRIPTEN_KEEPALIVE const char* weft_build_id(void) {
  return WEFT_BUILD_ID;
}

EMSCRIPTEN_KEEPALIVE void* weft_wasm_scratch(void) {
  return &scratch;
}

static int64_t to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* Copies n values of a scratch array into dst (n <= WEFT_MAX_DIMS, checked by JS). */
static int64_t* load(const double* src, int n, int64_t* dst) {
  for (int i = 0; i < n && i < WEFT_MAX_DIMS; i++) dst[i] = to_i64(src[i]);
  return dst;
}

/* ---- names: read scratch.str, return the enum or -1 with the error set ---- */

EMSCRIPTEN_KEEPALIVE int weft_wasm_dtype_from_name(void) {
  scratch.str[WEFT_WASM_STR_BYTES - 1] = '\0';
  weft_dtype d;
  return weft_dtype_from_name(scratch.str, &d) == WEFT_OK ? (int)d : -1;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_memory_format_from_name(void) {
  scratch.str[WEFT_WASM_STR_BYTES - 1] = '\0';
  weft_memory_format f;
  return weft_memory_format_from_name(scratch.str, &f) == WEFT_OK ? (int)f : -1;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_device_from_name(void) {
  scratch.str[WEFT_WASM_STR_BYTES - 1] = '\0';
  weft_device d;
  return weft_device_from_name(scratch.str, &d) == WEFT_OK ? (int)d : -1;
}

/* ---- metadata and statistics, written to scratch.out ---- */

/* out = [ndim, numel, storage_offset, dtype, device, element_size, 0, 0,
 *        sizes[0..16), strides[0..16)] */
EMSCRIPTEN_KEEPALIVE void weft_wasm_meta(const weft_tensor* t) {
  int64_t nd = weft_tensor_dim(t);
  const int64_t* sz = weft_tensor_sizes(t);
  const int64_t* st = weft_tensor_strides(t);
  scratch.out[0] = (double)nd;
  scratch.out[1] = (double)weft_tensor_numel(t);
  scratch.out[2] = (double)weft_tensor_storage_offset(t);
  scratch.out[3] = (double)weft_tensor_dtype(t);
  scratch.out[4] = (double)weft_tensor_device(t);
  scratch.out[5] = (double)weft_tensor_element_size(t);
  for (int64_t i = 0; i < nd; i++) {
    scratch.out[8 + i] = (double)sz[i];
    scratch.out[8 + WEFT_MAX_DIMS + i] = (double)st[i];
  }
}

/* out = [tensors, storages, bytes_in_use, peak_bytes, meta_bytes] */
EMSCRIPTEN_KEEPALIVE void weft_wasm_memory(void) {
  weft_memory_stats m = weft_memory();
  scratch.out[0] = (double)m.tensors;
  scratch.out[1] = (double)m.storages;
  scratch.out[2] = (double)m.bytes_in_use;
  scratch.out[3] = (double)m.peak_bytes;
  scratch.out[4] = (double)m.meta_bytes;
}

/* ---- threads and random numbers ---- */

EMSCRIPTEN_KEEPALIVE int weft_wasm_set_num_threads(int n) {
  return (int)weft_set_num_threads(n);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_get_num_threads(void) {
  return weft_get_num_threads();
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_max_threads(void) {
  return weft_max_threads();
}

/* The seed is split in two u32 halves so the whole uint64 range survives. */
EMSCRIPTEN_KEEPALIVE void weft_wasm_manual_seed(uint32_t hi, uint32_t lo) {
  weft_manual_seed(((uint64_t)hi << 32) | lo);
}

/* ---- factories (sizes in A, strides in B) ---- */

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_empty(int ndim, int dtype, int device, int format) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_empty(load(scratch.a, ndim, s), ndim, (weft_dtype)dtype, (weft_device)device,
                    (weft_memory_format)format);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_empty_strided(int ndim, int dtype, int device) {
  int64_t s[WEFT_MAX_DIMS], st[WEFT_MAX_DIMS];
  return weft_empty_strided(load(scratch.a, ndim, s), load(scratch.b, ndim, st), ndim,
                            (weft_dtype)dtype, (weft_device)device);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_full(int ndim, double value, int dtype, int device) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_full(load(scratch.a, ndim, s), ndim, value, (weft_dtype)dtype, (weft_device)device);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_arange(double start, double end, double step, int dtype,
                                                   int device) {
  return weft_arange(start, end, step, (weft_dtype)dtype, (weft_device)device);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_rand(int ndim, int dtype, int device) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_rand(load(scratch.a, ndim, s), ndim, (weft_dtype)dtype, (weft_device)device);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_randn(int ndim, int dtype, int device) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_randn(load(scratch.a, ndim, s), ndim, (weft_dtype)dtype, (weft_device)device);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_empty_like(const weft_tensor* t, int dtype, int format) {
  return weft_empty_like(t, (weft_dtype)dtype, (weft_memory_format)format);
}

/* ---- copies ---- */

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_contiguous(const weft_tensor* t, int format) {
  return weft_contiguous(t, (weft_memory_format)format);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_clone(const weft_tensor* t, int format) {
  return weft_clone(t, (weft_memory_format)format);
}

/* ---- views ---- */

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_as_strided(const weft_tensor* t, int ndim, double offset) {
  int64_t s[WEFT_MAX_DIMS], st[WEFT_MAX_DIMS];
  return weft_as_strided(t, load(scratch.a, ndim, s), load(scratch.b, ndim, st), ndim,
                         to_i64(offset));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_view(const weft_tensor* t, int ndim) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_view(t, load(scratch.a, ndim, s), ndim);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_reshape(const weft_tensor* t, int ndim) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_reshape(t, load(scratch.a, ndim, s), ndim);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_permute(const weft_tensor* t, int ndim) {
  int64_t d[WEFT_MAX_DIMS];
  return weft_permute(t, load(scratch.a, ndim, d), ndim);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_expand(const weft_tensor* t, int ndim) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_expand(t, load(scratch.a, ndim, s), ndim);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_transpose(const weft_tensor* t, double d0, double d1) {
  return weft_transpose(t, to_i64(d0), to_i64(d1));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_t(const weft_tensor* t) {
  return weft_t(t);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_squeeze(const weft_tensor* t) {
  return weft_squeeze(t);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_squeeze_dim(const weft_tensor* t, double dim) {
  return weft_squeeze_dim(t, to_i64(dim));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_unsqueeze(const weft_tensor* t, double dim) {
  return weft_unsqueeze(t, to_i64(dim));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_narrow(const weft_tensor* t, double dim, double start,
                                                   double length) {
  return weft_narrow(t, to_i64(dim), to_i64(start), to_i64(length));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_slice(const weft_tensor* t, double dim, double start,
                                                  double end, double step) {
  return weft_slice(t, to_i64(dim), to_i64(start), to_i64(end), to_i64(step));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_select(const weft_tensor* t, double dim, double index) {
  return weft_select(t, to_i64(dim), to_i64(index));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_flatten(const weft_tensor* t, double start, double end) {
  return weft_flatten(t, to_i64(start), to_i64(end));
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_unflatten(const weft_tensor* t, double dim, int nsizes) {
  int64_t s[WEFT_MAX_DIMS];
  return weft_unflatten(t, to_i64(dim), load(scratch.a, nsizes, s), nsizes);
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_movedim(const weft_tensor* t, int n) {
  int64_t src[WEFT_MAX_DIMS], dst[WEFT_MAX_DIMS];
  return weft_movedim(t, load(scratch.a, n, src), load(scratch.b, n, dst), n);
}
