/* The block-copy driver of cat (src/ops/cpu/cat.c): inputs and output laid
 * out alike (contiguous in one memory format, one dtype), so the output is,
 * per outer index, each input's block in turn (PyTorch's cat fast path). */
#ifndef WEFT_OPS_CPU_CAT_H
#define WEFT_OPS_CPU_CAT_H

#include <stddef.h>
#include <stdint.h>

#include "weft/error.h"

/* out = rows x [src[0] block | src[1] block | ...]: row r of out holds
 * bytes[i] bytes from src[i] + r * bytes[i] for each i in order. Parallel
 * over the output's bytes with weft_parallel_for; same bytes for any thread
 * count. */
weft_status weft__cat_blocks(void* out, const void* const* src, const size_t* bytes, int64_t n, int64_t rows);

#endif
