/* Sorting lines of keys (plain C, compiled once): the pieces of sort, topk
 * and kthvalue (src/ops/sort.c) that see only counts and pointers.
 *
 * A key is an unsigned 64-bit integer whose order is PyTorch's element
 * order: NaN above +inf (every NaN equal), -0.0 equal to 0.0, signed
 * integers biased. `flip` inverts it (descending, largest). Pairs carry the
 * element's index along its line; every function orders by (key, index), so
 * ties keep their input order (a stable sort). */
#ifndef WEFT_KERNELS_SORT_H
#define WEFT_KERNELS_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/dtype.h"

typedef struct {
  uint64_t key;
  uint64_t idx;
} weft_sort_pair;

/* p[j] = {key of x[j * xs] (xs in bytes), j}, j < n */
void weft__sort_keys(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, bool flip, weft_sort_pair* p);

/* p[0..n) sorted by (key, idx) when p's indices ascend (as weft__sort_keys
 * leaves them): an LSD radix sort over the key bytes that differ, insertion
 * sort below 32 elements. tmp holds n pairs. */
void weft__sort_pairs(size_t n, weft_sort_pair* p, weft_sort_pair* tmp);

/* The k smallest elements of x[j * xs], j < n, as pairs sorted by (key,
 * idx) into best[0..k) (0 < k <= n): a max-heap of k over one pass, keys
 * made as the scan goes (weft__sort_keys's); nothing written but best. */
void weft__sort_select_keys(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, bool flip, size_t k,
                            weft_sort_pair* best);

#endif
