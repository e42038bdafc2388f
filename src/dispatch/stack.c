/* Boxed values (c10::IValue, reduced to what weft's schemas use) and the
 * boxed-call stack, plus the unbox helpers the generated adapters call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/opgen.h"

static const char* const tag_names[WEFT_IV_TAG_COUNT] = {
    [WEFT_IV_NONE] = "None",           [WEFT_IV_TENSOR] = "Tensor",
    [WEFT_IV_INT] = "int",             [WEFT_IV_DOUBLE] = "float",
    [WEFT_IV_BOOL] = "bool",           [WEFT_IV_INT_LIST] = "int[]",
    [WEFT_IV_DOUBLE_LIST] = "float[]", [WEFT_IV_TENSOR_LIST] = "Tensor[]",
    [WEFT_IV_STRING] = "str",          [WEFT_IV_DTYPE] = "ScalarType",
    [WEFT_IV_MEMORY_FORMAT] = "MemoryFormat", [WEFT_IV_DEVICE] = "Device"};

const char* weft_iv_tag_name(weft_iv_tag t) {
  return (int)t >= 0 && t < WEFT_IV_TAG_COUNT ? tag_names[t] : "?";
}

double weft_scalar_to_double(weft_scalar s) {
  switch (s.tag) {
    case WEFT_SCALAR_INT: return (double)s.v.i;
    case WEFT_SCALAR_BOOL: return s.v.b ? 1.0 : 0.0;
    default: return s.v.d;
  }
}

void weft_ivalue_destroy(weft_ivalue* v) {
  switch (v->tag) {
    case WEFT_IV_TENSOR: weft_tensor_release(v->u.t); break;
    case WEFT_IV_INT_LIST: free(v->u.ilist.data); break;
    case WEFT_IV_DOUBLE_LIST: free(v->u.dlist.data); break;
    case WEFT_IV_TENSOR_LIST:
      for (int64_t i = 0; i < v->u.tlist.len; i++) weft_tensor_release(v->u.tlist.data[i]);
      free(v->u.tlist.data);
      break;
    case WEFT_IV_STRING: free(v->u.s); break;
    default: break;
  }
  v->tag = WEFT_IV_NONE;
}

static void* dup_bytes(const void* p, size_t n) {
  void* q = malloc(n ? n : 1);
  if (q && n) memcpy(q, p, n);
  return q;
}

weft_status weft_ivalue_copy(weft_ivalue* dst, const weft_ivalue* src) {
  *dst = *src;
  switch (src->tag) {
    case WEFT_IV_TENSOR: weft_tensor_retain(src->u.t); break;
    case WEFT_IV_INT_LIST:
      dst->u.ilist.data = dup_bytes(src->u.ilist.data, (size_t)src->u.ilist.len * sizeof(int64_t));
      if (!dst->u.ilist.data) goto oom;
      break;
    case WEFT_IV_DOUBLE_LIST:
      dst->u.dlist.data = dup_bytes(src->u.dlist.data, (size_t)src->u.dlist.len * sizeof(double));
      if (!dst->u.dlist.data) goto oom;
      break;
    case WEFT_IV_TENSOR_LIST:
      dst->u.tlist.data = dup_bytes(src->u.tlist.data, (size_t)src->u.tlist.len * sizeof(weft_tensor*));
      if (!dst->u.tlist.data) goto oom;
      for (int64_t i = 0; i < src->u.tlist.len; i++) weft_tensor_retain(src->u.tlist.data[i]);
      break;
    case WEFT_IV_STRING:
      dst->u.s = dup_bytes(src->u.s, strlen(src->u.s) + 1);
      if (!dst->u.s) goto oom;
      break;
    default: break;
  }
  return WEFT_OK;
oom:
  dst->tag = WEFT_IV_NONE;
  return weft__error(WEFT_OUT_OF_MEMORY, "ivalue: out of memory");
}

void weft_ivalue_format(const weft_ivalue* v, char* buf, size_t cap) {
  switch (v->tag) {
    case WEFT_IV_NONE: snprintf(buf, cap, "None"); break;
    case WEFT_IV_TENSOR: {
      const weft_tensor* t = v->u.t;
      snprintf(buf, cap, "tensor(sizes=%s, dtype=%s, device=%s)", WEFT__LIST(t->sizes, t->ndim),
               weft_dtype_name(t->dtype), weft_device_name(t->device));
      break;
    }
    case WEFT_IV_INT: snprintf(buf, cap, "%lld", (long long)v->u.i); break;
    case WEFT_IV_DOUBLE: snprintf(buf, cap, "%g", v->u.d); break;
    case WEFT_IV_BOOL: snprintf(buf, cap, v->u.b ? "True" : "False"); break;
    case WEFT_IV_INT_LIST: snprintf(buf, cap, "%s", WEFT__LIST(v->u.ilist.data, v->u.ilist.len)); break;
    case WEFT_IV_DOUBLE_LIST: snprintf(buf, cap, "[%lld floats]", (long long)v->u.dlist.len); break;
    case WEFT_IV_TENSOR_LIST: snprintf(buf, cap, "[%lld tensors]", (long long)v->u.tlist.len); break;
    case WEFT_IV_STRING: snprintf(buf, cap, "'%s'", v->u.s); break;
    case WEFT_IV_DTYPE: snprintf(buf, cap, "torch.%s", weft_dtype_name(v->u.dtype)); break;
    case WEFT_IV_MEMORY_FORMAT: snprintf(buf, cap, "torch.%s", weft_memory_format_name(v->u.mf)); break;
    case WEFT_IV_DEVICE: snprintf(buf, cap, "%s", weft_device_name(v->u.device)); break;
    default: snprintf(buf, cap, "?"); break;
  }
}

/* ---- stack ---- */
void weft_stack_init(weft_stack* s) {
  s->v = s->inline_v;
  s->size = 0;
  s->cap = WEFT_STACK_INLINE;
}

void weft_stack_clear(weft_stack* s) {
  weft_stack_drop(s, s->size);
  if (s->v != s->inline_v) free(s->v);
  weft_stack_init(s);
}

static weft_status grow(weft_stack* s) {
  int64_t cap = s->cap * 2;
  weft_ivalue* v = malloc((size_t)cap * sizeof *v);
  if (!v) return weft__error(WEFT_OUT_OF_MEMORY, "stack: out of memory");
  memcpy(v, s->v, (size_t)s->size * sizeof *v);
  if (s->v != s->inline_v) free(s->v);
  s->v = v;
  s->cap = cap;
  return WEFT_OK;
}

weft_status weft_stack_push(weft_stack* s, weft_ivalue v) {
  if (s->size == s->cap) {
    weft_status st = grow(s);
    if (st != WEFT_OK) {
      weft_ivalue_destroy(&v);
      return st;
    }
  }
  s->v[s->size++] = v;
  return WEFT_OK;
}

weft_status weft_stack_push_none(weft_stack* s) {
  weft_ivalue v = {.tag = WEFT_IV_NONE};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_tensor(weft_stack* s, const weft_tensor* t) {
  if (!t) return weft_stack_push_none(s);
  return weft_stack_push_tensor_owned(s, weft_tensor_retain((weft_tensor*)t));
}

weft_status weft_stack_push_tensor_owned(weft_stack* s, weft_tensor* t) {
  weft_ivalue v = {.tag = WEFT_IV_TENSOR, .u.t = t};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_int(weft_stack* s, int64_t i) {
  weft_ivalue v = {.tag = WEFT_IV_INT, .u.i = i};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_double(weft_stack* s, double d) {
  weft_ivalue v = {.tag = WEFT_IV_DOUBLE, .u.d = d};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_bool(weft_stack* s, bool b) {
  weft_ivalue v = {.tag = WEFT_IV_BOOL, .u.b = b};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_scalar(weft_stack* s, weft_scalar x) {
  switch (x.tag) {
    case WEFT_SCALAR_INT: return weft_stack_push_int(s, x.v.i);
    case WEFT_SCALAR_BOOL: return weft_stack_push_bool(s, x.v.b);
    default: return weft_stack_push_double(s, x.v.d);
  }
}

weft_status weft_stack_push_int_list(weft_stack* s, const int64_t* p, int64_t n) {
  weft_ivalue v = {.tag = WEFT_IV_INT_LIST};
  v.u.ilist.data = dup_bytes(p, (size_t)n * sizeof(int64_t));
  v.u.ilist.len = n;
  if (!v.u.ilist.data) return weft__error(WEFT_OUT_OF_MEMORY, "stack: out of memory");
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_tensor_list(weft_stack* s, weft_tensor* const* p, int64_t n) {
  weft_ivalue v = {.tag = WEFT_IV_TENSOR_LIST};
  v.u.tlist.data = dup_bytes(p, (size_t)n * sizeof(weft_tensor*));
  v.u.tlist.len = n;
  if (!v.u.tlist.data) return weft__error(WEFT_OUT_OF_MEMORY, "stack: out of memory");
  for (int64_t i = 0; i < n; i++) weft_tensor_retain(p[i]);
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_string(weft_stack* s, const char* str) {
  weft_ivalue v = {.tag = WEFT_IV_STRING};
  v.u.s = dup_bytes(str, strlen(str) + 1);
  if (!v.u.s) return weft__error(WEFT_OUT_OF_MEMORY, "stack: out of memory");
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_dtype(weft_stack* s, weft_dtype d) {
  weft_ivalue v = {.tag = WEFT_IV_DTYPE, .u.dtype = d};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_memory_format(weft_stack* s, weft_memory_format f) {
  weft_ivalue v = {.tag = WEFT_IV_MEMORY_FORMAT, .u.mf = f};
  return weft_stack_push(s, v);
}

weft_status weft_stack_push_device(weft_stack* s, weft_device d) {
  weft_ivalue v = {.tag = WEFT_IV_DEVICE, .u.device = d};
  return weft_stack_push(s, v);
}

weft_ivalue weft_stack_pop(weft_stack* s) { return s->v[--s->size]; }

weft_ivalue* weft_stack_peek(weft_stack* s, int64_t i) { return &s->v[s->size - 1 - i]; }

void weft_stack_drop(weft_stack* s, int64_t n) {
  while (n-- > 0 && s->size > 0) weft_ivalue_destroy(&s->v[--s->size]);
}

weft_tensor* weft_stack_pop_tensor(weft_stack* s) {
  if (s->size == 0 || s->v[s->size - 1].tag != WEFT_IV_TENSOR)
    return weft__error_null(WEFT_INTERNAL, "boxed kernel did not return a Tensor");
  return weft_stack_pop(s).u.t;
}

weft_status weft__stack_push_tensor2(weft_stack* s, weft_tensor2 r) {
  weft_status st = weft_stack_push_tensor_owned(s, r.t[0]);
  if (st != WEFT_OK) {
    weft_tensor_release(r.t[1]);
    return st;
  }
  return weft_stack_push_tensor_owned(s, r.t[1]);
}

weft_tensor2 weft__stack_pop_tensor2(weft_stack* s) {
  weft_tensor2 r = {{NULL, NULL}};
  if (s->size < 2 || s->v[s->size - 1].tag != WEFT_IV_TENSOR || s->v[s->size - 2].tag != WEFT_IV_TENSOR) {
    weft__error(WEFT_INTERNAL, "boxed kernel did not return two Tensors");
    return r;
  }
  r.t[1] = weft_stack_pop(s).u.t;
  r.t[0] = weft_stack_pop(s).u.t;
  return r;
}

weft_status weft__stack_push_tensor3(weft_stack* s, weft_tensor3 r) {
  weft_status st = WEFT_OK;
  for (int i = 0; i < 3; i++) {
    if (st == WEFT_OK) st = r.t[i] ? weft_stack_push_tensor_owned(s, r.t[i]) : weft_stack_push_none(s);
    else weft_tensor_release(r.t[i]);
  }
  return st;
}

weft_tensor3 weft__stack_pop_tensor3(weft_stack* s) {
  weft_tensor3 r = {{NULL, NULL, NULL}, WEFT_OK};
  for (int i = 1; i <= 3; i++) {
    weft_iv_tag tag = s->size >= 3 ? s->v[s->size - i].tag : WEFT_IV_NONE;
    if (s->size < 3 || (tag != WEFT_IV_TENSOR && tag != WEFT_IV_NONE)) {
      r.status = weft__error(WEFT_INTERNAL, "boxed kernel did not return three Tensors");
      return r;
    }
  }
  for (int i = 2; i >= 0; i--) {
    weft_ivalue v = weft_stack_pop(s);
    r.t[i] = v.tag == WEFT_IV_TENSOR ? v.u.t : NULL;
  }
  return r;
}

weft_status weft__stack_push_tensor4(weft_stack* s, weft_tensor4 r) {
  weft_status st = WEFT_OK;
  for (int i = 0; i < 4; i++) {
    if (st == WEFT_OK) st = weft_stack_push_tensor_owned(s, r.t[i]);
    else weft_tensor_release(r.t[i]);
  }
  return st;
}

weft_tensor4 weft__stack_pop_tensor4(weft_stack* s) {
  weft_tensor4 r = {{NULL, NULL, NULL, NULL}};
  for (int i = 1; i <= 4; i++)
    if (s->size < 4 || s->v[s->size - i].tag != WEFT_IV_TENSOR) {
      weft__error(WEFT_INTERNAL, "boxed kernel did not return four Tensors");
      return r;
    }
  for (int i = 3; i >= 0; i--) r.t[i] = weft_stack_pop(s).u.t;
  return r;
}

weft_status weft__stack_push_bool_list(weft_stack* s, const bool* v, int64_t n) {
  int64_t buf[WEFT_MAX_DIMS];
  if (n > WEFT_MAX_DIMS) return weft__error(WEFT_INVALID_ARGUMENT, "a bool[] of more than %d values", WEFT_MAX_DIMS);
  for (int64_t i = 0; i < n; i++) buf[i] = v[i];
  return weft_stack_push_int_list(s, buf, n);
}

weft_status weft__stack_push_tensor_list_owned(weft_stack* s, weft_tensor_list r) {
  weft_ivalue v = {.tag = WEFT_IV_TENSOR_LIST};
  v.u.tlist.data = r.t; /* the list's array and references become the value's */
  v.u.tlist.len = r.n;
  return weft_stack_push(s, v); /* destroys v on failure */
}

weft_tensor_list weft__stack_pop_tensor_list(weft_stack* s) {
  weft_tensor_list r = {NULL, 0};
  if (s->size == 0 || s->v[s->size - 1].tag != WEFT_IV_TENSOR_LIST) {
    weft__error(WEFT_INTERNAL, "boxed kernel did not return a Tensor[]");
    return r;
  }
  weft_ivalue v = weft_stack_pop(s);
  if (!v.u.tlist.data) { /* a parsed default `[]` has no array: an empty list still needs one */
    weft_ivalue_destroy(&v);
    return weft_tensor_list_new(0);
  }
  r.t = v.u.tlist.data;
  r.n = v.u.tlist.len;
  return r;
}

/* ---- unbox helpers ---- */
weft_tensor* weft__unbox_tensor(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_TENSOR) return v->u.t;
  *bad = 1;
  return NULL;
}

weft_tensor* weft__unbox_opt_tensor(const weft_ivalue* v, int* bad) {
  return v->tag == WEFT_IV_NONE ? NULL : weft__unbox_tensor(v, bad);
}

const weft_tensor* const* weft__unbox_tensor_list(const weft_ivalue* v, bool elem_optional, int64_t* len,
                                                  int* bad) {
  *len = 0;
  if (v->tag != WEFT_IV_TENSOR_LIST) {
    *bad = 1;
    return NULL;
  }
  for (int64_t i = 0; !elem_optional && i < v->u.tlist.len; i++)
    if (!v->u.tlist.data[i]) {
      *bad = 1;
      return NULL;
    }
  *len = v->u.tlist.len;
  return (const weft_tensor* const*)v->u.tlist.data;
}

int64_t weft__unbox_int(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_INT) return v->u.i;
  *bad = 1;
  return 0;
}

int64_t weft__unbox_opt_int(const weft_ivalue* v, int* bad) {
  return v->tag == WEFT_IV_NONE ? INT64_MIN : weft__unbox_int(v, bad);
}

const int64_t* weft__unbox_int_list(const weft_ivalue* v, int64_t* len, int* bad) {
  if (v->tag == WEFT_IV_INT_LIST) {
    *len = v->u.ilist.len;
    return v->u.ilist.data;
  }
  *bad = 1;
  *len = 0;
  return NULL;
}

const int64_t* weft__unbox_opt_int_list(const weft_ivalue* v, int64_t* len, int* bad) {
  *len = 0;
  return v->tag == WEFT_IV_NONE ? NULL : weft__unbox_int_list(v, len, bad);
}

double weft__unbox_double(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_DOUBLE) return v->u.d;
  if (v->tag == WEFT_IV_INT) return (double)v->u.i;
  if (v->tag == WEFT_IV_BOOL) return v->u.b ? 1.0 : 0.0;
  *bad = 1;
  return 0;
}

double weft__unbox_opt_double(const weft_ivalue* v, int* bad) {
  return v->tag == WEFT_IV_NONE ? NAN : weft__unbox_double(v, bad);
}

bool weft__unbox_bool(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_BOOL) return v->u.b;
  *bad = 1;
  return false;
}

const bool* weft__unbox_bool_list(const weft_ivalue* v, bool* buf, int64_t cap, int64_t* len, int* bad) {
  *len = 0;
  if (v->tag != WEFT_IV_INT_LIST || v->u.ilist.len > cap) {
    *bad = 1;
    return NULL;
  }
  for (int64_t i = 0; i < v->u.ilist.len; i++) {
    if (v->u.ilist.data[i] != 0 && v->u.ilist.data[i] != 1) {
      *bad = 1;
      return NULL;
    }
    buf[i] = v->u.ilist.data[i] != 0;
  }
  *len = v->u.ilist.len;
  return buf;
}

weft_scalar weft__unbox_scalar(const weft_ivalue* v, int* bad) {
  switch (v->tag) {
    case WEFT_IV_INT: return weft_scalar_int(v->u.i);
    case WEFT_IV_DOUBLE: return weft_scalar_double(v->u.d);
    case WEFT_IV_BOOL: return weft_scalar_bool(v->u.b);
    default: *bad = 1; return weft_scalar_int(0);
  }
}

const weft_scalar* weft__unbox_opt_scalar(const weft_ivalue* v, weft_scalar* storage, int* bad) {
  if (v->tag == WEFT_IV_NONE) return NULL;
  *storage = weft__unbox_scalar(v, bad);
  return storage;
}

weft_dtype weft__unbox_dtype(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_DTYPE) return v->u.dtype;
  if (v->tag == WEFT_IV_NONE) return (weft_dtype)-1;
  *bad = 1;
  return WEFT_FLOAT32;
}

weft_memory_format weft__unbox_memory_format(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_MEMORY_FORMAT) return v->u.mf;
  if (v->tag == WEFT_IV_NONE) return (weft_memory_format)-1;
  *bad = 1;
  return WEFT_CONTIGUOUS_FORMAT;
}

weft_device weft__unbox_device(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_DEVICE) return v->u.device;
  if (v->tag == WEFT_IV_NONE) return WEFT_DEVICE_CPU;
  *bad = 1;
  return WEFT_DEVICE_CPU;
}

const char* weft__unbox_string(const weft_ivalue* v, int* bad) {
  if (v->tag == WEFT_IV_STRING) return v->u.s;
  *bad = 1;
  return "";
}
