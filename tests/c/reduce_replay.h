/* The tables of the reduction fixtures (reduce_cases.inc, reduce2_cases.inc,
 * written by tests/fixtures/gen_reduce*_fixtures.py) and their replay
 * through the boxed dispatcher; shared by test_reduce.c and test_reduce2.c.
 * A row checks one returned tensor (ret) of one call, or its error. */
#ifndef WEFT_TEST_REDUCE_REPLAY_H
#define WEFT_TEST_REDUCE_REPLAY_H

#include <string.h>

#include "fixture_util.h"
#include "test.h"

enum {
  W_BOOL = WEFT_BOOL, W_UINT8 = WEFT_UINT8, W_INT8 = WEFT_INT8, W_INT16 = WEFT_INT16, W_INT32 = WEFT_INT32,
  W_INT64 = WEFT_INT64, W_FLOAT16 = WEFT_FLOAT16, W_BFLOAT16 = WEFT_BFLOAT16, W_FLOAT32 = WEFT_FLOAT32,
  W_FLOAT64 = WEFT_FLOAT64
};

typedef struct {
  char kind; /* 't' tensor, 'L' int list, 'i' int, 'b' bool, 'y' dtype, 's' Scalar (dtype: its tag, 0 int /
                1 float / 2 bool; vals[vals]: its value), 'n' None */
  int dtype;
  int ndim; /* tensor: dims; 'L': list length */
  int64_t size[6], stride[6];
  int64_t offset;
  int vals, nvals;
  int64_t scalar;
  int64_t list[6];
} rd_arg;

typedef struct {
  const char* op;
  int arg0, nargs;
  int ret;   /* which returned tensor this row checks */
  int dtype; /* -1: error */
  int ndim;
  int64_t size[6], stride[6];
  int vals, nvals;
  const char* error;
} rd_case;

/* One replay's tables (the .inc's rd_cases, rd_args, rd_vals). */
typedef struct {
  const rd_case* cases;
  const rd_arg* args;
  const double* vals;
} rd_tables;

/* Pushes args[0..n) (values from vals); tensors[k]: argument k's tensor or
 * NULL (borrowed from the stack). false when one cannot be made or pushed. */
static inline bool rd_push_args(weft_stack* st, const rd_arg* args, const double* vals, int n,
                                weft_tensor** tensors) {
  for (int k = 0; k < n; k++) {
    const rd_arg* a = &args[k];
    weft_status s = WEFT_OK;
    tensors[k] = NULL;
    switch (a->kind) {
      case 't': {
        weft_tensor* t = fx_make_tensor(&vals[a->vals], a->nvals, (weft_dtype)a->dtype, a->size, a->stride,
                                        a->ndim, a->offset);
        if (!t) return false;
        tensors[k] = t;
        s = weft_stack_push_tensor_owned(st, t);
        break;
      }
      case 'L': s = weft_stack_push_int_list(st, a->list, a->ndim); break;
      case 'i': s = weft_stack_push_int(st, a->scalar); break;
      case 'b': s = weft_stack_push_bool(st, a->scalar != 0); break;
      case 'y': s = weft_stack_push_dtype(st, (weft_dtype)a->dtype); break;
      case 's':
        s = a->dtype == 1   ? weft_stack_push_double(st, vals[a->vals])
            : a->dtype == 2 ? weft_stack_push_bool(st, vals[a->vals] != 0)
                            : weft_stack_push_int(st, (int64_t)vals[a->vals]);
        break;
      case 'n': s = weft_stack_push_none(st); break;
    }
    if (s != WEFT_OK) return false;
  }
  return true;
}

/* The loosest tolerance of the result dtype and the arguments' dtypes. */
static inline double rd_tol(weft_dtype result, const rd_arg* args, int n) {
  double e = fx_tol(result);
  for (int k = 0; k < n; k++) {
    const rd_arg* a = &args[k];
    if ((a->kind == 't' || a->kind == 'y') && fx_tol((weft_dtype)a->dtype) > e) e = fx_tol((weft_dtype)a->dtype);
  }
  return e;
}

static int rd__failures_shown;

static inline void rd_fail(const rd_tables* tb, int ci, const char* what) {
  test__failed++;
  if (rd__failures_shown++ < 40) {
    fprintf(stderr, "case %d %s ret %d: %s (last error: %s)\n", ci, tb->cases[ci].op, tb->cases[ci].ret, what,
            weft_last_error());
  }
}

/* out= and in-place forms return their own tensors: self in place, else the
 * ret-th tensor argument after self; NULL when the op makes new ones */
static inline const weft_tensor* rd_written(const rd_case* c, weft_tensor* const* tensors) {
  size_t n = strlen(c->op);
  if (n && c->op[n - 1] == '_') return tensors[0];
  const char* dot = strchr(c->op, '.');
  if (dot && dot > c->op && dot[-1] == '_') return tensors[0];
  int seen = 0;
  for (int k = 1; k < c->nargs; k++)
    if (tensors[k] && seen++ == c->ret) return tensors[k];
  return NULL;
}

/* Row ci: the call's error, or its returned tensor ret checked; nothing left behind. */
static inline void rd_replay_case(const rd_tables* tb, int ci) {
  const rd_case* c = &tb->cases[ci];
  weft_op* op = weft_op_find(c->op);
  if (!op) {
    rd_fail(tb, ci, "op not found");
    return;
  }
  int64_t before = weft_memory().tensors;
  weft_stack st;
  weft_stack_init(&st);
  weft_tensor* tensors[8];
  weft_clear_error();
  weft_status s = rd_push_args(&st, &tb->args[c->arg0], tb->vals, c->nargs, tensors) ? weft_op_call_boxed(op, &st)
                                                                                      : WEFT_INTERNAL;
  char msg[256];
  if (c->dtype < 0) {
    if (s == WEFT_OK) rd_fail(tb, ci, "expected an error");
    else if (!fx_error_has(c->error)) rd_fail(tb, ci, c->error);
    else test__passed++;
  } else if (s != WEFT_OK) {
    rd_fail(tb, ci, "unexpected error");
  } else if (st.size <= c->ret) {
    rd_fail(tb, ci, "too few returns");
  } else if (rd_written(c, tensors) && st.v[c->ret].u.t != rd_written(c, tensors)) {
    rd_fail(tb, ci, "out= / in place returns another tensor");
  } else if (!fx_check(st.v[c->ret].u.t, (weft_dtype)c->dtype, c->ndim, c->size, c->stride, &tb->vals[c->vals],
                       c->nvals, rd_tol((weft_dtype)c->dtype, &tb->args[c->arg0], c->nargs), msg, sizeof msg)) {
    rd_fail(tb, ci, msg);
  } else {
    test__passed++;
  }
  weft_stack_clear(&st);
  if (weft_memory().tensors != before) rd_fail(tb, ci, "tensors left behind");
}

/* Every row of the tables, n of them. */
static inline void rd_replay_all(const rd_tables* tb, int n, const char* label) {
  int before = test__failed;
  for (int i = 0; i < n; i++) rd_replay_case(tb, i);
  printf("%s: %d rows, %d failed\n", label, n, test__failed - before);
}

/* Every row at 1 thread, then at 3 when the pool has more than one. */
static inline void rd_replay_threads(const rd_tables* tb, int n) {
  weft_set_num_threads(1);
  rd_replay_all(tb, n, "1 thread");
  if (weft_max_threads() > 1) {
    weft_set_num_threads(3);
    rd_replay_all(tb, n, "3 threads");
    weft_set_num_threads(1);
  }
}

#endif
