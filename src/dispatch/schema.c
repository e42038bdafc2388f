/* The schema parser (torch/csrc/jit/frontend/function_schema_parser.cpp,
 * for the subset native_functions.yaml uses):
 *
 *   [ns::]name[.overload](type [name][=default], ..., *, ...) -> ret | (ret, ...)
 *   type: Base[(alias[!])][?][[N]][?]
 *
 * Errors name the position: "schema: expected ')' but found ',' at position 17". */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_internal.h"

static const char* const type_names[WEFT_TYPE_COUNT] = {
    [WEFT_TYPE_TENSOR] = "Tensor",         [WEFT_TYPE_INT] = "int",
    [WEFT_TYPE_SYMINT] = "SymInt",         [WEFT_TYPE_FLOAT] = "float",
    [WEFT_TYPE_BOOL] = "bool",             [WEFT_TYPE_STR] = "str",
    [WEFT_TYPE_SCALAR] = "Scalar",         [WEFT_TYPE_SCALAR_TYPE] = "ScalarType",
    [WEFT_TYPE_MEMORY_FORMAT] = "MemoryFormat", [WEFT_TYPE_LAYOUT] = "Layout",
    [WEFT_TYPE_DEVICE] = "Device",         [WEFT_TYPE_GENERATOR] = "Generator",
    [WEFT_TYPE_DIMNAME] = "Dimname"};

const char* weft__schema_type_name(int type) {
  return type >= 0 && type < WEFT_TYPE_COUNT ? type_names[type] : "?";
}

typedef struct {
  const char* text;
  size_t pos;
  bool failed;
} parser;

static void skip_ws(parser* p) {
  while (isspace((unsigned char)p->text[p->pos])) p->pos++;
}

static char peek(parser* p) {
  skip_ws(p);
  return p->text[p->pos];
}

/* Sets the positioned error once; later failures keep the first. */
static bool fail(parser* p, const char* expected) {
  if (p->failed) return false;
  p->failed = true;
  skip_ws(p);
  char found[24];
  if (!p->text[p->pos]) {
    snprintf(found, sizeof found, "end of input");
  } else {
    size_t n = 0;
    if (isalnum((unsigned char)p->text[p->pos]) || p->text[p->pos] == '_')
      while (n < 16 && (isalnum((unsigned char)p->text[p->pos + n]) || p->text[p->pos + n] == '_')) n++;
    else
      n = 1;
    snprintf(found, sizeof found, "'%.*s'", (int)n, p->text + p->pos);
  }
  weft__error(WEFT_INVALID_ARGUMENT, "schema: expected %s but found %s at position %zu: %s", expected,
              found, p->pos, p->text);
  return false;
}

static bool accept(parser* p, const char* tok) {
  skip_ws(p);
  size_t n = strlen(tok);
  if (strncmp(p->text + p->pos, tok, n) != 0) return false;
  p->pos += n;
  return true;
}

static bool expect(parser* p, const char* tok) {
  if (accept(p, tok)) return true;
  char what[16];
  snprintf(what, sizeof what, "'%s'", tok);
  return fail(p, what);
}

static char* dup_range(const char* s, size_t n) {
  char* r = malloc(n + 1);
  if (!r) return NULL;
  memcpy(r, s, n);
  r[n] = '\0';
  return r;
}

/* Identifier [A-Za-z_][A-Za-z0-9_]*; NULL (no error) when none. */
static char* ident(parser* p) {
  skip_ws(p);
  size_t b = p->pos;
  if (!(isalpha((unsigned char)p->text[b]) || p->text[b] == '_')) return NULL;
  size_t e = b;
  while (isalnum((unsigned char)p->text[e]) || p->text[e] == '_') e++;
  p->pos = e;
  return dup_range(p->text + b, e - b);
}

static void arg_free(weft_arg* a) {
  free(a->name);
  free(a->alias);
  free(a->default_text);
  weft_ivalue_destroy(&a->default_value);
}

void weft_schema_free(weft_schema* s) {
  if (!s) return;
  for (int i = 0; i < s->nargs; i++) arg_free(&s->args[i]);
  for (int i = 0; i < s->nreturns; i++) arg_free(&s->returns[i]);
  free(s->args);
  free(s->returns);
  free(s->ns);
  free(s->name);
  free(s->overload);
  free(s->full_name);
  free(s);
}

static bool parse_type(parser* p, weft_arg* a) {
  size_t at = p->pos;
  char* base = ident(p);
  if (!base) return fail(p, "a type");
  int t = 0;
  while (t < WEFT_TYPE_COUNT && strcmp(type_names[t], base) != 0) t++;
  free(base);
  if (t == WEFT_TYPE_COUNT) {
    p->pos = at;
    return fail(p, "a type (Tensor, int, SymInt, float, bool, str, Scalar, ScalarType, ...)");
  }
  a->type = (weft_type_kind)t;
  if (p->text[p->pos] == '(') { /* alias annotation, directly after the type: (a), (a!), (a|b), (a -> *) */
    p->pos++;
    skip_ws(p);
    size_t b = p->pos;
    do {
      if (!accept(p, "*")) {
        char* set = ident(p);
        if (!set) return fail(p, "an alias set name");
        free(set);
      }
    } while (accept(p, "|") || accept(p, "->"));
    size_t e = p->pos;
    a->alias = dup_range(p->text + b, e - b);
    if (!a->alias) return fail(p, "memory");
    if (accept(p, "!")) a->is_write = true;
    if (!expect(p, ")")) return false;
  }
  if (p->text[p->pos] == '?') {
    p->pos++;
    a->optional = true;
  }
  if (p->text[p->pos] == '[') {
    p->pos++;
    a->is_list = true;
    a->elem_optional = a->optional;
    a->optional = false;
    skip_ws(p);
    if (isdigit((unsigned char)p->text[p->pos])) {
      /* int[N]: N must fit an int (PyTorch's stoi throws past that) */
      errno = 0;
      long long n = strtoll(p->text + p->pos, NULL, 10);
      if (errno == ERANGE || n > INT_MAX) return fail(p, "a list size of at most 2147483647");
      a->list_size = (int)n;
      while (isdigit((unsigned char)p->text[p->pos])) p->pos++;
    }
    if (!expect(p, "]")) return false;
    if (p->text[p->pos] == '?') {
      p->pos++;
      a->optional = true;
    }
  }
  return true;
}

static bool is_int_type(weft_type_kind t) { return t == WEFT_TYPE_INT || t == WEFT_TYPE_SYMINT; }

/* A number token; *is_float when it has '.', an exponent, or is inf/nan. */
static bool parse_number(parser* p, double* d, int64_t* i, bool* is_float) {
  skip_ws(p);
  const char* s = p->text + p->pos;
  size_t n = 0;
  if (s[n] == '-' || s[n] == '+') n++;
  if (strncmp(s + n, "inf", 3) == 0 || strncmp(s + n, "nan", 3) == 0) {
    *is_float = true;
    *d = strtod(s, NULL);
    p->pos += n + 3;
    return true;
  }
  size_t digits = n;
  *is_float = false;
  while (isdigit((unsigned char)s[n]) || s[n] == '.' || s[n] == 'e' || s[n] == 'E' ||
         ((s[n] == '-' || s[n] == '+') && (s[n - 1] == 'e' || s[n - 1] == 'E'))) {
    if (!isdigit((unsigned char)s[n])) *is_float = true;
    n++;
  }
  if (n == digits) return fail(p, "a number");
  char* end;
  errno = 0;
  if (*is_float) {
    *d = strtod(s, &end);
  } else {
    *i = strtoll(s, &end, 10);
    *d = (double)*i;
  }
  if ((size_t)(end - s) != n || errno) return fail(p, "a number");
  p->pos += n;
  return true;
}

static bool parse_int_list_default(parser* p, const weft_arg* a, weft_ivalue* v) {
  int64_t vals[WEFT_MAX_DIMS * 2];
  int64_t n = 0;
  double d;
  bool f;
  if (accept(p, "[")) {
    if (!accept(p, "]")) {
      do {
        if (n == (int64_t)(sizeof vals / sizeof vals[0])) return fail(p, "a shorter list");
        if (!parse_number(p, &d, &vals[n], &f)) return false;
        if (f) return fail(p, "an integer");
        n++;
      } while (accept(p, ","));
      if (!expect(p, "]")) return false;
    }
  } else { /* int[2] stride=1 means [1, 1] */
    if (!parse_number(p, &d, &vals[0], &f)) return false;
    if (f) return fail(p, "an integer");
    n = a->list_size > 0 ? a->list_size : 1;
    /* the same bound as a written list (int[204] k=0 overflowed vals) */
    if (n > (int64_t)(sizeof vals / sizeof vals[0])) return fail(p, "a list size of at most 32 for a default");
    for (int64_t k = 1; k < n; k++) vals[k] = vals[0];
  }
  v->tag = WEFT_IV_INT_LIST;
  v->u.ilist.len = n;
  v->u.ilist.data = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  if (!v->u.ilist.data) return fail(p, "memory");
  memcpy(v->u.ilist.data, vals, (size_t)n * sizeof(int64_t));
  return true;
}

static bool parse_string_default(parser* p, weft_ivalue* v) {
  skip_ws(p);
  char q = p->text[p->pos];
  if (q != '\'' && q != '"') return fail(p, "a string");
  const char* b = p->text + p->pos + 1;
  const char* e = strchr(b, q);
  if (!e) return fail(p, "a closing quote");
  v->tag = WEFT_IV_STRING;
  v->u.s = dup_range(b, (size_t)(e - b));
  if (!v->u.s) return fail(p, "memory");
  p->pos = (size_t)(e - p->text) + 1;
  return true;
}

static bool parse_ident_default(parser* p, const weft_arg* a, weft_ivalue* v) {
  size_t at = p->pos;
  char* id = ident(p);
  if (!id) return fail(p, "a default value");
  bool ok = true;
  if (strcmp(id, "True") == 0 || strcmp(id, "False") == 0) {
    ok = a->type == WEFT_TYPE_BOOL || a->type == WEFT_TYPE_SCALAR;
    v->tag = WEFT_IV_BOOL;
    v->u.b = id[0] == 'T';
  } else if (a->type == WEFT_TYPE_MEMORY_FORMAT) {
    weft_memory_format f = WEFT_CONTIGUOUS_FORMAT;
    ok = weft_memory_format_from_name(id, &f) == WEFT_OK;
    v->tag = WEFT_IV_MEMORY_FORMAT;
    v->u.mf = f;
  } else if (a->type == WEFT_TYPE_SCALAR_TYPE) {
    weft_dtype dt;
    ok = weft_dtype_from_name(id, &dt) == WEFT_OK;
    v->tag = WEFT_IV_DTYPE;
    v->u.dtype = dt;
  } else if (a->type == WEFT_TYPE_LAYOUT && strcmp(id, "strided") == 0) {
    v->tag = WEFT_IV_STRING;
    v->u.s = id;
    return true;
  } else {
    ok = false;
  }
  free(id);
  if (!ok) {
    weft_clear_error();
    p->pos = at;
    return fail(p, "a default value of the argument's type");
  }
  return true;
}

static bool parse_default(parser* p, weft_arg* a) {
  skip_ws(p);
  size_t b = p->pos;
  weft_ivalue* v = &a->default_value;
  bool ok;
  if (accept(p, "None")) {
    v->tag = WEFT_IV_NONE;
    ok = true;
  } else if (a->is_list && (is_int_type(a->type) || a->type == WEFT_TYPE_BOOL)) {
    ok = parse_int_list_default(p, a, v);
  } else if (a->is_list) {
    ok = accept(p, "[") && accept(p, "]");
    if (!ok) return fail(p, "'[]'");
    v->tag = a->type == WEFT_TYPE_TENSOR ? WEFT_IV_TENSOR_LIST : WEFT_IV_DOUBLE_LIST;
    v->u.tlist.data = NULL;
    v->u.tlist.len = 0;
  } else if (a->type == WEFT_TYPE_STR || a->type == WEFT_TYPE_DEVICE) {
    ok = parse_string_default(p, v);
    if (ok && a->type == WEFT_TYPE_DEVICE) {
      weft_device d;
      if (weft_device_from_name(v->u.s, &d) != WEFT_OK) {
        weft_clear_error();
        p->pos = b;
        return fail(p, "a device name");
      }
      weft_ivalue_destroy(v);
      v->tag = WEFT_IV_DEVICE;
      v->u.device = d;
    }
  } else if (a->type == WEFT_TYPE_INT || a->type == WEFT_TYPE_SYMINT || a->type == WEFT_TYPE_FLOAT ||
             a->type == WEFT_TYPE_SCALAR) {
    double d;
    int64_t i = 0;
    bool f;
    ok = parse_number(p, &d, &i, &f);
    if (ok && f && is_int_type(a->type)) {
      p->pos = b;
      return fail(p, "an integer");
    }
    if (a->type == WEFT_TYPE_FLOAT || f) {
      v->tag = WEFT_IV_DOUBLE;
      v->u.d = d;
    } else {
      v->tag = WEFT_IV_INT;
      v->u.i = i;
    }
  } else if (a->type == WEFT_TYPE_TENSOR || a->type == WEFT_TYPE_GENERATOR) {
    return fail(p, "None");
  } else {
    ok = parse_ident_default(p, a, v);
  }
  if (!ok) return false;
  size_t e = p->pos;
  a->has_default = true;
  a->default_text = dup_range(p->text + b, e - b);
  return a->default_text != NULL || fail(p, "memory");
}

/* Grows *v by one zeroed element. */
static weft_arg* push_arg(weft_arg** v, int* n) {
  weft_arg* g = realloc(*v, (size_t)(*n + 1) * sizeof **v);
  if (!g) return NULL;
  *v = g;
  memset(&g[*n], 0, sizeof g[*n]);
  return &g[(*n)++];
}

static bool parse_args(parser* p, weft_schema* s) {
  if (!expect(p, "(")) return false;
  if (accept(p, ")")) return true;
  bool kwarg_only = false;
  do {
    if (accept(p, "...")) {
      s->is_vararg = true;
      continue;
    }
    if (accept(p, "*")) {
      if (kwarg_only) return fail(p, "one '*' only");
      kwarg_only = true;
      continue;
    }
    weft_arg* a = push_arg(&s->args, &s->nargs);
    if (!a) return fail(p, "memory");
    a->kwarg_only = kwarg_only;
    if (!parse_type(p, a)) return false;
    a->name = ident(p);
    if (!a->name) return fail(p, "an argument name");
    for (int i = 0; i + 1 < s->nargs; i++)
      if (strcmp(s->args[i].name, a->name) == 0) {
        p->pos -= strlen(a->name);
        return fail(p, "a new argument name (duplicate)");
      }
    if (accept(p, "=") && !parse_default(p, a)) return false;
  } while (accept(p, ","));
  return expect(p, ")");
}

static bool parse_return(parser* p, weft_schema* s) {
  weft_arg* r = push_arg(&s->returns, &s->nreturns);
  if (!r) return fail(p, "memory");
  if (!parse_type(p, r)) return false;
  r->name = ident(p); /* optional */
  return true;
}

static bool parse_returns(parser* p, weft_schema* s) {
  if (!expect(p, "->")) return false;
  if (accept(p, "...")) {
    s->is_varret = true;
    return true;
  }
  if (accept(p, "(")) {
    s->tuple_return = true;
    if (accept(p, ")")) return true;
    do {
      if (!parse_return(p, s)) return false;
    } while (accept(p, ","));
    return expect(p, ")");
  }
  return parse_return(p, s);
}

static bool parse_name(parser* p, weft_schema* s, const char* default_ns) {
  char* first = ident(p);
  if (!first) return fail(p, "an operator name");
  if (p->text[p->pos] == ':' && p->text[p->pos + 1] == ':') {
    p->pos += 2;
    s->ns = first;
    s->name = ident(p);
    if (!s->name) return fail(p, "an operator name after '::'");
  } else {
    s->ns = dup_range(default_ns, strlen(default_ns));
    s->name = first;
  }
  if (p->text[p->pos] == '.') {
    p->pos++;
    s->overload = ident(p);
    if (!s->overload) return fail(p, "an overload name after '.'");
  } else {
    s->overload = dup_range("", 0);
  }
  size_t n = strlen(s->ns) + strlen(s->name) + strlen(s->overload) + 4;
  s->full_name = malloc(n);
  if (!s->ns || !s->overload || !s->full_name) return fail(p, "memory");
  snprintf(s->full_name, n, "%s::%s%s%s", s->ns, s->name, s->overload[0] ? "." : "", s->overload);
  return true;
}

weft_schema* weft_schema_parse(const char* text, const char* default_ns) {
  weft_schema* s = calloc(1, sizeof *s);
  if (!s) return weft__error_null(WEFT_OUT_OF_MEMORY, "schema: out of memory");
  parser p = {text, 0, false};
  bool ok = parse_name(&p, s, default_ns ? default_ns : "aten") && parse_args(&p, s) &&
            parse_returns(&p, s);
  if (ok && peek(&p) != '\0') ok = fail(&p, "end of input");
  if (!ok) {
    weft_schema_free(s);
    return NULL;
  }
  return s;
}

/* ---- printing ---- */
typedef struct {
  char* buf;
  size_t cap, len;
} out_buf;

static void put(out_buf* o, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf* o, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = o->len < o->cap ? o->cap - o->len : 0;
  int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) o->len += (size_t)n;
}

/* put(o, "%s", s) without vsnprintf: the JS op registry prints every
 * schema at init (src/wasm/exports_dispatch.c), some 20 pieces each, and a
 * vsnprintf per piece was a good part of init()'s time in wasm. */
static void put_str(out_buf* o, const char* s) {
  size_t n = strlen(s);
  if (o->len < o->cap) {
    size_t k = n < o->cap - o->len - 1 ? n : o->cap - o->len - 1;
    memcpy(o->buf + o->len, s, k);
    o->buf[o->len + k] = '\0';
  }
  o->len += n;
}

static void put_type(out_buf* o, const weft_arg* a) {
  put_str(o, type_names[a->type]);
  if (a->alias) {
    put_str(o, "(");
    put_str(o, a->alias);
    put_str(o, a->is_write ? "!)" : ")");
  }
  if (a->is_list) {
    if (a->elem_optional) put_str(o, "?");
    if (a->list_size) put(o, "[%d]", a->list_size);
    else put_str(o, "[]");
  }
  if (a->optional) put_str(o, "?");
}

size_t weft_arg_type_format(const weft_arg* a, char* buf, size_t cap) {
  out_buf o = {buf, cap, 0};
  if (cap) buf[0] = '\0';
  put_type(&o, a);
  return o.len;
}

size_t weft_schema_format(const weft_schema* s, char* buf, size_t cap) {
  out_buf o = {buf, cap, 0};
  if (cap) buf[0] = '\0';
  put_str(&o, s->full_name);
  put_str(&o, "(");
  bool star = false;
  for (int i = 0; i < s->nargs; i++) {
    const weft_arg* a = &s->args[i];
    if (i) put_str(&o, ", ");
    if (a->kwarg_only && !star) {
      put_str(&o, "*, ");
      star = true;
    }
    put_type(&o, a);
    put_str(&o, " ");
    put_str(&o, a->name);
    if (a->has_default) {
      put_str(&o, "=");
      put_str(&o, a->default_text);
    }
  }
  if (s->is_vararg) put_str(&o, s->nargs ? ", ..." : "...");
  put_str(&o, ") -> ");
  if (s->is_varret) {
    put_str(&o, "...");
    return o.len;
  }
  bool paren = s->tuple_return || s->nreturns != 1;
  if (paren) put_str(&o, "(");
  for (int i = 0; i < s->nreturns; i++) {
    if (i) put_str(&o, ", ");
    put_type(&o, &s->returns[i]);
    if (s->returns[i].name) {
      put_str(&o, " ");
      put_str(&o, s->returns[i].name);
    }
  }
  if (paren) put_str(&o, ")");
  return o.len;
}
