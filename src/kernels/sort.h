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

/* The k smallest of the n pairs p (indices ascending, as weft__sort_keys
 * leaves them) into best[0..k), sorted by (key, idx) when `sorted` (else in
 * no set order; equal keys still the first in index order) (0 < k <= n): a radix
 * select, then a radix sort of the k. Each round buckets the remaining
 * candidates by 8 bits of (key - min) below the range's top bit: the
 * buckets below the one holding the k-th are taken whole, that one is
 * narrowed in the next round; equal keys end a round and the first of them
 * in index order are taken. p is clobbered; scratch holds n pairs.
 * Cost ~3n + a sort of k: the heap's k log k per insertion loses from k of
 * a few dozen. */
void weft__sort_select_radix(size_t n, weft_sort_pair* p, size_t k, bool sorted, weft_sort_pair* best,
                             weft_sort_pair* scratch);

/* The k smallest elements of x[j * xs], j < n (0 < k <= n), as
 * weft__sort_select_radix gives them: the candidates are first cut down to
 * those at or below a bound from a sample of the line (one pass, no pairs
 * made for the rest), and the whole line taken when the sample falls short.
 * p and scratch hold n pairs each, best k. */
void weft__sort_select_sampled(weft_dtype t, size_t n, const char* x, ptrdiff_t xs, bool flip, size_t k, bool sorted,
                               weft_sort_pair* best, weft_sort_pair* p, weft_sort_pair* scratch);

#endif
