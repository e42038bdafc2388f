/* Helpers shared by the view files (view.c, view_dims.c). Not installed. */
#ifndef WEFT_CORE_VIEW_INTERNAL_H
#define WEFT_CORE_VIEW_INTERNAL_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

/* "[2, 3]" for error messages; big enough for WEFT_MAX_DIMS values of 20 digits. */
typedef struct {
  char s[WEFT_MAX_DIMS * 22 + 12];
} weft__dims_str;

static inline weft__dims_str weft__dims_fmt(const int64_t* v, int64_t n) {
  weft__dims_str b;
  size_t len = 0;
  b.s[len++] = '[';
  for (int64_t i = 0; i < n; i++) {
    if (sizeof b.s - len < 28) { /* room for one more value, "...]" and the NUL */
      memcpy(b.s + len, "...", 3);
      len += 3;
      break;
    }
    len += (size_t)snprintf(b.s + len, sizeof b.s - len, i ? ", %" PRId64 : "%" PRId64, v[i]);
  }
  b.s[len++] = ']';
  b.s[len] = '\0';
  return b;
}
#define WEFT__DIMS(v, n) (weft__dims_fmt((v), (n)).s)

/* A new handle on self's storage with the given layout. */
static inline weft_tensor* weft__view_of(const weft_tensor* self, const int64_t* sizes,
                                         const int64_t* strides, int64_t ndim, int64_t offset) {
  return weft__tensor_new(self->storage, sizes, strides, ndim, offset, self->dtype);
}

/* Same layout, new handle: PyTorch's alias(). */
static inline weft_tensor* weft__alias(const weft_tensor* self) {
  return weft__view_of(self, self->sizes, self->strides, self->ndim, self->storage_offset);
}

/* False + error when a sizes argument has too many dims (or a negative count). */
bool weft__check_view_ndim(const char* op, const int64_t* sizes, int64_t ndim);

#endif
