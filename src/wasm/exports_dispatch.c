/* The operators for JS (js/ops.js, js/core.js): op metadata as JSON, one
 * typed entry point per op-table line, a boxed stack for calls by name, the
 * dispatch trace and explain. The ABI they follow is described at the top of
 * exports.c; this file holds its one int64 conversion (wj_i64).
 * - weft_wasm_ops_json() returns a malloc'd JSON array, one object per op in
 *   definition order (free it with _free): name, schema, args and returns as
 *   the parser read them, and for op-table lines `cname`, `ret` and `kinds`
 *   (the KINDs of src/dispatch/opgen.h, each followed by a comma) so JS can call the typed
 *   entry point weft_wasm_op_<cname>.
 * - Boxed calls: weft_wasm_push_* push onto one stack owned by this module;
 *   weft_wasm_call(op, given) checks the types, fills trailing defaults and
 *   calls; the returns are then read with weft_wasm_ret_* and the stack reset
 *   with weft_wasm_stack_reset(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emscripten/emscripten.h>

#include "core/internal.h"
#include "base/strbuf.h"
#include "ops/ops.h"
#include "weft/weft.h"
#include "wj_cold.h"

/* JSON goes through the library's growing buffer (core/strbuf.c). */

/* A default value: {"tag": iv tag name, "value": JSON}. */
static void put_ivalue(weft__strbuf* b, const weft_ivalue* v) {
  weft__strbuf_put(b, "{\"tag\":");
  weft__strbuf_put_json_str(b, weft_iv_tag_name(v->tag));
  weft__strbuf_put(b, ",\"value\":");
  switch (v->tag) {
    case WEFT_IV_INT: weft__strbuf_put(b, "%lld", (long long)v->u.i); break;
    case WEFT_IV_DOUBLE:
      if (v->u.d != v->u.d) weft__strbuf_put(b, "null");
      else if (v->u.d > 1.7976931348623157e308) weft__strbuf_put(b, "1e999");
      else if (v->u.d < -1.7976931348623157e308) weft__strbuf_put(b, "-1e999");
      else weft__strbuf_put(b, "%.17g", v->u.d);
      break;
    case WEFT_IV_BOOL: weft__strbuf_put(b, v->u.b ? "true" : "false"); break;
    case WEFT_IV_INT_LIST:
      weft__strbuf_put(b, "[");
      for (int64_t i = 0; i < v->u.ilist.len; i++) weft__strbuf_put(b, i ? ",%lld" : "%lld", (long long)v->u.ilist.data[i]);
      weft__strbuf_put(b, "]");
      break;
    case WEFT_IV_STRING: weft__strbuf_put_json_str(b, v->u.s); break;
    case WEFT_IV_DTYPE: weft__strbuf_put_json_str(b, weft_dtype_name(v->u.dtype)); break;
    case WEFT_IV_MEMORY_FORMAT: weft__strbuf_put_json_str(b, weft_memory_format_name(v->u.mf)); break;
    case WEFT_IV_DEVICE: weft__strbuf_put_json_str(b, weft_device_name(v->u.device)); break;
    default: weft__strbuf_put(b, "null"); break;
  }
  weft__strbuf_put(b, "}");
}

/* key (",\"name\":") then true or false: no vsnprintf (the registry is made at init) */
static void put_bool(weft__strbuf* b, const char* key, bool v) {
  weft__strbuf_puts(b, key);
  weft__strbuf_puts(b, v ? "true" : "false");
}

static void put_arg(weft__strbuf* b, const weft_arg* a) {
  char text[64];
  weft_arg_type_format(a, text, sizeof text);
  weft__strbuf_put(b, "{\"name\":");
  weft__strbuf_put_json_str(b, a->name ? a->name : "");
  weft__strbuf_put(b, ",\"type\":");
  weft__strbuf_put_json_str(b, weft__schema_type_name(a->type));
  weft__strbuf_put(b, ",\"text\":");
  weft__strbuf_put_json_str(b, text);
  put_bool(b, ",\"list\":", a->is_list);
  if (a->list_size) weft__strbuf_put(b, ",\"listSize\":%d", a->list_size);
  else weft__strbuf_put(b, ",\"listSize\":0");
  put_bool(b, ",\"optional\":", a->optional);
  put_bool(b, ",\"elemOptional\":", a->elem_optional);
  weft__strbuf_put(b, ",\"alias\":");
  if (a->alias) weft__strbuf_put_json_str(b, a->alias);
  else weft__strbuf_put(b, "null");
  put_bool(b, ",\"write\":", a->is_write);
  put_bool(b, ",\"kwargOnly\":", a->kwarg_only);
  if (a->has_default) {
    weft__strbuf_put(b, ",\"default\":");
    put_ivalue(b, &a->default_value);
  }
  weft__strbuf_put(b, "}");
}

/* ---- the op table's lines, for the typed entry points ---- */

/* kinds: "TENSOR,TENSOR,SCALAR," (the argument names are the schema's; kept
 * out of the module's strings and of the JSON made at init) */
#define WJ_KIND_TEXT(K, n) #K ","
#define WJ_LINE(c, schema, R, ...) {#c, schema, #R, WEFT__FOR_EACH(WJ_KIND_TEXT, __VA_ARGS__)},
static const struct {
  const char *cname, *schema, *ret, *kinds;
} lines[] = {
#define WEFT_OP WJ_LINE
#include "ops/ops.def"
#undef WEFT_OP
};

#define NLINES (sizeof lines / sizeof lines[0])

/* The lines by name ("add.Tensor" of "add.Tensor(Tensor self, ..."), for a
 * binary search per op: matching every op against every line was most of
 * init()'s time. Ties keep the table's order (the first line wins). */
typedef struct {
  const char* name;
  size_t len;
  size_t line;
} line_key;
static line_key by_name[NLINES];

static int key_cmp(const char* a, size_t an, const char* b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}
static int line_key_cmp(const void* pa, const void* pb) {
  const line_key *a = pa, *b = pb;
  int c = key_cmp(a->name, a->len, b->name, b->len);
  return c ? c : (a->line > b->line) - (a->line < b->line);
}

static void index_lines(void) {
  for (size_t i = 0; i < NLINES; i++) by_name[i] = (line_key){lines[i].schema, strcspn(lines[i].schema, "("), i};
  qsort(by_name, NLINES, sizeof by_name[0], line_key_cmp);
}

/* The first line naming the op ("aten::add.Tensor" is "add.Tensor"), or -1. */
static long line_of(const weft_schema* s) {
  const char* full = s->full_name;
  const char* sep = strstr(full, "::");
  if (sep) full = sep + 2;
  size_t n = strlen(full), lo = 0, hi = NLINES;
  while (lo < hi) { /* lower bound */
    size_t mid = lo + (hi - lo) / 2;
    if (key_cmp(by_name[mid].name, by_name[mid].len, full, n) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < NLINES && key_cmp(by_name[lo].name, by_name[lo].len, full, n) == 0 ? (long)by_name[lo].line : -1;
}

static void put_op(weft__strbuf* b, const weft_op* op) {
  const weft_schema* s = weft_op_schema(op);
  char text[1024];
  weft_schema_format(s, text, sizeof text);
  weft__strbuf_put(b, "{\"name\":");
  weft__strbuf_put_json_str(b, s->full_name);
  weft__strbuf_put(b, ",\"base\":");
  weft__strbuf_put_json_str(b, s->name);
  weft__strbuf_put(b, ",\"overload\":");
  weft__strbuf_put_json_str(b, s->overload);
  weft__strbuf_put(b, ",\"schema\":");
  weft__strbuf_put_json_str(b, text);
  weft__strbuf_put(b, ",\"args\":[");
  for (int i = 0; i < s->nargs; i++) {
    if (i) weft__strbuf_put(b, ",");
    put_arg(b, &s->args[i]);
  }
  weft__strbuf_put(b, "],\"returns\":[");
  for (int i = 0; i < s->nreturns; i++) {
    if (i) weft__strbuf_put(b, ",");
    put_arg(b, &s->returns[i]);
  }
  put_bool(b, "],\"tupleReturn\":", s->tuple_return);
  long i = line_of(s);
  if (i >= 0) {
    weft__strbuf_put(b, ",\"cname\":");
    weft__strbuf_put_json_str(b, lines[i].cname);
    weft__strbuf_put(b, ",\"ret\":");
    weft__strbuf_put_json_str(b, lines[i].ret);
    weft__strbuf_put(b, ",\"kinds\":");
    weft__strbuf_put_json_str(b, lines[i].kinds);
  }
  weft__strbuf_put(b, "}");
}

EMSCRIPTEN_KEEPALIVE char* weft_wasm_ops_json(void) {
  index_lines();
  weft__strbuf b = {0};
  int64_t n = weft_op_count();
  weft__strbuf_put(&b, "[");
  for (int64_t i = 0; i < n; i++) {
    if (i) weft__strbuf_put(&b, ",");
    put_op(&b, weft_op_at(i));
  }
  weft__strbuf_put(&b, "]");
  return weft__strbuf_finish(&b, "ops");
}

EMSCRIPTEN_KEEPALIVE weft_op* weft_wasm_op_at(int i) {
  return weft_op_at(i);
}

/* [{key, kind, source, kernel, boxedOnly}] over every runtime key. */
EMSCRIPTEN_KEEPALIVE char* weft_wasm_op_table_json(const weft_op* op) {
  weft__strbuf b = {0};
  weft__strbuf_put(&b, "[");
  int n = weft_num_runtime_entries();
  bool first = true;
  for (int i = 1; i < n; i++) {
    weft_dispatch_key k = weft_table_index_key(i);
    weft_table_entry e;
    if (weft_op_table_entry(op, k, &e) != WEFT_OK) continue;
    weft__strbuf_put(&b, first ? "{\"key\":" : ",{\"key\":");
    first = false;
    weft__strbuf_put_json_str(&b, weft_dispatch_key_name(k));
    weft__strbuf_put(&b, ",\"kind\":\"%s\",\"source\":", weft_entry_kind_name(e.kind));
    if (e.kind == WEFT_ENTRY_MISSING) weft__strbuf_put(&b, "null");
    else weft__strbuf_put_json_str(&b, weft_dispatch_key_name(e.source));
    weft__strbuf_put(&b, ",\"kernel\":");
    if (e.kind == WEFT_ENTRY_MISSING) weft__strbuf_put(&b, "null");
    else weft__strbuf_put_json_str(&b, e.kernel);
    weft__strbuf_put(&b, ",\"boxedOnly\":%s}", e.boxed_only ? "true" : "false");
  }
  weft__strbuf_put(&b, "]");
  return weft__strbuf_finish(&b, "ops");
}

/* ---- typed entry points, one per op-table line ---- */

/* f64 -> int64 with saturation (NaN -> 0): every integer argument from JS. */
static int64_t wj_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* An int list as JS passes it: its length, then its values, all f64. Converts
 * at most `max` values into dst and returns how many. */
static int64_t wj_list(const double* p, int64_t* dst, int64_t max) {
  int64_t n = wj_i64(p[0]);
  if (n > max) n = max;
  for (int64_t i = 0; i < n; i++) dst[i] = wj_i64(p[1 + i]);
  return n < 0 ? 0 : n;
}

/* A Tensor[] as JS passes it: its length, then the handles (0 = None), all f64. */
__attribute__((unused)) static int64_t wj_handles(const double* p, const weft_tensor** dst, int64_t max) {
  int64_t n = wj_i64(p[0]);
  if (n > max) n = max;
  for (int64_t i = 0; i < n; i++) dst[i] = (const weft_tensor*)(uintptr_t)wj_i64(p[1 + i]);
  return n < 0 ? 0 : n;
}

/* A Scalar as JS passes it: its tag (0 int, 1 float, 2 bool), then its value. */
__attribute__((unused)) static weft_scalar wj_scalar(const double* p) {
  if (p[0] == 0) return weft_scalar_int(wj_i64(p[1]));
  if (p[0] == 2) return weft_scalar_bool(p[1] != 0);
  return weft_scalar_double(p[1]);
}

/* P: wasm parameters, C: conversions, A: arguments of weft_<cname>. */
#define WJ_P(K, n) WJ_P_##K(n)
#define WJ_C(K, n) WJ_C_##K(n)
#define WJ_A(K, n) WJ_A_##K(n)
#define WJ_NOCONV(n)
#define WJ_SAME(n) , n

#define WJ_P_TENSOR(n) , weft_tensor* n
#define WJ_C_TENSOR WJ_NOCONV
#define WJ_A_TENSOR WJ_SAME
#define WJ_P_MTENSOR WJ_P_TENSOR
#define WJ_C_MTENSOR WJ_NOCONV
#define WJ_A_MTENSOR WJ_SAME
#define WJ_P_OPT_TENSOR WJ_P_TENSOR
#define WJ_C_OPT_TENSOR WJ_NOCONV
#define WJ_A_OPT_TENSOR WJ_SAME
#define WJ_P_TENSOR_LIST(n) , const double* n
#define WJ_C_TENSOR_LIST(n) \
  const weft_tensor* n##_buf[WEFT_MAX_DIMS]; \
  int64_t n##_len = wj_handles(n, n##_buf, WEFT_MAX_DIMS);
#define WJ_A_TENSOR_LIST(n) , n##_buf, n##_len
#define WJ_P_OPT_TENSOR_LIST WJ_P_TENSOR_LIST
#define WJ_C_OPT_TENSOR_LIST WJ_C_TENSOR_LIST
#define WJ_A_OPT_TENSOR_LIST WJ_A_TENSOR_LIST
#define WJ_P_INT(n) , double n
#define WJ_C_INT WJ_NOCONV
#define WJ_A_INT(n) , wj_i64(n)
#define WJ_P_OPT_INT WJ_P_INT
#define WJ_C_OPT_INT WJ_NOCONV
#define WJ_A_OPT_INT WJ_A_INT
#define WJ_P_INT_LIST(n) , const double* n
#define WJ_C_INT_LIST(n) \
  int64_t n##_buf[WEFT_MAX_DIMS]; \
  int64_t n##_len = wj_list(n, n##_buf, WEFT_MAX_DIMS);
#define WJ_A_INT_LIST(n) , n##_buf, n##_len
#define WJ_P_OPT_INT_LIST WJ_P_INT_LIST
#define WJ_C_OPT_INT_LIST(n) \
  int64_t n##_buf[WEFT_MAX_DIMS]; \
  int64_t n##_len = n ? wj_list(n, n##_buf, WEFT_MAX_DIMS) : 0;
#define WJ_A_OPT_INT_LIST(n) , (n ? n##_buf : NULL), n##_len
#define WJ_P_DOUBLE(n) , double n
#define WJ_C_DOUBLE WJ_NOCONV
#define WJ_A_DOUBLE WJ_SAME
#define WJ_P_OPT_DOUBLE WJ_P_DOUBLE
#define WJ_C_OPT_DOUBLE WJ_NOCONV
#define WJ_A_OPT_DOUBLE WJ_SAME
#define WJ_P_BOOL(n) , int n
#define WJ_C_BOOL WJ_NOCONV
#define WJ_A_BOOL(n) , (n != 0)
/* bool[]: passed as an int list of 0 and 1 */
#define WJ_P_BOOL_LIST(n) , const double* n
#define WJ_C_BOOL_LIST(n)                                 \
  int64_t n##_i[WEFT_MAX_DIMS];                           \
  bool n##_buf[WEFT_MAX_DIMS];                            \
  int64_t n##_len = wj_list(n, n##_i, WEFT_MAX_DIMS);     \
  for (int64_t j_ = 0; j_ < n##_len; j_++) n##_buf[j_] = n##_i[j_] != 0;
#define WJ_A_BOOL_LIST(n) , n##_buf, n##_len
#define WJ_P_SCALAR(n) , const double* n
#define WJ_C_SCALAR WJ_NOCONV
#define WJ_A_SCALAR(n) , wj_scalar(n)
#define WJ_P_OPT_SCALAR(n) , const double* n
#define WJ_C_OPT_SCALAR(n) weft_scalar n##_v = n ? wj_scalar(n) : weft_scalar_int(0);
#define WJ_A_OPT_SCALAR(n) , (n ? &n##_v : NULL)
#define WJ_P_DTYPE(n) , int n
#define WJ_C_DTYPE WJ_NOCONV
#define WJ_A_DTYPE(n) , (weft_dtype)n
#define WJ_P_MEMORY_FORMAT(n) , int n
#define WJ_C_MEMORY_FORMAT WJ_NOCONV
#define WJ_A_MEMORY_FORMAT(n) , (weft_memory_format)n
#define WJ_P_DEVICE(n) , int n
#define WJ_C_DEVICE WJ_NOCONV
#define WJ_A_DEVICE(n) , (weft_device)n
#define WJ_P_STRING(n) , const char* n
#define WJ_C_STRING WJ_NOCONV
#define WJ_A_STRING WJ_SAME

/* Return kinds: TENSOR a handle (0 on error), STATUS a status. TENSOR2
 * returns the first handle (0 on error) and keeps the second for
 * weft_wasm_op_second(), which JS calls right after (one JS thread calls
 * in; a wasm function cannot return two values to JS here). */
static weft_tensor* second_ret;

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_op_second(void) {
  weft_tensor* t = second_ret;
  second_ret = NULL;
  return t;
}

__attribute__((unused)) static weft_tensor* wj_first(weft_tensor2 r) {
  weft_tensor_release(second_ret); /* never taken: an earlier call's JS threw first */
  second_ret = r.t[1];
  return r.t[0];
}

/* TENSOR3 returns the first handle and keeps the other two for
 * weft_wasm_op_second() and weft_wasm_op_third(); any may be 0 (an
 * undefined output), so the status of the call is weft_wasm_op_status(). */
static weft_tensor* third_ret;
static int ret_status;

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_op_third(void) {
  weft_tensor* t = third_ret;
  third_ret = NULL;
  return t;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_op_status(void) {
  return ret_status;
}

__attribute__((unused)) static weft_tensor* wj_first3(weft_tensor3 r) {
  weft_tensor_release(second_ret);
  weft_tensor_release(third_ret);
  second_ret = r.t[1];
  third_ret = r.t[2];
  ret_status = r.status;
  return r.t[0];
}

/* TENSOR4 returns the first handle (0 on error) and keeps the other three
 * for weft_wasm_op_second(), _third() and _fourth(). */
static weft_tensor* fourth_ret;

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_op_fourth(void) {
  weft_tensor* t = fourth_ret;
  fourth_ret = NULL;
  return t;
}

__attribute__((unused)) static weft_tensor* wj_first4(weft_tensor4 r) {
  weft_tensor_release(second_ret);
  weft_tensor_release(third_ret);
  weft_tensor_release(fourth_ret);
  second_ret = r.t[1], third_ret = r.t[2], fourth_ret = r.t[3];
  return r.t[0];
}

/* TENSOR_LIST returns the list's malloc'd array of new references (0 on
 * error; JS reads the handles, then frees it) and keeps its length for
 * weft_wasm_op_list_len(), which JS calls right after. */
static int list_len;

EMSCRIPTEN_KEEPALIVE int weft_wasm_op_list_len(void) {
  return list_len;
}

__attribute__((unused)) static weft_tensor** wj_list_array(weft_tensor_list r) {
  list_len = (int)r.n;
  return r.t;
}

#define WJ_RT_TENSOR weft_tensor*
#define WJ_RT_STATUS int
#define WJ_RT_TENSOR2 weft_tensor*
#define WJ_RT_TENSOR_LIST weft_tensor**
#define WJ_RT_TENSOR3 weft_tensor*
#define WJ_RT_TENSOR4 weft_tensor*
#define WJ_RET_TENSOR(x) x
#define WJ_RET_STATUS(x) (int)x
#define WJ_RET_TENSOR2(x) wj_first(x)
#define WJ_RET_TENSOR_LIST(x) wj_list_array(x)
#define WJ_RET_TENSOR3(x) wj_first3(x)
#define WJ_RET_TENSOR4(x) wj_first4(x)
#define WJ_TYPED_0(c, schema, R, ...)                                                  \
  EMSCRIPTEN_KEEPALIVE WJ_RT_##R weft_wasm_op_##c(WEFT__TAIL(~ WEFT__FOR_EACH(WJ_P, __VA_ARGS__))) { \
    WEFT__FOR_EACH(WJ_C, __VA_ARGS__)                                                  \
    return WJ_RET_##R(weft_##c(WEFT__TAIL(~ WEFT__FOR_EACH(WJ_A, __VA_ARGS__))));      \
  }
/* The out= overloads and backward ops have none (size: src/wasm/wasm.cmake
 * lists them in wj_cold.h); JS calls them boxed. WJ_IS_COLD(c) is 1 when
 * WJ_COLD_<c> is defined (as "~, 1"), else 0. */
#define WJ_TYPED_1(c, schema, R, ...)
#define WJ_SECOND(a, b, ...) b
#define WJ_PROBE(...) WJ_SECOND(__VA_ARGS__, 0, ~)
#define WJ_IS_COLD(c) WJ_PROBE(WJ_COLD_##c)
#define WJ_TYPED(c, schema, R, ...) WEFT__CAT(WJ_TYPED_, WJ_IS_COLD(c))(c, schema, R, __VA_ARGS__)
#define WEFT_OP WJ_TYPED
#include "ops/ops.def"
#undef WEFT_OP

/* ---- boxed calls ---- */

static weft_stack stack;
static bool stack_ready;

static weft_stack* stk(void) {
  if (!stack_ready) {
    weft_stack_init(&stack);
    stack_ready = true;
  }
  return &stack;
}

EMSCRIPTEN_KEEPALIVE void weft_wasm_stack_reset(void) {
  weft_stack_clear(stk());
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_none(void) {
  return weft_stack_push_none(stk());
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_tensor(const weft_tensor* t) {
  return weft_stack_push_tensor(stk(), t);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_int(double v) {
  return weft_stack_push_int(stk(), wj_i64(v));
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_double(double v) {
  return weft_stack_push_double(stk(), v);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_bool(int v) {
  return weft_stack_push_bool(stk(), v != 0);
}

/* An int list of any length (JS passes a scratch slot or malloc'd memory). */
EMSCRIPTEN_KEEPALIVE int weft_wasm_push_int_list(const double* p) {
  int64_t small[WEFT_MAX_DIMS];
  int64_t len = wj_i64(p[0]);
  int64_t* v = len <= WEFT_MAX_DIMS ? small : malloc((size_t)len * sizeof *v);
  if (!v) return weft__error(WEFT_OUT_OF_MEMORY, "ops: out of memory");
  int64_t n = wj_list(p, v, len <= WEFT_MAX_DIMS ? WEFT_MAX_DIMS : len);
  weft_status s = weft_stack_push_int_list(stk(), v, n);
  if (v != small) free(v);
  return s;
}

/* n weft_tensor* at p. */
EMSCRIPTEN_KEEPALIVE int weft_wasm_push_tensor_list(weft_tensor* const* p, int n) {
  return weft_stack_push_tensor_list(stk(), p, n);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_string(const char* s) {
  return weft_stack_push_string(stk(), s);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_dtype(int d) {
  return weft_stack_push_dtype(stk(), (weft_dtype)d);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_memory_format(int f) {
  return weft_stack_push_memory_format(stk(), (weft_memory_format)f);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_push_device(int d) {
  return weft_stack_push_device(stk(), (weft_device)d);
}

/* Argument i's default, as the schema parsed it. */
EMSCRIPTEN_KEEPALIVE int weft_wasm_push_default(const weft_op* op, int i) {
  const weft_schema* s = weft_op_schema(op);
  if (i < 0 || i >= s->nargs || !s->args[i].has_default) {
    return weft__error(WEFT_INVALID_ARGUMENT, "%s(): argument %d has no default", s->name, i);
  }
  weft_ivalue v;
  weft_status st = weft_ivalue_copy(&v, &s->args[i].default_value);
  return st != WEFT_OK ? st : weft_stack_push(stk(), v);
}

/* Calls op with the `given` values on the stack; the returns replace them. */
EMSCRIPTEN_KEEPALIVE int weft_wasm_call(const weft_op* op, int given) {
  weft_status s = weft_op_prepare_args(op, stk(), given);
  return s != WEFT_OK ? s : weft_op_call_boxed(op, stk());
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_stack_size(void) {
  return (int)stk()->size;
}

/* Return values, by position from the bottom of the stack. */
EMSCRIPTEN_KEEPALIVE int weft_wasm_ret_tag(int i) {
  return (int)stk()->v[i].tag;
}

/* A new reference to the tensor (JS wraps it). */
EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_ret_tensor(int i) {
  return weft_tensor_retain(stk()->v[i].u.t);
}

EMSCRIPTEN_KEEPALIVE double weft_wasm_ret_number(int i) {
  const weft_ivalue* v = &stk()->v[i];
  switch (v->tag) {
    case WEFT_IV_INT: return (double)v->u.i;
    case WEFT_IV_DOUBLE: return v->u.d;
    case WEFT_IV_BOOL: return v->u.b;
    case WEFT_IV_DTYPE: return v->u.dtype;
    case WEFT_IV_MEMORY_FORMAT: return v->u.mf;
    case WEFT_IV_DEVICE: return v->u.device;
    default: return 0;
  }
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_ret_list_len(int i) {
  const weft_ivalue* v = &stk()->v[i];
  return v->tag == WEFT_IV_INT_LIST ? (int)v->u.ilist.len : v->tag == WEFT_IV_TENSOR_LIST ? (int)v->u.tlist.len : 0;
}

EMSCRIPTEN_KEEPALIVE double weft_wasm_ret_list_int(int i, int j) {
  return (double)stk()->v[i].u.ilist.data[j];
}

EMSCRIPTEN_KEEPALIVE weft_tensor* weft_wasm_ret_list_tensor(int i, int j) {
  return weft_tensor_retain(stk()->v[i].u.tlist.data[j]);
}

EMSCRIPTEN_KEEPALIVE const char* weft_wasm_ret_string(int i) {
  return stk()->v[i].u.s;
}

/* ---- explain and trace ---- */

static char* explained;

/* The plan of the op whose `given` arguments are on the stack; then
 * weft_wasm_explain_result() hands over the JSON (0: the op ran no iterator). */
EMSCRIPTEN_KEEPALIVE int weft_wasm_explain(const weft_op* op, int given) {
  free(explained);
  explained = NULL;
  weft_status s = weft_op_prepare_args(op, stk(), given);
  if (s == WEFT_OK) s = weft_explain_boxed(op, stk(), &explained);
  weft_stack_clear(stk());
  return s;
}

EMSCRIPTEN_KEEPALIVE char* weft_wasm_explain_result(void) {
  char* j = explained;
  explained = NULL;
  return j;
}

EMSCRIPTEN_KEEPALIVE void weft_wasm_trace_start(void) {
  weft_trace_start();
}

EMSCRIPTEN_KEEPALIVE void weft_wasm_trace_stop(void) {
  weft_trace_stop();
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_trace_count(void) {
  return (int)weft_trace_count();
}

EMSCRIPTEN_KEEPALIVE const char* weft_wasm_trace_op(int i) {
  return weft_trace_entries()[i].op;
}

EMSCRIPTEN_KEEPALIVE const char* weft_wasm_trace_key(int i) {
  return weft_dispatch_key_name(weft_trace_entries()[i].key);
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_trace_depth(int i) {
  return weft_trace_entries()[i].depth;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_trace_redispatch(int i) {
  return weft_trace_entries()[i].redispatch;
}

EMSCRIPTEN_KEEPALIVE int weft_wasm_trace_node(int i) {
  return weft_trace_entries()[i].node;
}
