/* The indexing driver (src/ops/cpu/index.c): strided walks for gather,
 * scatter, masked_fill, masked_select and nonzero, threaded over rows. The
 * ops (src/ops/index.c) check shapes, dtypes and every index first, so the
 * loops here never see an index out of range. */
#ifndef WEFT_OPS_CPU_INDEX_H
#define WEFT_OPS_CPU_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/dtype.h"
#include "weft/error.h"
#include "weft/tensor.h"

/* A walk over nd dims of sizes (the inner dim last) of up to three operands
 * with byte strides. Rows are the positions of every dim but the last. */
typedef struct {
  int nd;
  int64_t sizes[WEFT_MAX_DIMS];
  int64_t strides[3][WEFT_MAX_DIMS];
  char* data[3];
} weft_index_walk;

typedef enum { WEFT_SCATTER_ASSIGN, WEFT_SCATTER_ADD, WEFT_SCATTER_MUL } weft_scatter_mode;

/* One indexed move: the walk's operand 0 is the written tensor, 1 the index
 * (int64 or int32), 2 the read one (NULL with a value). Element j of a row
 * moves between the indexed tensor's row + j * its inner stride + index *
 * dim_stride (bytes) and the other operand's row + j * its inner stride: a
 * move along the indexed dim gives the indexed tensor inner stride 0. */
typedef struct {
  weft_index_walk w;
  weft_dtype dtype;     /* of operands 0 and 2 */
  weft_dtype idx_dtype; /* int64 or int32 */
  int64_t dim_stride;
  weft_scatter_mode mode;
  bool serial;            /* scatter: one thread (an index may repeat across rows) */
  unsigned char value[8]; /* scatter's scalar, in dtype */
} weft_index_move;

/* out[p] = self[p with p[dim] = index[p]] (index_select, gather, take). */
weft_status weft__index_gather_run(const weft_index_move* m);
/* self[p with p[dim] = index[p]] (=, +=, *=) src[p] or the value. */
weft_status weft__index_scatter_run(const weft_index_move* m);
/* Operand 0 (dtype) takes value where operand 1 (bool/uint8 mask) is set. */
weft_status weft__index_masked_fill_run(const weft_index_walk* w, weft_dtype dtype, const unsigned char* value);

/* The first element of the walk's operand 0 (int64/int32) outside [lo, hi),
 * in C order, skipping stride-0 dims; false when every one is inside. */
bool weft__index_find_bad(const weft_index_walk* w, weft_dtype idx_dtype, int64_t lo, int64_t hi, int64_t* bad);
/* Operand 0 (int64) += operand 1's index (int64, negative ones wrapped by
 * size) times stride, over the walk (advanced indexing's element offsets). */
void weft__index_add_offsets(const weft_index_walk* w, int64_t size, int64_t stride);
/* Elements of operand 0 (a dtype-typed tensor, or a mask) that are nonzero. */
int64_t weft__index_count_nonzero(const weft_index_walk* w, weft_dtype dtype);
/* Operand 1's elements (element size es) where the mask (operand 0) is set,
 * packed into out in C order. */
void weft__index_masked_select(const weft_index_walk* w, size_t es, char* out);
/* The coordinates of operand 0's nonzero elements: element i's coordinate d
 * at out[i * row_stride + d * col_stride]. */
void weft__index_nonzero(const weft_index_walk* w, weft_dtype dtype, int64_t* out, int64_t row_stride,
                         int64_t col_stride);

/* Sets up a walk over t's sizes as operand 0 (more operands: set strides
 * and data yourself), with dim moved innermost (dim < 0: keep the order);
 * a 0-dim t walks one element. */
void weft__index_walk_init(weft_index_walk* w, const weft_tensor* t, int dim);
/* Adds operand k: t's data and strides, permuted as the walk's dims (t must
 * have the walk's rank or be broadcast to it by the caller); dim the walk's
 * moved dim, as given to init. */
void weft__index_walk_add(weft_index_walk* w, int k, const weft_tensor* t, int dim);

#endif
