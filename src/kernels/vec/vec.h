/* The 128-bit vector layer every kernel is written against.
 *
 * One #if chain picks the backend; names follow wasm_simd128.h with a wv_
 * prefix and every backend gives wasm's semantics (NaN-propagating min/max,
 * saturating float->int truncation, round-half-even nearest), so a kernel
 * computes the same bits on every ISA. WEFT_VEC_FORCE_SCALAR builds the
 * portable backend anywhere: the build compiles each kernel once with it, and
 * tests compare it with the SIMD backend. Ops the backends share live once in
 * vec_generic.h. Each backend defines WEFT_VEC_ISA, the token WEFT_UKERNEL
 * puts into kernel names. */
#ifndef WEFT_VEC_H
#define WEFT_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(WEFT_VEC_FORCE_SCALAR)
#include "vec_scalar.h"
#elif defined(__wasm_simd128__)
#include "vec_wasm128.h"
#elif defined(__SSE2__)
#include "vec_sse2.h"
#else
#include "vec_scalar.h"
#endif

#include "vec_generic.h"

#endif
