/* TensorIterator: PyTorch's TensorIteratorBase for elementwise ops.
 *
 * A config lists outputs (first) and inputs plus named flags; build() turns
 * it into an iterator: the broadcast shape, per-operand byte strides with the
 * dimensions reordered (fastest first) and coalesced, allocated outputs, the
 * common dtype. for_each() then walks the iteration space in 2-D blocks,
 * handing a loop2d function base pointers and byte strides; kernels never
 * see shapes. The iterator sits below the dispatcher: it allocates outputs
 * with the tensor model's plain allocation (PyTorch's empty_strided_cpu),
 * never through an operator.
 *
 *   weft_iter_config c = weft_iter_config_init();
 *   weft_iter_config_add_output(&c, out);        (NULL: build allocates it)
 *   weft_iter_config_add_input(&c, a);
 *   weft_iter_config_add_input(&c, b);
 *   weft_iter_config_promote_inputs_to_common_dtype(&c, true);
 *   weft_iter it;
 *   if (weft_iter_build(&c, &it) != WEFT_OK) return weft_last_status();
 *   weft_iter_for_each(&it, loop, ctx, WEFT_GRAIN_SIZE);
 *   weft_iter_destroy(&it);
 *
 * Casts: when a flag asks for a common dtype, operands keep their memory
 * dtype (weft_iter_dtype) and record the dtype the computation wants
 * (weft_iter_target_dtype); the loop converts on load/store. PyTorch makes
 * temporaries instead, so output strides may differ from PyTorch's when a
 * promoted input is not dense. */
#ifndef WEFT_ITER_H
#define WEFT_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/error.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_ITER_MAX_OPERANDS 8
/* at::internal::GRAIN_SIZE */
#define WEFT_GRAIN_SIZE 32768

/* ---- config ---- */

typedef struct weft_iter_config {
  weft_tensor* tensors[WEFT_ITER_MAX_OPERANDS]; /* NULL: an output build allocates */
  bool owned[WEFT_ITER_MAX_OPERANDS];           /* the config holds a reference */
  bool is_const[WEFT_ITER_MAX_OPERANDS];
  bool is_wrapped_number[WEFT_ITER_MAX_OPERANDS]; /* a 0-dim tensor standing for a JS number */
  int ntensors;
  int noutputs;
  const char* op_name; /* prefix of error messages */

  bool check_mem_overlap;              /* default true */
  bool check_all_same_dtype;           /* default true */
  bool check_all_same_device;          /* default true */
  bool promote_inputs_to_common_dtype; /* default false; true turns off check_all_same_dtype */
  bool promote_integer_inputs_to_float; /* default false; needs promote_inputs_to_common_dtype */
  bool cast_common_dtype_to_outputs;   /* default false; likewise */
  bool enforce_safe_casting_to_output; /* default false */
  bool resize_outputs;                 /* default true */
  bool enforce_linear_iteration;       /* default false */
  bool is_reduction;                   /* default false; see "reductions" below */
  bool widen_tiny_inner;               /* default false; see weft_iter_config_widen_tiny_inner */

  bool has_static_shape;
  int static_ndim;
  int64_t static_shape[WEFT_MAX_DIMS];
  bool has_static_dtype;
  weft_dtype static_dtype;

  weft_status deferred; /* first error from a setter, reported by build */
  const char* deferred_msg;
} weft_iter_config;

weft_iter_config weft_iter_config_init(void);
/* Releases the references an unbuilt config owns. build() does this itself. */
void weft_iter_config_destroy(weft_iter_config* c);

/* Outputs before inputs. Borrowed tensors must outlive build(); the iterator
 * retains every tensor it keeps. Owned variants take over the caller's
 * reference (also on error). */
void weft_iter_config_add_output(weft_iter_config* c, weft_tensor* t);
void weft_iter_config_add_owned_output(weft_iter_config* c, weft_tensor* t);
void weft_iter_config_add_input(weft_iter_config* c, const weft_tensor* t);
void weft_iter_config_add_owned_input(weft_iter_config* c, weft_tensor* t);
void weft_iter_config_add_const_input(weft_iter_config* c, const weft_tensor* t);
/* A 0-dim input that stands for a JS number: it takes part in type promotion
 * only when of a higher category (PyTorch's wrapped numbers). A floating
 * number counts as the default dtype (float32). */
void weft_iter_config_add_wrapped_number(weft_iter_config* c, const weft_tensor* t);

void weft_iter_config_set_op_name(weft_iter_config* c, const char* op);
void weft_iter_config_check_mem_overlap(weft_iter_config* c, bool v);
void weft_iter_config_check_all_same_dtype(weft_iter_config* c, bool v);
void weft_iter_config_check_all_same_device(weft_iter_config* c, bool v);
void weft_iter_config_promote_inputs_to_common_dtype(weft_iter_config* c, bool v);
void weft_iter_config_promote_integer_inputs_to_float(weft_iter_config* c, bool v);
void weft_iter_config_cast_common_dtype_to_outputs(weft_iter_config* c, bool v);
void weft_iter_config_enforce_safe_casting_to_output(weft_iter_config* c, bool v);
void weft_iter_config_resize_outputs(weft_iter_config* c, bool v);
void weft_iter_config_enforce_linear_iteration(weft_iter_config* c, bool v);
/* Pointwise ops whose element order does not matter: when the innermost dim
 * left after coalescing is tiny (an HWC image viewed as CHW: 3) and another
 * dim is long, that dim becomes the inner one, so loops run long (strided)
 * rows instead of 3-element ones. */
void weft_iter_config_widen_tiny_inner(weft_iter_config* c, bool v);
/* A reduction (PyTorch's TensorIterator::reduce_op): outputs first, each a
 * view of its result with the input's shape and stride 0 along the reduced
 * dims; build then puts the reduced dims first (innermost) and coalesces as
 * usual. Reductions also set check_mem_overlap(false), resize_outputs(false)
 * and check_all_same_dtype(false); run them with weft_iter_reduce_for_each. */
void weft_iter_config_is_reduction(weft_iter_config* c, bool v);
/* Bypasses shape checks and broadcasting; the caller has checked shapes.
 * Must come after resize_outputs(false), as in PyTorch. */
void weft_iter_config_declare_static_shape(weft_iter_config* c, const int64_t* shape, int ndim);
/* Dtype of outputs the iterator allocates; needs check_all_same_dtype(false). */
void weft_iter_config_declare_static_dtype(weft_iter_config* c, weft_dtype dtype);
/* A shorter spelling of the flag above (promotion means a common dtype). */
#define weft_iter_config_promote_inputs weft_iter_config_promote_inputs_to_common_dtype

/* ---- the iterator ---- */

typedef enum {
  WEFT_ITER_FAST_NONE = 0,
  WEFT_ITER_FAST_CONTIGUOUS,
  WEFT_ITER_FAST_CHANNELS_LAST,
  WEFT_ITER_FAST_NON_OVERLAPPING_DENSE
} weft_iter_fast_setup;

typedef struct weft_iter_operand {
  weft_tensor* tensor; /* retained */
  char* data;          /* element [0,...,0]; NULL for meta */
  /* Byte strides per iterator dim; an output with stride 0 over a dim of
   * size > 1 is a reduced dim (reserved for reductions). */
  int64_t stride_bytes[WEFT_MAX_DIMS];
  bool has_strides;    /* false for outputs still to be allocated/resized */
  weft_dtype dtype;    /* what is in memory */
  weft_dtype target_dtype; /* what the computation works in */
  bool dtype_defined;  /* false for an output with no dtype yet */
  bool is_output;
  bool is_read_write;  /* an output that is also an input (in place) */
  bool will_resize;
  bool is_const;
  bool is_wrapped_number;
} weft_iter_operand;

typedef struct weft_iter {
  int ntensors;
  int noutputs;
  int ndim;
  int64_t shape[WEFT_MAX_DIMS];
  weft_iter_operand ops[WEFT_ITER_MAX_OPERANDS];

  /* Recorded for explain(): the shape before reordering/coalescing and the
   * permutation reorder_dimensions chose (perm[i] = original dim, fastest
   * first; perm_ndim 0 when fast setup skipped it). */
  int broadcast_ndim;
  int64_t broadcast_shape[WEFT_MAX_DIMS];
  int perm_ndim;
  int perm[WEFT_MAX_DIMS];

  bool has_common_dtype;
  weft_dtype common_dtype;
  weft_device common_device;
  weft_iter_fast_setup fast_setup;
  bool all_ops_same_shape;
  bool all_ops_are_scalars;
  bool is_reduction;
  int reduced_ndim;                  /* reductions: the input's dims output 0 has stride 0 in */
  int reduced_dims[WEFT_MAX_DIMS];
  bool enforce_linear_iteration;
  bool widen_tiny_inner;
  bool widened_inner; /* build moved a longer dim inside a tiny one */
  bool has_coalesced_dimensions;
  bool is_meta;
  const char* op_name;
} weft_iter;

/* Builds `it` from `c` (consuming the config's owned references). On error
 * nothing is left to release and the message is in weft_last_error(). */
weft_status weft_iter_build(weft_iter_config* c, weft_iter* it);
void weft_iter_destroy(weft_iter* it);

int64_t weft_iter_numel(const weft_iter* it);
static inline int weft_iter_ndim(const weft_iter* it) { return it->ndim; }
static inline int weft_iter_ntensors(const weft_iter* it) { return it->ntensors; }
static inline const int64_t* weft_iter_shape(const weft_iter* it) { return it->shape; }
static inline const int64_t* weft_iter_strides(const weft_iter* it, int arg) {
  return it->ops[arg].stride_bytes;
}
static inline char* weft_iter_data_ptr(const weft_iter* it, int arg) { return it->ops[arg].data; }
static inline weft_dtype weft_iter_dtype(const weft_iter* it, int arg) { return it->ops[arg].dtype; }
static inline weft_dtype weft_iter_target_dtype(const weft_iter* it, int arg) {
  return it->ops[arg].target_dtype;
}
static inline bool weft_iter_needs_cast(const weft_iter* it, int arg) {
  return it->ops[arg].dtype != it->ops[arg].target_dtype;
}
/* Borrowed; retain to keep it past weft_iter_destroy. */
static inline weft_tensor* weft_iter_output(const weft_iter* it, int i) { return it->ops[i].tensor; }
/* Every operand's first-dim stride equals its element size. */
bool weft_iter_has_contiguous_first_dim(const weft_iter* it);
/* 1-D and contiguous, or a single element. */
bool weft_iter_is_contiguous(const weft_iter* it);
/* Operand `arg` is the same element everywhere (stride 0 or size 1 in every dim). */
bool weft_iter_is_scalar(const weft_iter* it, int arg);

/* ---- iteration ---- */

/* data: one pointer per operand; strides: ntensors inner byte strides, then
 * ntensors outer byte strides. Visits n0 x n1 elements. */
typedef void (*weft_loop2d_fn)(void* ctx, char** data, const int64_t* strides, int64_t n0, int64_t n1);

/* Serial below the grain or with one thread, else weft_parallel_for over the
 * linear range, each chunk running serial_for_each. */
weft_status weft_iter_for_each(const weft_iter* it, weft_loop2d_fn loop, void* ctx, int64_t grain);
/* Elements [begin, end) of the linear iteration order. */
void weft_iter_serial_for_each(const weft_iter* it, weft_loop2d_fn loop, void* ctx, int64_t begin,
                               int64_t end);

/* PyTorch's DimCounter: the position of a linear offset in `shape`, advanced
 * in the largest 2-D steps that stay inside the shape and the range. */
typedef struct weft_dim_counter {
  const int64_t* shape;
  int ndim;
  int64_t begin, end;
  int64_t offset;
  int64_t values[WEFT_MAX_DIMS];
} weft_dim_counter;

void weft_dim_counter_init(weft_dim_counter* dc, const int64_t* shape, int ndim, int64_t begin,
                           int64_t end);
static inline bool weft_dim_counter_is_done(const weft_dim_counter* dc) {
  return dc->offset >= dc->end;
}
void weft_dim_counter_max_2d_step(const weft_dim_counter* dc, int64_t step[2]);
void weft_dim_counter_increment(weft_dim_counter* dc, const int64_t step[2]);

/* ---- reductions ----
 *
 * The loop accumulates: out = combine(out, in...) along the reduced dims,
 * from what the outputs hold (the op fills them with its identity first).
 * Threads split the work one of two ways (PyTorch's parallel_reduce):
 *   outputs  the outermost kept dim with a range for every thread is cut
 *            into ranges, one sub-iterator each;
 *            every output element is written by one thread.
 *   reduced  too few outputs for the threads (a full reduction, sum(dim=0)
 *            of a tall matrix): the largest reduced dim is cut into K ranges;
 *            range 0 accumulates into the outputs, range k > 0 into a
 *            partial buffer (a dense copy of the outputs' initial values),
 *            and combine() folds each partial into the outputs at the end. */
typedef enum {
  WEFT_REDUCE_SERIAL = 0,
  WEFT_REDUCE_SPLIT_OUTPUTS,
  WEFT_REDUCE_SPLIT_REDUCED
} weft_reduce_split;

typedef enum {
  WEFT_REDUCE_NONE = 0, /* no dim of size > 1 is reduced */
  WEFT_REDUCE_INNER,    /* dim 0 reduced and contiguous in the input: row reductions */
  WEFT_REDUCE_OUTER,    /* dim 0 reduced, dim 1 kept and contiguous: vectorized across outputs */
  WEFT_REDUCE_STRIDED
} weft_reduce_kind;

typedef struct weft_reduce_plan {
  int64_t num_outputs;  /* elements of each output */
  int64_t reduce_size;  /* input elements per output element */
  int reduced_iter_dims; /* leading iterator dims that are reduced */
  weft_reduce_kind kind;
  weft_reduce_split split;
  int split_dim;        /* the iterator dim cut (-1 serial) */
  int64_t chunks;       /* tasks handed to the pool (1 serial, 0 empty) */
} weft_reduce_plan;

/* out[i] / partial[i]: the same element of output operand i, in the outputs
 * and in one partial buffer. */
typedef void (*weft_reduce_combine_fn)(void* ctx, char** out, char** partial);

void weft_iter_reduce_plan(const weft_iter* it, int64_t grain, weft_reduce_plan* p);
/* Runs a reduction iterator as planned; acc_dtype (what the loop
 * accumulates in) is only reported by explain. */
weft_status weft_iter_reduce_for_each(const weft_iter* it, weft_loop2d_fn loop,
                                      weft_reduce_combine_fn combine, void* ctx, int64_t grain,
                                      weft_dtype acc_dtype);
const char* weft_reduce_split_name(weft_reduce_split s); /* "serial", "outputs", "reduced" */
const char* weft_reduce_kind_name(weft_reduce_kind k);   /* "none", "inner", "outer", "strided" */
/* The plan as JSON: weft_iter_explain_json's fields plus "reduction":
 * {"reducedDims","kind","numOutputs","reduceSize","split","splitDim","chunks",
 * "accDtype"}. malloc'd. */
char* weft_iter_reduce_explain_json(const weft_iter* it, int64_t grain, weft_dtype acc_dtype);

/* ---- explain ---- */

typedef enum {
  WEFT_LOOP_VECTORIZED = 0, /* every inner stride is the element size */
  WEFT_LOOP_SCALAR_BROADCAST, /* contiguous, with some inputs of inner stride 0 */
  WEFT_LOOP_TRANSPOSE,      /* one input, inner two dims a 2-D transpose of the output's */
  WEFT_LOOP_STRIDED,
  /* pointwise ops with a tiny inner dim (weft_iter_config_widen_tiny_inner):
   * the output's 2..4 rows interleave (an HWC image seen as CHW), run a
   * chunk of pixels at a time over the contiguous run; or the output's 2..4
   * rows are unit-stride planes and an input interleaves them, read a
   * pixel at a time and de-interleaved */
  WEFT_LOOP_INTERLEAVED,
  WEFT_LOOP_DEINTERLEAVE,
  WEFT_LOOP_KIND_COUNT
} weft_loop_kind;

const char* weft_loop_kind_name(weft_loop_kind k); /* "vectorized", "scalar-broadcast", ... */
const char* weft_iter_fast_setup_name(weft_iter_fast_setup f); /* "none", "contiguous", ... */
/* The inner-loop kind the built-in loops pick for this iterator's strides. */
weft_loop_kind weft_iter_loop_kind(const weft_iter* it);
/* How many chunks for_each hands parallel_for (1 when it runs serially, 0 when empty). */
int64_t weft_iter_num_chunks(const weft_iter* it, int64_t grain);
/* The plan as JSON: {"op","broadcastShape","permutation","shape","strides"
 * (bytes, one array per operand),"dtypes","commonDtype","fastSetup","loop",
 * "chunks","numel"}. malloc'd; free() it. NULL on OOM. */
char* weft_iter_explain_json(const weft_iter* it, int64_t grain);
/* Is this thread explaining (weft/explain.h)? The loop drivers' hook: while
 * true they record their plan instead of looping. */
bool weft_explaining(void);

#ifdef __cplusplus
}
#endif
#endif
