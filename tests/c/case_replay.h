/* Replay of PyTorch-recorded op cases in the table format the fixture
 * generators write as C (tests/fixtures/gen_linalg_fixtures.py write_inc):
 * the arguments pushed on a boxed stack, the op called through the
 * dispatcher, then the error message (PyTorch's text must be a part of
 * weft_last_error()) or the result's dtype, shape, strides and values
 * (exact: the generators pick values whose products and sums are). Used by
 * test_linalg.c and test_conv.c. */
#ifndef WEFT_TEST_CASE_REPLAY_H
#define WEFT_TEST_CASE_REPLAY_H

#include "fixture_util.h"
#include "test.h"

enum {
  W_BOOL = WEFT_BOOL, W_UINT8 = WEFT_UINT8, W_INT8 = WEFT_INT8, W_INT16 = WEFT_INT16, W_INT32 = WEFT_INT32,
  W_INT64 = WEFT_INT64, W_FLOAT16 = WEFT_FLOAT16, W_BFLOAT16 = WEFT_BFLOAT16, W_FLOAT32 = WEFT_FLOAT32,
  W_FLOAT64 = WEFT_FLOAT64
};

typedef struct {
  char kind; /* 't' tensor, 'n' None, 'i' / 'f' / 'b' int, float, bool number, 'l' int list, 's' string */
  int dtype, ndim;
  int64_t size[6], stride[6], offset;
  int first, count; /* storage values in the value table ('l': the list's values) */
  double number;
  const char* str;
} lin_arg;

typedef struct {
  const char* op;
  int first, count; /* arguments in the argument table */
  int dtype;        /* -1: PyTorch raised `error` */
  int ndim;
  int64_t size[6], stride[6];
  int vals, nvals;
  const char* error;
} lin_case;

typedef struct {
  const double* vals;
  const lin_arg* args;
  const lin_case* cases;
  int ncases;
} fx_table;

static weft_status fx_push(weft_stack* st, const fx_table* tb, const lin_arg* a) {
  int64_t list[16];
  switch (a->kind) {
    case 't': {
      weft_tensor* t = fx_make_tensor(tb->vals + a->first, a->count, (weft_dtype)a->dtype, a->size, a->stride,
                                      a->ndim, a->offset);
      return t ? weft_stack_push_tensor_owned(st, t) : weft_last_status();
    }
    case 'n': return weft_stack_push_none(st);
    case 'i': return weft_stack_push_scalar(st, weft_scalar_int((int64_t)a->number));
    case 'f': return weft_stack_push_scalar(st, weft_scalar_double(a->number));
    case 'b': return weft_stack_push_scalar(st, weft_scalar_bool(a->number != 0));
    case 'l':
      for (int i = 0; i < a->count && i < 16; i++) list[i] = (int64_t)tb->vals[a->first + i];
      return weft_stack_push_int_list(st, list, a->count);
    default: return weft_stack_push_string(st, a->str);
  }
}

/* 1 when case ci fails (reported on stderr) */
static int fx_replay(const fx_table* tb, int ci) {
  const lin_case* c = &tb->cases[ci];
  weft_op* op = weft_op_find(c->op);
  weft_stack st;
  weft_stack_init(&st);
  const char* bad = op ? NULL : "no such op";
  for (int k = 0; k < c->count && !bad; k++)
    if (fx_push(&st, tb, &tb->args[c->first + k]) != WEFT_OK) bad = "arguments";
  char buf[256];
  if (!bad) {
    weft_status s = weft_op_call_boxed(op, &st);
    if (c->dtype < 0)
      bad = s == WEFT_OK ? "expected an error" : fx_error_has(c->error) ? NULL : "message";
    else if (s != WEFT_OK)
      bad = "unexpected error";
    else if (!fx_check(weft_stack_peek(&st, 0)->u.t, (weft_dtype)c->dtype, c->ndim, c->size, c->stride,
                       tb->vals + c->vals, c->nvals, 0.0, buf, sizeof buf))
      bad = buf;
  }
  if (bad)
    fprintf(stderr, "case %d %s: %s (last error: %s; want %s)\n", ci, c->op, bad, weft_last_error(),
            c->error ? c->error : "a result");
  weft_stack_clear(&st);
  return bad != NULL;
}

static void fx_replay_all(const fx_table* tb, const char* label) {
  int failed = 0;
  for (int i = 0; i < tb->ncases; i++) failed += fx_replay(tb, i);
  printf("%s: %d cases, %d failed\n", label, tb->ncases, failed);
  CHECK(failed == 0);
}

/* every case at 1 and at 3 threads, then back to 1 */
static void fx_replay_threads(const fx_table* tb) {
  weft_set_num_threads(1);
  fx_replay_all(tb, "1 thread");
  weft_set_num_threads(3);
  fx_replay_all(tb, "3 threads");
  weft_set_num_threads(1);
}

/* Each of the n schemas names a registered op with a kernel on `key` (or a
 * CompositeImplicitAutograd one) and at least one case of tb. */
static inline void fx_check_registered(const char* const* schemas, size_t n, const fx_table* tb, weft_dispatch_key key) {
  for (size_t i = 0; i < n; i++) {
    char name[64] = "aten::";
    size_t len = strcspn(schemas[i], "(");
    memcpy(name + 6, schemas[i], len);
    name[6 + len] = '\0';
    weft_op* op = weft_op_find(name);
    CHECK(op != NULL);
    if (op) CHECK(weft_op_has_kernel(op, key) || weft_op_has_kernel(op, WEFT_KEY_COMPOSITE_IMPLICIT_AUTOGRAD));
    int found = 0;
    for (int c = 0; c < tb->ncases; c++) found += strcmp(tb->cases[c].op, name + 6) == 0;
    if (!found) fprintf(stderr, "%s: no case in the fixture table\n", name);
    CHECK(found > 0);
  }
}

#endif
