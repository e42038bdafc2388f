/* Storage: a refcounted block of bytes owned by one allocator. Tensors are
 * views onto a storage; many tensors may share one. */
#ifndef WEFT_STORAGE_H
#define WEFT_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "weft/alloc.h"
#include "weft/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_storage weft_storage;

/* nbytes may be 0. Meta storages have a size but no data. NULL + error on failure. */
weft_storage* weft_storage_new(int64_t nbytes, weft_device device);
weft_storage* weft_storage_retain(weft_storage* s);
void weft_storage_release(weft_storage* s);   /* NULL is a no-op */
void* weft_storage_data(const weft_storage* s);
int64_t weft_storage_nbytes(const weft_storage* s);
weft_device weft_storage_device(const weft_storage* s);
int32_t weft_storage_refcount(const weft_storage* s);

#ifdef __cplusplus
}
#endif
#endif
