/* Factories (operators: each goes through the dispatcher; src/ops/factory.c).
 * Every function returning a weft_tensor* returns a new reference, or NULL
 * with the error in weft_last_error(). */
#ifndef WEFT_FACTORY_H
#define WEFT_FACTORY_H

#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

weft_tensor* weft_empty(const int64_t* sizes, int64_t ndim, weft_dtype dtype,
                        weft_device device, weft_memory_format f);
weft_tensor* weft_empty_strided(const int64_t* sizes, const int64_t* strides, int64_t ndim,
                                weft_dtype dtype, weft_device device);
/* PRESERVE keeps self's strides when self is non-overlapping and dense, else
 * dense strides in self's dim order (infer_dense_strides), as PyTorch's empty_like. */
weft_tensor* weft_empty_like(const weft_tensor* self, weft_dtype dtype, weft_memory_format f);
/* Fill helpers used by JS factories and tests: value given as double and
 * converted with the dtype's cast rules. */
weft_status weft_fill_(weft_tensor* self, double value);
weft_tensor* weft_full(const int64_t* sizes, int64_t ndim, double value, weft_dtype dtype,
                       weft_device device);
weft_tensor* weft_arange(double start, double end, double step, weft_dtype dtype, weft_device device);

/* Random numbers: one global mt19937 generator, seeded like torch.manual_seed. */
void weft_manual_seed(uint64_t seed);
weft_tensor* weft_rand(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device);
weft_tensor* weft_randn(const int64_t* sizes, int64_t ndim, weft_dtype dtype, weft_device device);

#ifdef __cplusplus
}
#endif
#endif
