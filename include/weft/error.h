/* Errors: one status list, a thread-local detailed message.
 *
 * Every call that can fail on user input returns a weft_status (or NULL for
 * calls that return a handle) and leaves a message for this thread in
 * weft_last_error(). The message names the op and the offending values and
 * follows PyTorch's wording where PyTorch has one. */
#ifndef WEFT_ERROR_H
#define WEFT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, generic message, JS error name) */
#define WEFT_STATUS_LIST(X)                                              \
  X(OK, "no error", "Ok")                                                \
  X(INVALID_ARGUMENT, "invalid argument", "InvalidArgument")             \
  X(INDEX_ERROR, "index out of range", "IndexError")                     \
  X(TYPE_ERROR, "unsupported dtype", "TypeError")                        \
  X(SHAPE_ERROR, "shape mismatch", "ShapeError")                         \
  X(OVERFLOW, "integer overflow", "OverflowError")                       \
  X(OUT_OF_MEMORY, "out of memory", "OutOfMemory")                       \
  X(ZERO_DIVISION, "division by zero", "ZeroDivisionError")              \
  X(NOT_IMPLEMENTED, "not implemented", "NotImplemented")                \
  X(DISPATCH_ERROR, "no kernel for dispatch key", "DispatchError")       \
  X(INTERNAL, "internal error", "InternalError")

#define WEFT__STATUS_ENUM(name, msg, js) WEFT_##name,
typedef enum { WEFT_STATUS_LIST(WEFT__STATUS_ENUM) WEFT_STATUS_COUNT } weft_status;
#undef WEFT__STATUS_ENUM

/* Generic, static text for a status. */
const char* weft_status_str(weft_status s);
/* The JS-facing error class name for a status ("IndexError", ...). */
const char* weft_status_name(weft_status s);
/* This thread's last detailed message ("" when the last failing call left none). */
const char* weft_last_error(void);
/* This thread's last status. */
weft_status weft_last_status(void);
/* Forget the last error (tests; the JS layer after it has thrown). */
void weft_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
