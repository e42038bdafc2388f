/* Running a reduction iterator (PyTorch's TensorIteratorReduce.cpp:
 * parallel_reduce, two_pass_reduction, parallel_dim_reduction). Build has
 * put the reduced dims first; here the plan picks how threads share the
 * work, and the runner cuts sub-iterators (a copy of the iterator with one
 * dim narrowed and its data pointers moved) for the pool. */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "core/internal.h"
#include "iter/iter_internal.h"
#include "weft/iter.h"
#include "weft/parallel.h"

const char* weft_reduce_split_name(weft_reduce_split s) {
  switch (s) {
    case WEFT_REDUCE_SERIAL: return "serial";
    case WEFT_REDUCE_SPLIT_OUTPUTS: return "outputs";
    case WEFT_REDUCE_SPLIT_REDUCED: return "reduced";
  }
  return "?";
}

const char* weft_reduce_kind_name(weft_reduce_kind k) {
  switch (k) {
    case WEFT_REDUCE_NONE: return "none";
    case WEFT_REDUCE_INNER: return "inner";
    case WEFT_REDUCE_OUTER: return "outer";
    case WEFT_REDUCE_STRIDED: return "strided";
  }
  return "?";
}

static bool is_reduced(const weft_iter* it, int d) {
  return it->ops[0].stride_bytes[d] == 0 && it->shape[d] > 1;
}

static int64_t esize(const weft_iter* it, int a) { return (int64_t)weft_dtype_size(it->ops[a].dtype); }

/* Dims of the largest size among reduced (want_reduced) or kept ones; -1 if none. */
static int largest_dim(const weft_iter* it, bool want_reduced) {
  int best = -1;
  for (int d = 0; d < it->ndim; d++) {
    if (it->shape[d] <= 1 || is_reduced(it, d) != want_reduced) continue;
    if (best < 0 || it->shape[d] > it->shape[best]) best = d;
  }
  return best;
}

static int64_t split_grain(const weft_iter* it, int dim, int64_t grain) {
  int64_t per = it->shape[dim] ? weft_iter_numel(it) / it->shape[dim] : 1;
  int64_t g = per ? grain / per : grain;
  return g < 1 ? 1 : g;
}

void weft_iter_reduce_plan(const weft_iter* it, int64_t grain, weft_reduce_plan* p) {
  memset(p, 0, sizeof *p);
  p->split_dim = -1;
  int64_t numel = weft_iter_numel(it);
  p->num_outputs = 1;
  p->reduce_size = 1;
  for (int d = 0; d < it->ndim; d++) {
    if (is_reduced(it, d)) {
      p->reduce_size *= it->shape[d];
      if (p->reduced_iter_dims == d) p->reduced_iter_dims++;
    } else {
      p->num_outputs *= it->shape[d];
    }
  }
  if (numel == 0) p->num_outputs = 0;
  if (it->ndim > 0 && is_reduced(it, 0)) {
    int in = it->noutputs;
    if (it->ops[in].stride_bytes[0] == esize(it, in)) p->kind = WEFT_REDUCE_INNER;
    else if (it->ndim > 1 && !is_reduced(it, 1) && it->ops[0].stride_bytes[1] == esize(it, 0) &&
             it->ops[in].stride_bytes[1] == esize(it, in))
      p->kind = WEFT_REDUCE_OUTER;
    else p->kind = WEFT_REDUCE_STRIDED;
  }
  p->chunks = numel > 0 ? 1 : 0;
  if (grain < 1) grain = 1;
  int threads = weft_get_num_threads();
  if (numel < grain || threads <= 1 || weft_in_parallel_region()) return;
  /* the outermost kept dim that gives every thread work (cutting an inner one
   * would make each thread stream narrow strips of every row), else the largest */
  int kept = -1;
  for (int d = it->ndim - 1; d >= 0 && kept < 0; d--)
    if (!is_reduced(it, d) && it->shape[d] >= threads) kept = d;
  if (kept < 0) kept = largest_dim(it, false);
  int red = largest_dim(it, true);
  if (kept >= 0 && it->shape[kept] >= threads) {
    p->split = WEFT_REDUCE_SPLIT_OUTPUTS;
    p->split_dim = kept;
    p->chunks = weft__parallel_chunks(it->shape[kept], split_grain(it, kept, grain));
  } else if (red >= 0) {
    /* a few chunks per thread (each with its own partial, folded in chunk
     * order), so a thread that starts late (a worker waking from its futex)
     * or runs slower has its chunks stolen instead of holding up the rest */
    int64_t k = (numel + grain - 1) / grain;
    if (k > 4 * (int64_t)threads) k = 4 * (int64_t)threads;
    if (k > it->shape[red]) k = it->shape[red];
    if (k <= 1) return;
    p->split = WEFT_REDUCE_SPLIT_REDUCED;
    p->split_dim = red;
    p->chunks = k;
  } else if (kept >= 0) {
    p->split = WEFT_REDUCE_SPLIT_OUTPUTS;
    p->split_dim = kept;
    p->chunks = weft__parallel_chunks(it->shape[kept], split_grain(it, kept, grain));
  }
  if (p->chunks <= 1) {
    p->split = WEFT_REDUCE_SERIAL;
    p->split_dim = -1;
    p->chunks = 1;
  }
}

/* it with dim narrowed to [begin, end). */
static weft_iter narrowed(const weft_iter* it, int dim, int64_t begin, int64_t end) {
  weft_iter sub = *it;
  sub.shape[dim] = end - begin;
  for (int a = 0; a < it->ntensors; a++) sub.ops[a].data += begin * it->ops[a].stride_bytes[dim];
  return sub;
}

/* ---- split over outputs ---- */

typedef struct {
  const weft_iter* it;
  int dim;
  weft_loop2d_fn loop;
  void* ctx;
} outputs_job;

static weft_status run_outputs(void* p, int64_t begin, int64_t end) {
  const outputs_job* job = p;
  weft_iter sub = narrowed(job->it, job->dim, begin, end);
  weft_iter_serial_for_each(&sub, job->loop, job->ctx, 0, weft_iter_numel(&sub));
  return WEFT_OK;
}

/* ---- split over the reduced range ---- */

typedef struct {
  const weft_iter* it;
  int dim;
  int64_t k;
  weft_loop2d_fn loop;
  void* ctx;
  char* partials[WEFT_ITER_MAX_OPERANDS]; /* per output: (k - 1) dense copies */
  int64_t dense_strides[WEFT_MAX_DIMS];   /* element strides of a partial, 0 on reduced dims */
  int64_t num_outputs;
} reduced_job;

static int64_t range_begin(int64_t size, int64_t k, int64_t i) { return size * i / k; }

static weft_status run_reduced(void* p, int64_t begin, int64_t end) {
  const reduced_job* job = p;
  const weft_iter* it = job->it;
  for (int64_t c = begin; c < end; c++) {
    int64_t size = it->shape[job->dim];
    weft_iter sub = narrowed(it, job->dim, range_begin(size, job->k, c), range_begin(size, job->k, c + 1));
    if (c > 0) {
      for (int o = 0; o < it->noutputs; o++) {
        int64_t es = esize(it, o);
        sub.ops[o].data = job->partials[o] + (c - 1) * job->num_outputs * es;
        for (int d = 0; d < it->ndim; d++) sub.ops[o].stride_bytes[d] = job->dense_strides[d] * es;
      }
    }
    weft_iter_serial_for_each(&sub, job->loop, job->ctx, 0, weft_iter_numel(&sub));
  }
  return WEFT_OK;
}

/* Visits every output element: fn(ctx, offsets of output 0.., dense index). */
typedef void (*visit_fn)(void* ctx, const int64_t* idx, int64_t linear);

static void visit_outputs(const weft_iter* it, visit_fn fn, void* ctx) {
  int64_t idx[WEFT_MAX_DIMS] = {0};
  int dims[WEFT_MAX_DIMS], nd = 0;
  for (int d = 0; d < it->ndim; d++)
    if (!is_reduced(it, d) && it->shape[d] > 1) dims[nd++] = d;
  for (int64_t linear = 0;; linear++) {
    fn(ctx, idx, linear);
    int j = 0;
    for (; j < nd; j++) {
      if (++idx[dims[j]] < it->shape[dims[j]]) break;
      idx[dims[j]] = 0;
    }
    if (j == nd) return;
  }
}

typedef struct {
  reduced_job* job;
  weft_reduce_combine_fn combine;
  void* ctx;
  int64_t chunk; /* combine: the partial folded in */
} visit_ctx;

static char* out_elem(const weft_iter* it, int o, const int64_t* idx) {
  char* q = it->ops[o].data;
  for (int d = 0; d < it->ndim; d++) q += idx[d] * it->ops[o].stride_bytes[d];
  return q;
}

static void init_partials(void* p, const int64_t* idx, int64_t linear) {
  visit_ctx* v = p;
  const weft_iter* it = v->job->it;
  for (int o = 0; o < it->noutputs; o++) {
    int64_t es = esize(it, o);
    const char* src = out_elem(it, o, idx);
    for (int64_t c = 1; c < v->job->k; c++) {
      memcpy(v->job->partials[o] + ((c - 1) * v->job->num_outputs + linear) * es, src, (size_t)es);
    }
  }
}

static void fold_partials(void* p, const int64_t* idx, int64_t linear) {
  visit_ctx* v = p;
  const weft_iter* it = v->job->it;
  char* out[WEFT_ITER_MAX_OPERANDS];
  char* part[WEFT_ITER_MAX_OPERANDS];
  for (int o = 0; o < it->noutputs; o++) out[o] = out_elem(it, o, idx);
  for (int64_t c = 1; c < v->job->k; c++) {
    for (int o = 0; o < it->noutputs; o++) {
      part[o] = v->job->partials[o] + ((c - 1) * v->job->num_outputs + linear) * esize(it, o);
    }
    v->combine(v->ctx, out, part);
  }
}

static weft_status two_pass(const weft_iter* it, const weft_reduce_plan* plan, weft_loop2d_fn loop,
                            weft_reduce_combine_fn combine, void* ctx) {
  reduced_job job = {it, plan->split_dim, plan->chunks, loop, ctx, {NULL}, {0}, plan->num_outputs};
  int64_t next = 1;
  for (int d = 0; d < it->ndim; d++) {
    job.dense_strides[d] = is_reduced(it, d) || it->shape[d] <= 1 ? 0 : next;
    next *= is_reduced(it, d) ? 1 : it->shape[d];
  }
  weft_status s = WEFT_OK;
  for (int o = 0; o < it->noutputs && s == WEFT_OK; o++) {
    job.partials[o] = malloc((size_t)((job.k - 1) * job.num_outputs * esize(it, o)));
    if (!job.partials[o]) s = weft__error(WEFT_OUT_OF_MEMORY, "%s: out of memory for partial sums", it->op_name);
  }
  if (s == WEFT_OK) {
    visit_ctx v = {&job, combine, ctx, 0};
    visit_outputs(it, init_partials, &v);
    s = weft_parallel_for(0, job.k, 1, run_reduced, &job);
    if (s == WEFT_OK) visit_outputs(it, fold_partials, &v);
  }
  for (int o = 0; o < it->noutputs; o++) free(job.partials[o]);
  return s;
}

weft_status weft_iter_reduce_for_each(const weft_iter* it, weft_loop2d_fn loop,
                                      weft_reduce_combine_fn combine, void* ctx, int64_t grain,
                                      weft_dtype acc_dtype) {
  if (weft_explaining()) return weft__explain_record_json(weft_iter_reduce_explain_json(it, grain, acc_dtype));
  int64_t numel = weft_iter_numel(it);
  if (numel == 0 || it->is_meta) return WEFT_OK;
  weft_reduce_plan plan;
  weft_iter_reduce_plan(it, grain, &plan);
  switch (plan.split) {
    case WEFT_REDUCE_SPLIT_OUTPUTS: {
      outputs_job job = {it, plan.split_dim, loop, ctx};
      return weft_parallel_for(0, it->shape[plan.split_dim], split_grain(it, plan.split_dim, grain),
                               run_outputs, &job);
    }
    case WEFT_REDUCE_SPLIT_REDUCED:
      return two_pass(it, &plan, loop, combine, ctx);
    case WEFT_REDUCE_SERIAL:
      break;
  }
  weft_iter_serial_for_each(it, loop, ctx, 0, numel);
  return WEFT_OK;
}

char* weft_iter_reduce_explain_json(const weft_iter* it, int64_t grain, weft_dtype acc_dtype) {
  weft_reduce_plan plan;
  weft_iter_reduce_plan(it, grain, &plan);
  weft_reduce_kind kind = plan.kind;
  char* base = weft__iter_explain_json_ex(it, weft_iter_loop_kind(it), plan.chunks);
  if (!base) return NULL;
  weft__strbuf b = {0};
  size_t n = strlen(base);
  base[n - 1] = '\0'; /* drop the closing brace */
  weft__strbuf_put(&b, "%s,\"reduction\":{\"reducedDims\":[", base);
  free(base);
  for (int i = 0; i < it->reduced_ndim; i++) weft__strbuf_put(&b, i ? ",%d" : "%d", it->reduced_dims[i]);
  weft__strbuf_put(&b,
                   "],\"kind\":\"%s\",\"numOutputs\":%lld,\"reduceSize\":%lld,\"split\":\"%s\","
                   "\"splitDim\":%d,\"chunks\":%lld,\"accDtype\":\"%s\"}}",
                   weft_reduce_kind_name(kind), (long long)plan.num_outputs, (long long)plan.reduce_size,
                   weft_reduce_split_name(plan.split), plan.split_dim, (long long)plan.chunks,
                   weft_dtype_name(acc_dtype));
  return weft__strbuf_finish(&b, "explain");
}
