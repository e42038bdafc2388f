/* Scalar types, their names (PyTorch's) and PyTorch's type-promotion table. */
#ifndef WEFT_DTYPE_H
#define WEFT_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum suffix, name, element size, category) ; category: 0 bool, 1 integral, 2 floating.
 * Order is the promotion table's order; never reorder. */
#define WEFT_DTYPE_LIST(X)          \
  X(BOOL, "bool", 1, 0)             \
  X(UINT8, "uint8", 1, 1)           \
  X(INT8, "int8", 1, 1)             \
  X(INT16, "int16", 2, 1)           \
  X(INT32, "int32", 4, 1)           \
  X(INT64, "int64", 8, 1)           \
  X(FLOAT16, "float16", 2, 2)       \
  X(BFLOAT16, "bfloat16", 2, 2)     \
  X(FLOAT32, "float32", 4, 2)       \
  X(FLOAT64, "float64", 8, 2)

#define WEFT__DTYPE_ENUM(e, name, size, cat) WEFT_##e,
typedef enum { WEFT_DTYPE_LIST(WEFT__DTYPE_ENUM) WEFT_DTYPE_COUNT } weft_dtype;
#undef WEFT__DTYPE_ENUM

const char* weft_dtype_name(weft_dtype t);          /* "float32"; "?" when out of range */
/* Accepts PyTorch's names and aliases ("float"/"float32"/"torch.float32", "half", "long", ...).
 * Returns WEFT_OK or WEFT_TYPE_ERROR with a message. */
int weft_dtype_from_name(const char* name, weft_dtype* out);
size_t weft_dtype_size(weft_dtype t);
bool weft_dtype_is_valid(int t);
bool weft_dtype_is_floating(weft_dtype t);
bool weft_dtype_is_integral(weft_dtype t, bool include_bool);
/* torch.promote_types */
weft_dtype weft_promote_types(weft_dtype a, weft_dtype b);
/* torch.get_default_dtype / set_default_dtype: the dtype floating factories
 * (empty, zeros, rand, ... with dtype None) make. float32 or float64 only;
 * anything else is WEFT_TYPE_ERROR. Process-wide, like PyTorch's. */
weft_dtype weft_get_default_dtype(void);
int weft_set_default_dtype(weft_dtype t);
/* torch.can_cast(from, to): same-kind casting rule used by out= and in-place ops */
bool weft_can_cast(weft_dtype from, weft_dtype to);

#ifdef __cplusplus
}
#endif
#endif
