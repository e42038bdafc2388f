/* Shared by the tests that replay PyTorch-recorded cases (test_ops.c,
 * test_reduce.c): inputs built from recorded values and layouts, tolerances,
 * and the check of a result's dtype, shape, strides and values. */
#ifndef WEFT_TEST_FIXTURE_UTIL_H
#define WEFT_TEST_FIXTURE_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/scalar.h"
#include "weft/weft.h"

static inline weft__value fx_value_of(double v, weft_dtype t) {
  weft__value x = {0, 0, 0.0};
  if (weft_dtype_is_floating(t)) {
    x.is_float = 1;
    x.f = v;
  } else {
    x.i = (int64_t)v;
  }
  return x;
}

/* PyTorch's dtype names as its messages print them -> weft's, the table of
 * tests/js/fixtures-lib.mjs weftMessage: C++ spellings ("long int",
 * "c10::Half") only after "dtype ", "but got ", "to type ", "output type " or
 * "bounds for ", ScalarType names
 * ("Float") as whole words. */
static const char* const fx_cpp_names[][2] = {
    {"c10::Half", "float16"}, {"c10::BFloat16", "bfloat16"}, {"at::Half", "float16"}, {"at::BFloat16", "bfloat16"},
    {"unsigned char", "uint8"}, {"signed char", "int8"},     {"short int", "int16"},   {"long int", "int64"},
    {"uint8_t", "uint8"},       {"int8_t", "int8"},          {"int16_t", "int16"},     {"int64_t", "int64"},
    {"int", "int32"},           {"float", "float32"},        {"double", "float64"},    {"bool", "bool"}};
static const char* const fx_scalar_names[][2] = {
    {"Bool", "bool"},     {"Byte", "uint8"},     {"Char", "int8"},       {"Short", "int16"},     {"Int", "int32"},
    {"Long", "int64"},    {"Half", "float16"},   {"BFloat16", "bfloat16"}, {"Float", "float32"}, {"Double", "float64"}};

static inline bool fx_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static inline bool fx_after(const char* s, size_t i, const char* pre) {
  size_t n = strlen(pre);
  return i >= n && strncmp(s + i - n, pre, n) == 0;
}

/* The weft name of the dtype spelled at s + i, with its length in *len; NULL: none. */
static inline const char* fx_name_at(const char* s, size_t i, size_t* len) {
  if (i > 0 && (fx_word_char(s[i - 1]) || s[i - 1] == ':')) return NULL;
  bool cpp = fx_after(s, i, "dtype ") || fx_after(s, i, "but got ") || fx_after(s, i, "to type ") ||
               fx_after(s, i, "output type ") || fx_after(s, i, "bounds for ");
  for (size_t k = 0; cpp && k < sizeof fx_cpp_names / sizeof fx_cpp_names[0]; k++) {
    size_t n = strlen(fx_cpp_names[k][0]);
    if (strncmp(s + i, fx_cpp_names[k][0], n) == 0 && !fx_word_char(s[i + n]) && s[i + n] != ':') {
      *len = n;
      return fx_cpp_names[k][1];
    }
  }
  for (size_t k = 0; k < sizeof fx_scalar_names / sizeof fx_scalar_names[0]; k++) {
    size_t n = strlen(fx_scalar_names[k][0]);
    if (strncmp(s + i, fx_scalar_names[k][0], n) == 0 && !fx_word_char(s[i + n])) {
      *len = n;
      return fx_scalar_names[k][1];
    }
  }
  return NULL;
}

/* Does weft's last error contain PyTorch's message torch_msg, in weft's dtype names? */
static inline bool fx_error_has(const char* torch_msg) {
  char buf[1024];
  size_t o = 0;
  for (size_t i = 0; torch_msg[i] && o + 16 < sizeof buf;) {
    size_t len;
    const char* w = fx_name_at(torch_msg, i, &len);
    if (w) {
      o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", w);
      i += len;
    } else {
      buf[o++] = torch_msg[i++];
    }
  }
  buf[o] = 0;
  return strstr(weft_last_error(), buf) != NULL;
}

/* A tensor with the recorded layout over a fresh storage holding vals. */
static inline weft_tensor* fx_make_tensor(const double* vals, int64_t n, weft_dtype dtype, const int64_t* size,
                                          const int64_t* stride, int ndim, int64_t offset) {
  weft_tensor* base = weft_empty(&n, 1, dtype, WEFT_DEVICE_CPU, WEFT_CONTIGUOUS_FORMAT);
  if (!base) return NULL;
  char* p = weft_tensor_data_ptr(base);
  int64_t es = (int64_t)weft_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++) weft__store(p + i * es, dtype, fx_value_of(vals[i], dtype));
  weft_tensor* t = weft_as_strided(base, size, stride, ndim, offset);
  weft_tensor_release(base);
  return t;
}

static inline double fx_tol(weft_dtype t) {
  switch (t) {
    case WEFT_FLOAT16: return 2e-3;
    case WEFT_BFLOAT16: return 1.6e-2;
    case WEFT_FLOAT32: return 2e-6;
    case WEFT_FLOAT64: return 1e-12;
    default: return 0;
  }
}

static inline bool fx_close_enough(double got, double want, double e) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= e * (1 + fabs(want));
}

/* Element i (row-major logical order) of t as double. */
static inline double fx_element(const weft_tensor* t, int64_t i) {
  int64_t off = 0, nd = weft_tensor_dim(t);
  const int64_t *sz = weft_tensor_sizes(t), *st = weft_tensor_strides(t);
  for (int64_t d = nd - 1; d >= 0; d--) {
    off += (i % sz[d]) * st[d];
    i /= sz[d];
  }
  const char* p = (const char*)weft_tensor_data_ptr(t) + off * (int64_t)weft_tensor_element_size(t);
  return weft__value_f64(weft__load(p, weft_tensor_dtype(t)));
}

/* r against the recorded dtype, shape, strides (of dims of size > 1: the
 * others are not part of the contract) and values; false with msg set. */
static inline bool fx_check(const weft_tensor* r, weft_dtype dtype, int ndim, const int64_t* size,
                            const int64_t* stride, const double* vals, int64_t nvals, double tol, char* msg,
                            size_t cap) {
  if (weft_tensor_dtype(r) != dtype) {
    snprintf(msg, cap, "dtype %s, want %s", weft_dtype_name(weft_tensor_dtype(r)), weft_dtype_name(dtype));
    return false;
  }
  bool ok = weft_tensor_dim(r) == ndim;
  for (int d = 0; ok && d < ndim; d++) ok = weft_tensor_sizes(r)[d] == size[d];
  if (!ok) {
    snprintf(msg, cap, "shape");
    return false;
  }
  for (int d = 0; d < ndim; d++) {
    if (size[d] > 1 && weft_tensor_strides(r)[d] != stride[d]) {
      snprintf(msg, cap, "stride[%d] %lld, want %lld", d, (long long)weft_tensor_strides(r)[d], (long long)stride[d]);
      return false;
    }
  }
  for (int64_t i = 0; i < nvals; i++) {
    double got = fx_element(r, i), want = vals[i];
    if (!fx_close_enough(got, want, tol)) {
      snprintf(msg, cap, "value[%lld] %.17g, want %.17g", (long long)i, got, want);
      return false;
    }
  }
  return true;
}

/* In a test file with a table `cases` of rows with an `op` name and a
 * `static int replay(int i)` (1: case i failed): replay_all(label) runs every
 * case (CHECK from test.h), cases_of(name) counts an op's cases. */
#define FX_REPLAY_HELPERS(cases)                                                  \
  static int cases_of(const char* name) {                                         \
    int n_ = 0;                                                                   \
    for (size_t c_ = 0; c_ < sizeof cases / sizeof cases[0]; c_++)                \
      n_ += strcmp(cases[c_].op, name) == 0;                                      \
    return n_;                                                                    \
  }                                                                               \
  static void replay_all(const char* label) {                                     \
    int n_ = (int)(sizeof cases / sizeof cases[0]), failed_ = 0;                  \
    for (int i_ = 0; i_ < n_; i_++) failed_ += replay(i_);                        \
    printf("%s: %d cases, %d failed\n", label, n_, failed_);                      \
    CHECK(failed_ == 0);                                                          \
  }

/* Each schema's op is registered with a CPU or CompositeImplicitAutograd
 * kernel and has at least one case (cases(name) counts them, name without
 * "aten::"); returns the number of ops that fail either. */
static inline int fx_check_ops(const char* const* schemas, size_t n, int (*cases)(const char* name)) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char name[64] = "aten::";
    size_t len = strcspn(schemas[i], "(");
    if (len > sizeof name - 7) len = sizeof name - 7;
    memcpy(name + 6, schemas[i], len);
    name[6 + len] = '\0';
    weft_op* op = weft_op_find(name);
    bool ok = op && (weft_op_has_kernel(op, WEFT_KEY_CPU) || weft_op_has_kernel(op, WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD));
    if (!ok) fprintf(stderr, "%s: not registered with a CPU or composite kernel\n", name);
    if (!cases(name + 6)) fprintf(stderr, "%s: no case\n", name);
    bad += !ok || !cases(name + 6);
  }
  return bad;
}

#endif
