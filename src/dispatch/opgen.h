/* Code generation for operators, C preprocessor only (the counterpart of
 * torchgen). An op table is a list of
 *
 *   WEFT_OP(cname, "schema", RET, (KIND, name), (KIND, name), ...)
 *
 * one (KIND, name) per schema argument, in schema order. RET is how the C
 * function returns the schema's returns:
 *   TENSOR   `-> Tensor`: a new weft_tensor*, NULL on error
 *   STATUS   `-> Tensor(a!)` of an in-place op: weft_status (the schema
 *            returns the mutated first argument)
 *   TENSOR2  `-> (Tensor, Tensor)` (named or not): a weft_tensor2 holding two
 *            new references, t[0] the first return; both NULL on error (out=
 *            forms return new references to their out tensors). Boxed, the
 *            two are pushed in order (t[1] on top).
 *   TENSOR3  `-> (Tensor, Tensor, Tensor)`: a weft_tensor3, each entry a new
 *            reference or NULL (an undefined output, as an output_mask
 *            leaves it); status set on error. Boxed, three values pushed
 *            in order, None for an undefined one.
 *   TENSOR4  `-> (Tensor, Tensor, Tensor, Tensor)`: a weft_tensor4, four new
 *            references, all NULL on error. Boxed, four values in order.
 *   TENSOR_LIST `-> Tensor[]`: a weft_tensor_list (a malloc'd array of n new
 *            references; t NULL on error, free with weft_tensor_list_release).
 *            Boxed, one Tensor[] value whose array the list hands over.
 * A return kind is five macros below (WEFT__RT_, _RN_, _RERR_, _RPUSH_,
 * _RPOP_) and its JS reader (src/wasm/exports_dispatch.c, js/ops.js). From a line,
 *
 *   WEFT_OP_DECLARE  declares  weft_<cname>(...)            the dispatching entry point
 *                              weft_redispatch_<cname>(ks, ...)
 *                              weft_fn_<cname> / weft_fnks_<cname>   kernel types (without /
 *                                                                    with a leading keyset)
 *                              weft_impl_<cname>[_ks](key, fn, name) typed registration
 *   WEFT_OP_DEFINE   defines them, with the box/unbox adapters and the
 *                    BackendSelect kernel (for ops with a Device argument)
 *   WEFT_OP_REGISTER registers the schema (a statement; returns from the
 *                    enclosing weft_status function on failure)
 *
 * Kinds and their C parameters:
 *   TENSOR      const weft_tensor*        Tensor
 *   MTENSOR     weft_tensor*              Tensor(a!) (mutated)
 *   OPT_TENSOR  const weft_tensor* / NULL Tensor?
 *   TENSOR_LIST const weft_tensor* const* n, int64_t n_len   Tensor[] (no NULL entry)
 *   OPT_TENSOR_LIST const weft_tensor* const* n, int64_t n_len   Tensor?[] (entries may be NULL)
 *   INT         int64_t                   int, SymInt
 *   OPT_INT     int64_t (None: INT64_MIN) int?, SymInt?
 *   INT_LIST    const int64_t* n, int64_t n_len    int[], int[N], SymInt[]
 *   OPT_INT_LIST const int64_t* n, int64_t n_len   int[]?, int[N]? (None: NULL, 0)
 *   DOUBLE      double                    float, or Scalar where the C API takes a double
 *   OPT_DOUBLE  double (None: NaN)        float? (a scale factor: NaN is never a meaningful one)
 *   BOOL        bool                      bool
 *   BOOL_LIST   const bool* n, int64_t n_len   bool[], bool[N] (boxed: an int[] of 0 and 1, the
 *                                         form JS and the wasm ABI pass it in)
 *   SCALAR      weft_scalar               Scalar
 *   OPT_SCALAR  const weft_scalar* / NULL Scalar? (the pointed-to value lives for the call)
 *   DTYPE       weft_dtype                ScalarType (ScalarType?: None -> -1)
 *   MEMORY_FORMAT weft_memory_format      MemoryFormat (MemoryFormat?: None -> -1, the kernel's default)
 *   DEVICE      weft_device               Device (Device?: None -> cpu)
 *   STRING      const char*               str
 */
#ifndef WEFT_DISPATCH_OPGEN_H
#define WEFT_DISPATCH_OPGEN_H

#include "dispatch/dispatch_internal.h"

/* ---- FOR_EACH over up to 16 (KIND, name) items ---- */
#define WEFT__CAT(a, b) WEFT__CAT_I(a, b)
#define WEFT__CAT_I(a, b) a##b
#define WEFT__NARGS(...) WEFT__NARGS_I(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WEFT__NARGS_I(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define WEFT__FE_1(M, x) M x
#define WEFT__FE_2(M, x, ...) M x WEFT__FE_1(M, __VA_ARGS__)
#define WEFT__FE_3(M, x, ...) M x WEFT__FE_2(M, __VA_ARGS__)
#define WEFT__FE_4(M, x, ...) M x WEFT__FE_3(M, __VA_ARGS__)
#define WEFT__FE_5(M, x, ...) M x WEFT__FE_4(M, __VA_ARGS__)
#define WEFT__FE_6(M, x, ...) M x WEFT__FE_5(M, __VA_ARGS__)
#define WEFT__FE_7(M, x, ...) M x WEFT__FE_6(M, __VA_ARGS__)
#define WEFT__FE_8(M, x, ...) M x WEFT__FE_7(M, __VA_ARGS__)
#define WEFT__FE_9(M, x, ...) M x WEFT__FE_8(M, __VA_ARGS__)
#define WEFT__FE_10(M, x, ...) M x WEFT__FE_9(M, __VA_ARGS__)
#define WEFT__FE_11(M, x, ...) M x WEFT__FE_10(M, __VA_ARGS__)
#define WEFT__FE_12(M, x, ...) M x WEFT__FE_11(M, __VA_ARGS__)
#define WEFT__FE_13(M, x, ...) M x WEFT__FE_12(M, __VA_ARGS__)
#define WEFT__FE_14(M, x, ...) M x WEFT__FE_13(M, __VA_ARGS__)
#define WEFT__FE_15(M, x, ...) M x WEFT__FE_14(M, __VA_ARGS__)
#define WEFT__FE_16(M, x, ...) M x WEFT__FE_15(M, __VA_ARGS__)
#define WEFT__FOR_EACH(M, ...) WEFT__CAT(WEFT__FE_, WEFT__NARGS(__VA_ARGS__))(M, __VA_ARGS__)
/* Drops the first element of a comma list: WEFT__TAIL(~ , a, b) -> a, b */
#define WEFT__TAIL(...) WEFT__TAIL_I(__VA_ARGS__)
#define WEFT__TAIL_I(first, ...) __VA_ARGS__

/* ---- per-kind pieces: P params, A args, U unbox, B box, KS tensor keys, DK device keys, ID ---- */
enum {
  WEFT__K_TENSOR, WEFT__K_MTENSOR, WEFT__K_OPT_TENSOR, WEFT__K_INT, WEFT__K_OPT_INT, WEFT__K_INT_LIST, WEFT__K_DOUBLE,
  WEFT__K_BOOL, WEFT__K_SCALAR, WEFT__K_DTYPE, WEFT__K_MEMORY_FORMAT, WEFT__K_DEVICE, WEFT__K_STRING,
  WEFT__K_OPT_INT_LIST, WEFT__K_OPT_SCALAR, WEFT__K_TENSOR_LIST, WEFT__K_OPT_TENSOR_LIST, WEFT__K_BOOL_LIST,
  WEFT__K_OPT_DOUBLE
};

#define WEFT__P(K, n) WEFT__P_##K(n)
#define WEFT__A(K, n) WEFT__A_##K(n)
#define WEFT__U(K, n) WEFT__U_##K(n)
#define WEFT__B(K, n) WEFT__B_##K(n)
#define WEFT__KS(K, n) WEFT__KS_##K(n)
#define WEFT__DK(K, n) WEFT__DK_##K(n)
#define WEFT__ID(K, n) WEFT__K_##K,
/* A constant expression: does the argument list hold a Device? Ops without
 * one get no BackendSelect kernel, so the compiler drops its code. */
#define WEFT__HAS_DEVICE(...) (0 WEFT__FOR_EACH(WEFT__ISDEV, __VA_ARGS__))
#define WEFT__ISDEV(K, n) || WEFT__K_##K == WEFT__K_DEVICE

#define WEFT__A_1(n) , n
#define WEFT__KS_0(n)
#define WEFT__DK_0(n)
#define WEFT__SIMPLE_U(T, fn, n) T n = fn(&a_[i_++], &bad_);

#define WEFT__P_TENSOR(n) , const weft_tensor* n
#define WEFT__A_TENSOR WEFT__A_1
#define WEFT__U_TENSOR(n) WEFT__SIMPLE_U(const weft_tensor*, weft__unbox_tensor, n)
#define WEFT__B_TENSOR(n) if (!s_) s_ = weft_stack_push_tensor(&st_, n);
#define WEFT__KS_TENSOR(n) | weft__tensor_keyset(n)
#define WEFT__DK_TENSOR WEFT__DK_0

#define WEFT__P_MTENSOR(n) , weft_tensor* n
#define WEFT__A_MTENSOR WEFT__A_1
#define WEFT__U_MTENSOR(n) WEFT__SIMPLE_U(weft_tensor*, weft__unbox_tensor, n)
#define WEFT__B_MTENSOR WEFT__B_TENSOR
#define WEFT__KS_MTENSOR WEFT__KS_TENSOR
#define WEFT__DK_MTENSOR WEFT__DK_0

#define WEFT__P_OPT_TENSOR(n) , const weft_tensor* n
#define WEFT__A_OPT_TENSOR WEFT__A_1
#define WEFT__U_OPT_TENSOR(n) WEFT__SIMPLE_U(const weft_tensor*, weft__unbox_opt_tensor, n)
#define WEFT__B_OPT_TENSOR WEFT__B_TENSOR
#define WEFT__KS_OPT_TENSOR WEFT__KS_TENSOR
#define WEFT__DK_OPT_TENSOR WEFT__DK_0

/* A Tensor[] dispatches on the keys of all its tensors (NULL entries of a Tensor?[] add none). */
static inline weft_keyset weft__tensor_list_keyset(const weft_tensor* const* t, int64_t n) {
  weft_keyset ks = 0;
  for (int64_t i = 0; i < n; i++) ks |= weft__tensor_keyset(t[i]);
  return ks;
}

#define WEFT__P_TENSOR_LIST(n) , const weft_tensor* const* n, int64_t n##_len
#define WEFT__A_TENSOR_LIST(n) , n, n##_len
#define WEFT__U_TENSOR_LIST(n)                            \
  int64_t n##_len = 0;                                    \
  const weft_tensor* const* n = weft__unbox_tensor_list(&a_[i_++], false, &n##_len, &bad_);
#define WEFT__B_TENSOR_LIST(n) \
  if (!s_) s_ = weft_stack_push_tensor_list(&st_, (weft_tensor* const*)n, n##_len);
#define WEFT__KS_TENSOR_LIST(n) | weft__tensor_list_keyset(n, n##_len)
#define WEFT__DK_TENSOR_LIST WEFT__DK_0

#define WEFT__P_OPT_TENSOR_LIST WEFT__P_TENSOR_LIST
#define WEFT__A_OPT_TENSOR_LIST WEFT__A_TENSOR_LIST
#define WEFT__U_OPT_TENSOR_LIST(n)                        \
  int64_t n##_len = 0;                                    \
  const weft_tensor* const* n = weft__unbox_tensor_list(&a_[i_++], true, &n##_len, &bad_);
#define WEFT__B_OPT_TENSOR_LIST WEFT__B_TENSOR_LIST
#define WEFT__KS_OPT_TENSOR_LIST WEFT__KS_TENSOR_LIST
#define WEFT__DK_OPT_TENSOR_LIST WEFT__DK_0

#define WEFT__P_INT(n) , int64_t n
#define WEFT__A_INT WEFT__A_1
#define WEFT__U_INT(n) WEFT__SIMPLE_U(int64_t, weft__unbox_int, n)
#define WEFT__B_INT(n) if (!s_) s_ = weft_stack_push_int(&st_, n);
#define WEFT__KS_INT WEFT__KS_0
#define WEFT__DK_INT WEFT__DK_0

#define WEFT__P_OPT_INT(n) , int64_t n
#define WEFT__A_OPT_INT WEFT__A_1
#define WEFT__U_OPT_INT(n) WEFT__SIMPLE_U(int64_t, weft__unbox_opt_int, n)
#define WEFT__B_OPT_INT(n) \
  if (!s_) s_ = (n) == INT64_MIN ? weft_stack_push_none(&st_) : weft_stack_push_int(&st_, n);
#define WEFT__KS_OPT_INT WEFT__KS_0
#define WEFT__DK_OPT_INT WEFT__DK_0

#define WEFT__P_INT_LIST(n) , const int64_t* n, int64_t n##_len
#define WEFT__A_INT_LIST(n) , n, n##_len
#define WEFT__U_INT_LIST(n)                               \
  int64_t n##_len = 0;                                    \
  const int64_t* n = weft__unbox_int_list(&a_[i_++], &n##_len, &bad_);
#define WEFT__B_INT_LIST(n) if (!s_) s_ = weft_stack_push_int_list(&st_, n, n##_len);
#define WEFT__KS_INT_LIST WEFT__KS_0
#define WEFT__DK_INT_LIST WEFT__DK_0

#define WEFT__P_OPT_INT_LIST WEFT__P_INT_LIST
#define WEFT__A_OPT_INT_LIST WEFT__A_INT_LIST
#define WEFT__U_OPT_INT_LIST(n)                           \
  int64_t n##_len = 0;                                    \
  const int64_t* n = weft__unbox_opt_int_list(&a_[i_++], &n##_len, &bad_);
#define WEFT__B_OPT_INT_LIST(n) \
  if (!s_) s_ = n ? weft_stack_push_int_list(&st_, n, n##_len) : weft_stack_push_none(&st_);
#define WEFT__KS_OPT_INT_LIST WEFT__KS_0
#define WEFT__DK_OPT_INT_LIST WEFT__DK_0

#define WEFT__P_DOUBLE(n) , double n
#define WEFT__A_DOUBLE WEFT__A_1
#define WEFT__U_DOUBLE(n) WEFT__SIMPLE_U(double, weft__unbox_double, n)
#define WEFT__B_DOUBLE(n) if (!s_) s_ = weft_stack_push_double(&st_, n);
#define WEFT__KS_DOUBLE WEFT__KS_0
#define WEFT__DK_DOUBLE WEFT__DK_0

#define WEFT__P_OPT_DOUBLE(n) , double n
#define WEFT__A_OPT_DOUBLE WEFT__A_1
#define WEFT__U_OPT_DOUBLE(n) WEFT__SIMPLE_U(double, weft__unbox_opt_double, n)
#define WEFT__B_OPT_DOUBLE(n) if (!s_) s_ = (n) != (n) ? weft_stack_push_none(&st_) : weft_stack_push_double(&st_, n);
#define WEFT__KS_OPT_DOUBLE WEFT__KS_0
#define WEFT__DK_OPT_DOUBLE WEFT__DK_0

#define WEFT__P_BOOL(n) , bool n
#define WEFT__A_BOOL WEFT__A_1
#define WEFT__U_BOOL(n) WEFT__SIMPLE_U(bool, weft__unbox_bool, n)
#define WEFT__B_BOOL(n) if (!s_) s_ = weft_stack_push_bool(&st_, n);
#define WEFT__KS_BOOL WEFT__KS_0
#define WEFT__DK_BOOL WEFT__DK_0

#define WEFT__P_BOOL_LIST(n) , const bool* n, int64_t n##_len
#define WEFT__A_BOOL_LIST(n) , n, n##_len
#define WEFT__U_BOOL_LIST(n)                              \
  bool n##_b_[WEFT_MAX_DIMS];                             \
  int64_t n##_len = 0;                                    \
  const bool* n = weft__unbox_bool_list(&a_[i_++], n##_b_, WEFT_MAX_DIMS, &n##_len, &bad_);
#define WEFT__B_BOOL_LIST(n) if (!s_) s_ = weft__stack_push_bool_list(&st_, n, n##_len);
#define WEFT__KS_BOOL_LIST WEFT__KS_0
#define WEFT__DK_BOOL_LIST WEFT__DK_0

#define WEFT__P_SCALAR(n) , weft_scalar n
#define WEFT__A_SCALAR WEFT__A_1
#define WEFT__U_SCALAR(n) WEFT__SIMPLE_U(weft_scalar, weft__unbox_scalar, n)
#define WEFT__B_SCALAR(n) if (!s_) s_ = weft_stack_push_scalar(&st_, n);
#define WEFT__KS_SCALAR WEFT__KS_0
#define WEFT__DK_SCALAR WEFT__DK_0

#define WEFT__P_OPT_SCALAR(n) , const weft_scalar* n
#define WEFT__A_OPT_SCALAR WEFT__A_1
#define WEFT__U_OPT_SCALAR(n)                             \
  weft_scalar n##_v_;                                     \
  const weft_scalar* n = weft__unbox_opt_scalar(&a_[i_++], &n##_v_, &bad_);
#define WEFT__B_OPT_SCALAR(n) \
  if (!s_) s_ = n ? weft_stack_push_scalar(&st_, *n) : weft_stack_push_none(&st_);
#define WEFT__KS_OPT_SCALAR WEFT__KS_0
#define WEFT__DK_OPT_SCALAR WEFT__DK_0

#define WEFT__P_DTYPE(n) , weft_dtype n
#define WEFT__A_DTYPE WEFT__A_1
#define WEFT__U_DTYPE(n) WEFT__SIMPLE_U(weft_dtype, weft__unbox_dtype, n)
#define WEFT__B_DTYPE(n) \
  if (!s_) s_ = (int)(n) < 0 ? weft_stack_push_none(&st_) : weft_stack_push_dtype(&st_, n);
#define WEFT__KS_DTYPE WEFT__KS_0
#define WEFT__DK_DTYPE WEFT__DK_0

#define WEFT__P_MEMORY_FORMAT(n) , weft_memory_format n
#define WEFT__A_MEMORY_FORMAT WEFT__A_1
#define WEFT__U_MEMORY_FORMAT(n) WEFT__SIMPLE_U(weft_memory_format, weft__unbox_memory_format, n)
#define WEFT__B_MEMORY_FORMAT(n) \
  if (!s_) s_ = (int)(n) < 0 ? weft_stack_push_none(&st_) : weft_stack_push_memory_format(&st_, n);
#define WEFT__KS_MEMORY_FORMAT WEFT__KS_0
#define WEFT__DK_MEMORY_FORMAT WEFT__DK_0

#define WEFT__P_DEVICE(n) , weft_device n
#define WEFT__A_DEVICE WEFT__A_1
#define WEFT__U_DEVICE(n) WEFT__SIMPLE_U(weft_device, weft__unbox_device, n)
#define WEFT__B_DEVICE(n) if (!s_) s_ = weft_stack_push_device(&st_, n);
#define WEFT__KS_DEVICE WEFT__KS_0
#define WEFT__DK_DEVICE(n) | weft_device_backend_keyset(n)

#define WEFT__P_STRING(n) , const char* n
#define WEFT__A_STRING WEFT__A_1
#define WEFT__U_STRING(n) WEFT__SIMPLE_U(const char*, weft__unbox_string, n)
#define WEFT__B_STRING(n) if (!s_) s_ = weft_stack_push_string(&st_, n);
#define WEFT__KS_STRING WEFT__KS_0
#define WEFT__DK_STRING WEFT__DK_0

/* ---- unbox helpers: set *bad on a type mismatch ---- */
weft_tensor* weft__unbox_tensor(const weft_ivalue* v, int* bad);
weft_tensor* weft__unbox_opt_tensor(const weft_ivalue* v, int* bad);
/* A Tensor[] value's array; a NULL entry is a mismatch unless elem_optional (Tensor?[]). */
const weft_tensor* const* weft__unbox_tensor_list(const weft_ivalue* v, bool elem_optional, int64_t* len, int* bad);
int64_t weft__unbox_int(const weft_ivalue* v, int* bad);
int64_t weft__unbox_opt_int(const weft_ivalue* v, int* bad);
const int64_t* weft__unbox_int_list(const weft_ivalue* v, int64_t* len, int* bad);
const int64_t* weft__unbox_opt_int_list(const weft_ivalue* v, int64_t* len, int* bad); /* None: NULL, 0 */
double weft__unbox_double(const weft_ivalue* v, int* bad);
double weft__unbox_opt_double(const weft_ivalue* v, int* bad); /* None: NaN */
bool weft__unbox_bool(const weft_ivalue* v, int* bad);
/* A bool[] (an int[] of 0 and 1) into buf (at most cap entries). */
const bool* weft__unbox_bool_list(const weft_ivalue* v, bool* buf, int64_t cap, int64_t* len, int* bad);
weft_status weft__stack_push_bool_list(weft_stack* s, const bool* v, int64_t n);
weft_scalar weft__unbox_scalar(const weft_ivalue* v, int* bad);
const weft_scalar* weft__unbox_opt_scalar(const weft_ivalue* v, weft_scalar* storage, int* bad); /* None: NULL */
weft_dtype weft__unbox_dtype(const weft_ivalue* v, int* bad);
weft_memory_format weft__unbox_memory_format(const weft_ivalue* v, int* bad);
weft_device weft__unbox_device(const weft_ivalue* v, int* bad);
const char* weft__unbox_string(const weft_ivalue* v, int* bad);
/* TENSOR2 returns on a stack: pushes both (takes the references, releases
 * them on failure); pops both (t[1] is on top), or both NULL with an error. */
weft_status weft__stack_push_tensor2(weft_stack* s, weft_tensor2 r);
weft_tensor2 weft__stack_pop_tensor2(weft_stack* s);
/* TENSOR3 returns: three values, None for a NULL entry (takes the references). */
weft_status weft__stack_push_tensor3(weft_stack* s, weft_tensor3 r);
weft_tensor3 weft__stack_pop_tensor3(weft_stack* s);
/* TENSOR4 returns: four values (takes the references); pops four. */
weft_status weft__stack_push_tensor4(weft_stack* s, weft_tensor4 r);
weft_tensor4 weft__stack_pop_tensor4(weft_stack* s);
/* TENSOR_LIST returns: pushes the list as one Tensor[] value (takes its
 * references and array, releases them on failure); pops one (t NULL + error
 * when the top is not a Tensor[]). */
weft_status weft__stack_push_tensor_list_owned(weft_stack* s, weft_tensor_list r);
weft_tensor_list weft__stack_pop_tensor_list(weft_stack* s);
/* Error for a failed unbox of op's arguments; drops them. */
weft_status weft__unbox_failed(const weft_op* op, weft_stack* stack, int64_t nargs);

/* ---- per return kind ---- */
#define WEFT__RT_TENSOR weft_tensor*
#define WEFT__RT_STATUS weft_status
#define WEFT__RT_TENSOR2 weft_tensor2
#define WEFT__RT_TENSOR_LIST weft_tensor_list
#define WEFT__RT_TENSOR3 weft_tensor3
#define WEFT__RT_TENSOR4 weft_tensor4
/* how many schema returns the C return carries (checked when the op is
 * defined); WEFT__RN_LIST: the one return is a Tensor[] */
#define WEFT__RN_LIST (-1)
#define WEFT__RN_TENSOR 1
#define WEFT__RN_STATUS 1
#define WEFT__RN_TENSOR2 2
#define WEFT__RN_TENSOR_LIST WEFT__RN_LIST
#define WEFT__RN_TENSOR3 3
#define WEFT__RN_TENSOR4 4
#define WEFT__RERR_TENSOR NULL
#define WEFT__RERR_STATUS weft_last_status()
#define WEFT__RERR_TENSOR2 ((weft_tensor2){{NULL, NULL}})
#define WEFT__RERR_TENSOR_LIST ((weft_tensor_list){NULL, 0})
#define WEFT__RERR_TENSOR3 ((weft_tensor3){{NULL, NULL, NULL}, weft_last_status()})
#define WEFT__RERR_TENSOR4 ((weft_tensor4){{NULL, NULL, NULL, NULL}})
/* unbox: push the result r_ after dropping the nargs arguments (a_ still valid until the drop) */
#define WEFT__RPUSH_TENSOR                                        \
  weft_stack_drop(stack, n_);                                     \
  if (!r_) return weft_last_status();                             \
  return weft_stack_push_tensor_owned(stack, r_);
#define WEFT__RPUSH_STATUS                                        \
  if (r_ != WEFT_OK) {                                            \
    weft_stack_drop(stack, n_);                                   \
    return r_;                                                    \
  }                                                               \
  weft_tensor* self_ = weft_tensor_retain(a_[0].u.t);             \
  weft_stack_drop(stack, n_);                                     \
  return weft_stack_push_tensor_owned(stack, self_);
#define WEFT__RPUSH_TENSOR2                                       \
  weft_stack_drop(stack, n_);                                     \
  if (!r_.t[0]) return weft_last_status();                        \
  return weft__stack_push_tensor2(stack, r_);
#define WEFT__RPUSH_TENSOR3                                       \
  weft_stack_drop(stack, n_);                                     \
  if (r_.status) return r_.status;                                \
  return weft__stack_push_tensor3(stack, r_);
#define WEFT__RPUSH_TENSOR4                                       \
  weft_stack_drop(stack, n_);                                     \
  if (!r_.t[0]) return weft_last_status();                        \
  return weft__stack_push_tensor4(stack, r_);
#define WEFT__RPUSH_TENSOR_LIST                                   \
  weft_stack_drop(stack, n_);                                     \
  if (!r_.t) return weft_last_status();                           \
  return weft__stack_push_tensor_list_owned(stack, r_);
/* box: the boxed kernel's result back to the C return */
#define WEFT__RPOP_TENSOR                                         \
  weft_tensor* r_ = s_ ? NULL : weft_stack_pop_tensor(&st_);      \
  weft_stack_clear(&st_);                                         \
  return r_;
#define WEFT__RPOP_STATUS                                         \
  weft_stack_clear(&st_);                                         \
  return s_;
#define WEFT__RPOP_TENSOR2                                        \
  weft_tensor2 r_ = s_ ? WEFT__RERR_TENSOR2 : weft__stack_pop_tensor2(&st_); \
  weft_stack_clear(&st_);                                         \
  return r_;
#define WEFT__RPOP_TENSOR3                                        \
  weft_tensor3 r_ = s_ ? (weft_tensor3){{NULL, NULL, NULL}, s_} : weft__stack_pop_tensor3(&st_); \
  weft_stack_clear(&st_);                                         \
  return r_;
#define WEFT__RPOP_TENSOR4                                        \
  weft_tensor4 r_ = s_ ? WEFT__RERR_TENSOR4 : weft__stack_pop_tensor4(&st_); \
  weft_stack_clear(&st_);                                         \
  return r_;

#define WEFT__RPOP_TENSOR_LIST                                    \
  weft_tensor_list r_ = s_ ? WEFT__RERR_TENSOR_LIST : weft__stack_pop_tensor_list(&st_); \
  weft_stack_clear(&st_);                                         \
  return r_;

#define WEFT__PARAMS(...) WEFT__FOR_EACH(WEFT__P, __VA_ARGS__)
#define WEFT__ARGS(...) WEFT__FOR_EACH(WEFT__A, __VA_ARGS__)

/* ---- declarations ---- */
#define WEFT_OP_DECLARE(c, schema, R, ...)                                                   \
  typedef WEFT__RT_##R (*weft_fn_##c)(WEFT__TAIL(~ WEFT__PARAMS(__VA_ARGS__)));              \
  typedef WEFT__RT_##R (*weft_fnks_##c)(weft_keyset ks WEFT__PARAMS(__VA_ARGS__));           \
  WEFT__RT_##R weft_##c(WEFT__TAIL(~ WEFT__PARAMS(__VA_ARGS__)));                            \
  WEFT__RT_##R weft_redispatch_##c(weft_keyset ks WEFT__PARAMS(__VA_ARGS__));                \
  weft_registration* weft_impl_##c(weft_dispatch_key key, weft_fn_##c fn, const char* name); \
  weft_registration* weft_impl_##c##_ks(weft_dispatch_key key, weft_fnks_##c fn, const char* name); \
  weft_op* weft__op_##c(void);

/* ---- definitions ----
 * WEFT_OPGEN_INIT names the `void (void)` function that registers the
 * library the ops belong to (src/ops/ops.c: weft_init); entry points call it
 * on first use. Left undefined, ops must be registered before they are
 * called (tests with private ops register them in main). */
#ifndef WEFT_OPGEN_INIT
#define WEFT_OPGEN_INIT NULL
#endif
#define WEFT_OP_DEFINE(c, schema, R, ...)                                                       \
  weft_op* _Atomic weft__slot_##c;                                                              \
  static WEFT__RT_##R weft__box_##c(const weft_op* op_, const weft_kernel* k_, weft_keyset ks_  \
                                        WEFT__PARAMS(__VA_ARGS__)) {                            \
    weft_stack st_;                                                                             \
    weft_stack_init(&st_);                                                                      \
    weft_status s_ = WEFT_OK;                                                                   \
    WEFT__FOR_EACH(WEFT__B, __VA_ARGS__)                                                        \
    if (!s_) s_ = k_->boxed(op_, ks_, &st_, k_->ctx);                                           \
    WEFT__RPOP_##R                                                                              \
  }                                                                                             \
  static inline WEFT__RT_##R weft__run_##c(const weft_op* op_, const weft_kernel* k_,           \
                                           weft_keyset ks_ WEFT__PARAMS(__VA_ARGS__)) {         \
    if (k_->unboxed) {                                                                          \
      if (k_->flags & WEFT_KERNEL_TAKES_KEYSET)                                                 \
        return ((weft_fnks_##c)k_->unboxed)(ks_ WEFT__ARGS(__VA_ARGS__));                      \
      return ((weft_fn_##c)k_->unboxed)(WEFT__TAIL(~ WEFT__ARGS(__VA_ARGS__)));                 \
    }                                                                                           \
    return weft__box_##c(op_, k_, ks_ WEFT__ARGS(__VA_ARGS__));                                 \
  }                                                                                             \
  static WEFT__RT_##R weft__invoke_##c(const weft_op* op_, const weft__entry* e_, weft_keyset ks_, \
                                       bool re_ WEFT__PARAMS(__VA_ARGS__)) {                    \
    if (WEFT_UNLIKELY(weft__tracing())) {                                                       \
      int d_ = weft__trace_enter(op_, ks_, re_);                                                \
      WEFT__RT_##R r_ = weft__run_##c(op_, &e_->k, ks_ WEFT__ARGS(__VA_ARGS__));                \
      weft__trace_leave(d_);                                                                    \
      return r_;                                                                                \
    }                                                                                           \
    return weft__run_##c(op_, &e_->k, ks_ WEFT__ARGS(__VA_ARGS__));                             \
  }                                                                                             \
  WEFT__RT_##R weft_##c(WEFT__TAIL(~ WEFT__PARAMS(__VA_ARGS__))) {                              \
    const weft_op* op_ = weft__op_get(&weft__slot_##c, WEFT_OPGEN_INIT);                                         \
    weft_keyset ks_ = weft__call_keyset(op_, 0 WEFT__FOR_EACH(WEFT__KS, __VA_ARGS__));          \
    const weft__entry* e_ = weft__lookup(op_, ks_);                                             \
    if (!e_) return WEFT__RERR_##R;                                                             \
    return weft__invoke_##c(op_, e_, ks_, false WEFT__ARGS(__VA_ARGS__));                       \
  }                                                                                             \
  WEFT__RT_##R weft_redispatch_##c(weft_keyset ks_ WEFT__PARAMS(__VA_ARGS__)) {                 \
    const weft_op* op_ = weft__op_get(&weft__slot_##c, WEFT_OPGEN_INIT);                                         \
    ks_ = weft__redispatch_keyset(op_, ks_);                                                    \
    const weft__entry* e_ = weft__lookup(op_, ks_);                                             \
    if (!e_) return WEFT__RERR_##R;                                                             \
    return weft__invoke_##c(op_, e_, ks_, true WEFT__ARGS(__VA_ARGS__));                        \
  }                                                                                             \
  /* BackendSelect: redispatch to the backend the Device arguments name. */                    \
  static WEFT__RT_##R weft__backend_select_##c(weft_keyset ks_ WEFT__PARAMS(__VA_ARGS__)) {     \
    (void)ks_;                                                                                  \
    return weft_redispatch_##c(0 WEFT__FOR_EACH(WEFT__DK, __VA_ARGS__) WEFT__ARGS(__VA_ARGS__)); \
  }                                                                                             \
  static weft_status weft__unbox_##c(const weft_op* op_, const weft_kernel* k_, weft_keyset ks_, \
                                     weft_stack* stack) {                                       \
    const int64_t n_ = WEFT__NARGS(__VA_ARGS__);                                                \
    if (stack->size < n_) return weft__unbox_failed(op_, stack, stack->size);                   \
    weft_ivalue* a_ = stack->v + stack->size - n_;                                              \
    int i_ = 0, bad_ = 0;                                                                       \
    WEFT__FOR_EACH(WEFT__U, __VA_ARGS__)                                                        \
    (void)i_;                                                                                   \
    if (bad_) return weft__unbox_failed(op_, stack, n_);                                        \
    WEFT__RT_##R r_ = weft__run_##c(op_, k_, ks_ WEFT__ARGS(__VA_ARGS__));                      \
    WEFT__RPUSH_##R                                                                             \
  }                                                                                             \
  static const uint8_t weft__kinds_##c[] = {WEFT__FOR_EACH(WEFT__ID, __VA_ARGS__)};             \
  weft_registration* weft_impl_##c(weft_dispatch_key key, weft_fn_##c fn, const char* name) {  \
    weft_kernel k = {NULL, (weft_unboxed_fn)fn, NULL, name, 0};                                 \
    return weft_op_impl(weft__op_##c(), key, k);                       \
  }                                                                                             \
  weft_registration* weft_impl_##c##_ks(weft_dispatch_key key, weft_fnks_##c fn,               \
                                         const char* name) {                                    \
    weft_kernel k = {NULL, (weft_unboxed_fn)fn, NULL, name, WEFT_KERNEL_TAKES_KEYSET};          \
    return weft_op_impl(weft__op_##c(), key, k);                       \
  }                                                                                             \
  weft_op* weft__op_##c(void) { return (weft_op*)weft__op_get(&weft__slot_##c, WEFT_OPGEN_INIT); } \
  /* data, not code: one shared function registers every op from its entry */                  \
  static const weft__opgen_entry weft__gen_##c = {                                              \
      schema, weft__unbox_##c, weft__kinds_##c, (int)sizeof weft__kinds_##c, WEFT__RN_##R,     \
      &weft__slot_##c,                                                                          \
      WEFT__HAS_DEVICE(__VA_ARGS__) ? (weft_unboxed_fn)weft__backend_select_##c : NULL};       \
  static weft_status weft__register_##c(void) { return weft__opgen_register(&weft__gen_##c); }

/* Registers fn as the library's own kernel of op c for key (a WEFT_KEY_
 * suffix): a statement inside a weft_status function, which returns the
 * error when the registration fails or the key already has a kernel. The
 * typed variable checks fn's signature against the op's. */
#define WEFT_KERNEL(c, key, fn) WEFT_KERNEL_NAMED(c, key, fn, #fn)
/* (One out-of-line call per line: a library registers a thousand kernels,
 * and the inlined form was a tenth of the wasm's code.) */
#define WEFT_KERNEL_NAMED(c, key, fn, name)                                                      \
  do {                                                                                           \
    weft_fn_##c f_ = (fn);                                                                       \
    if (weft__kernel_register(weft__op_##c, WEFT_KEY_##key, (weft_unboxed_fn)f_, name))          \
      return weft_last_status();                                                                 \
  } while (0)

/* A statement inside a weft_status function. */
#define WEFT_OP_REGISTER(c, schema, R, ...)   \
  do {                                        \
    weft_status s_ = weft__register_##c();    \
    if (s_ != WEFT_OK) return s_;             \
  } while (0);

bool weft__op_has_device_arg(const weft_op* op);

#endif
