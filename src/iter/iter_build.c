/* weft_iter_build: PyTorch's TensorIteratorBase::build, step by step and in
 * its order: populate operands, mark outputs, memory overlaps, shape,
 * resize marks, types, then fast setup or (strides, reorder, allocate,
 * coalesce). */
#include <string.h>

#include "core/internal.h"
#include "iter/iter_internal.h"
#include "weft/iter.h"

#define UNDEFINED_DTYPE ((weft_dtype)-1)

static bool shape_equals(const int64_t* a, int na, const int64_t* b, int nb) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* PyTorch's TensorImpl::is_same, widened to another handle onto the same
 * storage with the same layout (weft handles are cheap and made freely). */
static bool same_tensor(const weft_tensor* a, const weft_tensor* b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->storage == b->storage && a->storage_offset == b->storage_offset &&
         a->dtype == b->dtype && shape_equals(a->sizes, a->ndim, b->sizes, b->ndim) &&
         shape_equals(a->strides, a->ndim, b->strides, b->ndim);
}

/* ---- populate_operands / mark_outputs ---- */

static void populate_operands(weft_iter* it, const weft_iter_config* c) {
  it->ntensors = c->ntensors;
  it->noutputs = c->noutputs;
  for (int i = 0; i < c->ntensors; i++) {
    weft_iter_operand* op = &it->ops[i];
    weft_tensor* t = c->tensors[i];
    op->tensor = t ? weft_tensor_retain(t) : NULL;
    op->is_const = c->is_const[i];
    op->is_wrapped_number = c->is_wrapped_number[i];
    op->dtype_defined = t != NULL;
    op->dtype = op->target_dtype = t ? t->dtype : UNDEFINED_DTYPE;
    if (t && t->device == WEFT_DEVICE_META) it->is_meta = true;
  }
}

static void mark_outputs(weft_iter* it) {
  for (int i = 0; i < it->noutputs; i++) {
    weft_iter_operand* op = &it->ops[i];
    op->is_output = true;
    if (!op->tensor) continue;
    for (int j = it->noutputs; j < it->ntensors; j++) {
      if (same_tensor(op->tensor, it->ops[j].tensor)) op->is_read_write = true;
    }
  }
}

/* ---- compute_mem_overlaps (ATen/MemoryOverlap.cpp) ---- */

static weft_status compute_mem_overlaps(weft_iter* it, const weft_iter_config* c) {
  if (!c->check_mem_overlap) return WEFT_OK;
  for (int i = 0; i < it->noutputs; i++) {
    const weft_tensor* out = it->ops[i].tensor;
    if (!out) continue;
    if (weft__has_internal_overlap(out)) {
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s: unsupported operation: more than one element of the written-to "
                         "tensor refers to a single memory location. Please clone() the tensor "
                         "before performing the operation.",
                         it->op_name);
    }
    for (int j = it->noutputs; j < it->ntensors; j++) {
      const weft_tensor* in = it->ops[j].tensor;
      if (!same_tensor(in, out) && weft__mem_overlap(out, in) == WEFT__OVERLAP_PARTIAL) {
        return weft__error(WEFT_INVALID_ARGUMENT,
                           "%s: unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.",
                           it->op_name);
      }
    }
  }
  return WEFT_OK;
}

/* ---- compute_shape ---- */

/* infer_size: broadcast b into it->shape (ExpandUtils.cpp). */
static weft_status broadcast_into(weft_iter* it, const int64_t* b, int nb) {
  int na = it->ndim, n = na > nb ? na : nb;
  int64_t out[WEFT_MAX_DIMS];
  for (int i = n - 1; i >= 0; i--) {
    int off = n - 1 - i, da = na - 1 - off, db = nb - 1 - off;
    int64_t sa = da >= 0 ? it->shape[da] : 1, sb = db >= 0 ? b[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      return weft__error(WEFT_SHAPE_ERROR,
                         "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) "
                         "at non-singleton dimension %d",
                         it->op_name, (long long)sa, (long long)sb, i);
    }
    out[i] = sa == 1 ? sb : sa;
  }
  it->ndim = n;
  memcpy(it->shape, out, sizeof(int64_t) * (size_t)n);
  return WEFT_OK;
}

static weft_status compute_shape(weft_iter* it, const weft_iter_config* c) {
  if (c->has_static_shape) {
    it->ndim = c->static_ndim;
    memcpy(it->shape, c->static_shape, sizeof(int64_t) * (size_t)c->static_ndim);
    return WEFT_OK;
  }
  bool has_scalars = false, has_tensors = false, have_shape = false;
  it->all_ops_same_shape = true;
  for (int i = 0; i < it->ntensors; i++) {
    const weft_iter_operand* op = &it->ops[i];
    if (!op->tensor) continue;
    /* out= tensors that may be resized do not take part (PyTorch's legacy). */
    if (c->resize_outputs && op->is_output) continue;
    const weft_tensor* t = op->tensor;
    if (t->ndim == 0) has_scalars = true;
    else has_tensors = true;
    if (has_scalars && has_tensors) it->all_ops_same_shape = false;
    if (!have_shape || it->ndim == 0) {
      it->ndim = t->ndim;
      memcpy(it->shape, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
      have_shape = true;
    } else if (!shape_equals(t->sizes, t->ndim, it->shape, it->ndim)) {
      it->all_ops_same_shape = false;
      weft_status s = broadcast_into(it, t->sizes, t->ndim);
      if (s != WEFT_OK) return s;
    }
  }
  it->all_ops_are_scalars = !has_tensors;
  return WEFT_OK;
}

static weft_status mark_resize_outputs(weft_iter* it, const weft_iter_config* c) {
  if (c->has_static_shape) return WEFT_OK;
  for (int i = 0; i < it->noutputs; i++) {
    weft_iter_operand* op = &it->ops[i];
    const weft_tensor* t = op->tensor;
    if (!t || shape_equals(t->sizes, t->ndim, it->shape, it->ndim)) continue;
    if (c->resize_outputs && !op->is_read_write) {
      op->will_resize = true;
      continue;
    }
    if (!it->is_reduction) {
      return weft__error(WEFT_SHAPE_ERROR, "%s: output with shape %s doesn't match the broadcast shape %s",
                         it->op_name, WEFT__LIST(t->sizes, t->ndim), WEFT__LIST(it->shape, it->ndim));
    }
  }
  return WEFT_OK;
}

/* ---- compute_types (TypeProperties.cpp result_type) ---- */

typedef struct {
  weft_dtype dim_result, wrapped_result, zero_result;
} result_state;

static weft_dtype promote_skip_undefined(weft_dtype a, weft_dtype b) {
  if (a == UNDEFINED_DTYPE) return b;
  if (b == UNDEFINED_DTYPE) return a;
  return weft_promote_types(a, b);
}

/* A lower-priority group only matters when it is of a higher category. */
static weft_dtype combine_categories(weft_dtype higher, weft_dtype lower) {
  if (higher != UNDEFINED_DTYPE && weft_dtype_is_floating(higher)) return higher;
  if (higher == WEFT_BOOL || (lower != UNDEFINED_DTYPE && weft_dtype_is_floating(lower))) {
    return promote_skip_undefined(higher, lower);
  }
  if (higher != UNDEFINED_DTYPE) return higher;
  return lower;
}

static void update_result_state(result_state* st, const weft_iter_operand* op) {
  weft_dtype cur = op->dtype;
  const weft_tensor* t = op->tensor;
  if (op->is_wrapped_number && weft_dtype_is_floating(cur)) cur = weft_get_default_dtype();
  if (t->ndim > 0) st->dim_result = promote_skip_undefined(st->dim_result, cur);
  else if (op->is_wrapped_number) st->wrapped_result = promote_skip_undefined(st->wrapped_result, cur);
  else st->zero_result = promote_skip_undefined(st->zero_result, cur);
}

static weft_dtype compute_common_dtype(const weft_iter* it) {
  result_state st = {UNDEFINED_DTYPE, UNDEFINED_DTYPE, UNDEFINED_DTYPE};
  for (int i = 0; i < it->ntensors; i++) {
    if (it->ops[i].is_output || !it->ops[i].tensor) continue;
    update_result_state(&st, &it->ops[i]);
  }
  return combine_categories(st.dim_result, combine_categories(st.zero_result, st.wrapped_result));
}

typedef struct {
  weft_dtype output_dtype;
  bool diff_inputs, diff_outputs, undefined_outputs;
} type_review;

static void review_operands(weft_iter* it, const weft_iter_config* c, type_review* r,
                            weft_dtype* common) {
  it->common_device = WEFT_DEVICE_CPU;
  for (int i = 0; i < it->ntensors; i++) {
    weft_iter_operand* op = &it->ops[i];
    if (!op->dtype_defined) {
      if (c->has_static_dtype) {
        op->dtype = op->target_dtype = c->static_dtype;
        op->dtype_defined = true;
      } else {
        r->undefined_outputs = true;
      }
      continue; /* its device is never defined here */
    }
    const weft_tensor* t = op->tensor;
    if (it->common_device == WEFT_DEVICE_CPU && t->device != WEFT_DEVICE_CPU) it->common_device = t->device;
    weft_dtype* seen = op->is_output ? &r->output_dtype : common;
    if (op->target_dtype != *seen) {
      if (*seen == UNDEFINED_DTYPE) *seen = op->target_dtype;
      else if (op->is_output) r->diff_outputs = true;
      else r->diff_inputs = true;
    }
  }
}

static weft_status check_same_dtype(const weft_iter* it, weft_dtype common) {
  for (int i = 0; i < it->ntensors; i++) {
    const weft_iter_operand* op = &it->ops[i];
    if (op->tensor && op->target_dtype != common) {
      return weft__error(WEFT_TYPE_ERROR, "%s: Found dtype %s but expected %s", it->op_name,
                         weft_dtype_name(op->target_dtype), weft_dtype_name(common));
    }
  }
  return WEFT_OK;
}

/* The second review: dtypes for new outputs, device and safe-casting
 * checks, and the per-operand compute dtype where PyTorch would cast. */
static weft_status settle_operands(weft_iter* it, const weft_iter_config* c, weft_dtype common) {
  for (int i = 0; i < it->ntensors; i++) {
    weft_iter_operand* op = &it->ops[i];
    if (!op->dtype_defined) {
      if (common == UNDEFINED_DTYPE) {
        return weft__error(WEFT_INTERNAL, "%s: no dtype for output %d", it->op_name, i);
      }
      op->dtype = op->target_dtype = common;
      op->dtype_defined = true;
      continue;
    }
    const weft_tensor* t = op->tensor;
    if (!t) continue;
    /* PyTorch's allow_cpu_scalars: a 0-dim cpu input (a wrapped number)
     * rides along with a device's tensors as a kernel argument */
    bool cpu_scalar = !op->is_output && t->device == WEFT_DEVICE_CPU && t->ndim == 0 &&
                      it->common_device == WEFT_DEVICE_WEBGPU;
    if (c->check_all_same_device && t->device != it->common_device && !cpu_scalar) {
      return weft__error(WEFT_INVALID_ARGUMENT,
                         "%s: Expected all tensors to be on the same device, but found at least two "
                         "devices, %s and %s!",
                         it->op_name, weft_device_name(it->common_device), weft_device_name(t->device));
    }
    if (common == UNDEFINED_DTYPE || op->dtype == common) continue;
    if (c->enforce_safe_casting_to_output && op->is_output && !weft_can_cast(common, op->dtype)) {
      return weft__error(WEFT_TYPE_ERROR, "%s: result type %s can't be cast to the desired output type %s",
                         it->op_name, weft_dtype_name(common), weft_dtype_name(op->dtype));
    }
    if ((op->is_output && c->cast_common_dtype_to_outputs) ||
        (!op->is_output && c->promote_inputs_to_common_dtype)) {
      op->target_dtype = common;
    }
  }
  return WEFT_OK;
}

static weft_status compute_types(weft_iter* it, const weft_iter_config* c) {
  type_review r = {UNDEFINED_DTYPE, false, false, false};
  weft_dtype common = UNDEFINED_DTYPE;
  review_operands(it, c, &r, &common);
  if (c->check_all_same_dtype &&
      (r.diff_inputs || r.diff_outputs || (common != r.output_dtype && r.output_dtype != UNDEFINED_DTYPE))) {
    weft_status s = check_same_dtype(it, common);
    if (s != WEFT_OK) return s;
  }
  bool short_circuit = !r.undefined_outputs && !c->check_all_same_device &&
                       !c->promote_inputs_to_common_dtype && !c->cast_common_dtype_to_outputs &&
                       !c->enforce_safe_casting_to_output;
  if (short_circuit) {
    if (r.diff_inputs) common = UNDEFINED_DTYPE;
  } else {
    if ((r.diff_inputs || it->all_ops_are_scalars) && c->promote_inputs_to_common_dtype) {
      common = compute_common_dtype(it);
    }
    if (c->promote_integer_inputs_to_float && common != UNDEFINED_DTYPE &&
        weft_dtype_is_integral(common, true)) {
      common = weft_get_default_dtype();
    }
    if (r.diff_inputs && !c->promote_inputs_to_common_dtype &&
        (r.undefined_outputs || c->enforce_safe_casting_to_output || c->cast_common_dtype_to_outputs)) {
      return weft__error(WEFT_INTERNAL, "%s: inputs of different dtypes need a common dtype", it->op_name);
    }
    weft_status s = settle_operands(it, c, common);
    if (s != WEFT_OK) return s;
  }
  it->has_common_dtype = common != UNDEFINED_DTYPE;
  it->common_dtype = it->has_common_dtype ? common : WEFT_FLOAT32;
  return WEFT_OK;
}

/* ---- outputs: allocate or resize (set_output_raw_strided) ---- */

/* resize_output + as_strided_ on an out= tensor: keep its storage when it is
 * big enough, else give it a new one (the old contents are not kept; they
 * are about to be overwritten). */
static weft_status resize_output(weft_iter* it, weft_tensor* t, const int64_t* sizes,
                                 const int64_t* strides, int ndim) {
  return weft__tensor_resize_(t, sizes, strides, ndim, it->op_name);
}

/* strides == NULL: the layout of memory format f. */
static weft_status set_output(weft_iter* it, int i, const int64_t* sizes, const int64_t* strides,
                              int ndim, weft_memory_format f) {
  weft_iter_operand* op = &it->ops[i];
  int64_t st[WEFT_MAX_DIMS];
  if (!strides) {
    weft__strides_for_format(sizes, ndim, f, st);
    strides = st;
  }
  if (!op->tensor) {
    /* core allocation, as structured kernels use empty_strided_cpu: no dispatch */
    op->tensor = weft__tensor_alloc("empty_strided", sizes, strides, ndim, op->dtype, it->common_device);
    return op->tensor ? WEFT_OK : weft_last_status();
  }
  if (op->will_resize) return resize_output(it, op->tensor, sizes, strides, ndim);
  return WEFT_OK;
}

/* ---- fast_set_up ---- */

static weft_iter_fast_setup fast_setup_type(const weft_iter* it) {
  if (it->is_reduction || !it->all_ops_same_shape) return WEFT_ITER_FAST_NONE;
  bool contig = true, cl = true, nad = true;
  for (int i = 0; i < it->ntensors; i++) {
    const weft_iter_operand* op = &it->ops[i];
    if (!op->tensor || op->will_resize) continue;
    contig &= op->tensor->is_contiguous;
    cl &= op->tensor->is_channels_last_contiguous;
    nad &= op->tensor->is_non_overlapping_and_dense;
  }
  /* linear iteration: only the contiguous layout keeps the order */
  if (it->enforce_linear_iteration) return contig ? WEFT_ITER_FAST_CONTIGUOUS : WEFT_ITER_FAST_NONE;
  if (contig) return WEFT_ITER_FAST_CONTIGUOUS;
  if (cl) return WEFT_ITER_FAST_CHANNELS_LAST;
  if (!nad) return WEFT_ITER_FAST_NONE;
  /* dense with equal strides everywhere (outputs too: theirs are kept) */
  const weft_tensor* prev = NULL;
  for (int i = it->ntensors - 1; i >= 0; i--) {
    const weft_iter_operand* op = &it->ops[i];
    if (!op->tensor || op->will_resize) continue;
    if (prev && !shape_equals(prev->strides, prev->ndim, op->tensor->strides, op->tensor->ndim)) {
      return WEFT_ITER_FAST_NONE;
    }
    prev = op->tensor;
  }
  return WEFT_ITER_FAST_NON_OVERLAPPING_DENSE;
}

static weft_status fast_set_up(weft_iter* it, bool* done) {
  weft_iter_fast_setup type = fast_setup_type(it);
  *done = false;
  if (type == WEFT_ITER_FAST_NONE) return WEFT_OK;
  const int64_t* strides = NULL;
  weft_memory_format f = WEFT_CONTIGUOUS_FORMAT;
  if (type == WEFT_ITER_FAST_CHANNELS_LAST) f = WEFT_CHANNELS_LAST;
  if (type == WEFT_ITER_FAST_NON_OVERLAPPING_DENSE) {
    for (int i = it->ntensors - 1; i >= 0 && !strides; i--)
      if (it->ops[i].tensor) strides = it->ops[i].tensor->strides;
  }
  for (int i = 0; i < it->noutputs; i++) {
    weft_status s = set_output(it, i, it->shape, strides, it->ndim, f);
    if (s != WEFT_OK) return s;
  }
  it->fast_setup = type;
  if (it->ndim > 1) it->has_coalesced_dimensions = true;
  if (it->ndim >= 1) {
    it->shape[0] = weft_iter_numel(it);
    it->ndim = 1;
  }
  for (int i = 0; i < it->ntensors; i++) {
    weft_iter_operand* op = &it->ops[i];
    op->has_strides = true;
    if (it->ndim > 0) op->stride_bytes[0] = (int64_t)weft_dtype_size(op->dtype);
  }
  *done = true;
  return WEFT_OK;
}

/* ---- compute_strides / reorder_dimensions ---- */

static void compute_strides(weft_iter* it, const weft_iter_config* c) {
  for (int i = 0; i < it->ntensors; i++) {
    weft_iter_operand* op = &it->ops[i];
    if (!op->tensor || op->will_resize) continue;
    const weft_tensor* t = op->tensor;
    const int64_t* orig = c->has_static_shape ? it->shape : t->sizes;
    int orig_ndim = c->has_static_shape ? it->ndim : t->ndim;
    int offset = it->ndim - orig_ndim;
    int64_t es = (int64_t)weft_dtype_size(t->dtype);
    memset(op->stride_bytes, 0, sizeof op->stride_bytes);
    for (int d = 0; d < orig_ndim; d++) {
      /* a broadcast dim moves by 0 (see PyTorch's NOTE: [Computing output strides]) */
      bool broadcast = orig[d] == 1 && it->shape[offset + d] != 1;
      /* saturating: a size-1 dim may have any stride (INT64_MAX * 2 overflowed) */
      op->stride_bytes[offset + d] = broadcast ? 0 : weft__mul_saturate(t->strides[d], es);
    }
    op->has_strides = true;
  }
}

static void permute_dimensions(weft_iter* it, const int* perm) {
  int64_t tmp[WEFT_MAX_DIMS];
  for (int d = 0; d < it->ndim; d++) tmp[d] = it->shape[perm[d]];
  memcpy(it->shape, tmp, sizeof(int64_t) * (size_t)it->ndim);
  for (int i = 0; i < it->ntensors; i++) {
    weft_iter_operand* op = &it->ops[i];
    if (!op->has_strides) continue;
    for (int d = 0; d < it->ndim; d++) tmp[d] = op->stride_bytes[perm[d]];
    memcpy(op->stride_bytes, tmp, sizeof(int64_t) * (size_t)it->ndim);
  }
}

/* 1: dim0 goes after dim1; -1: before; 0: the operands cannot tell. The
 * first operand that decides wins; broadcast (0) strides defer to the next. */
static int should_swap(const weft_iter* it, int dim0, int dim1) {
  for (int i = 0; i < it->ntensors; i++) {
    const weft_iter_operand* op = &it->ops[i];
    if (!op->has_strides || op->will_resize) continue;
    int64_t s0 = op->stride_bytes[dim0], s1 = op->stride_bytes[dim1];
    if (it->is_reduction && op->is_output && (s0 == 0) != (s1 == 0)) {
      return s1 == 0 ? 1 : -1; /* reduced dims go first */
    }
    if (s0 == 0 || s1 == 0) continue;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    /* equal strides: a larger dim first means the dims were permuted */
    if (it->shape[dim0] > it->shape[dim1]) return 1;
  }
  return 0;
}

static void reorder_dimensions(weft_iter* it) {
  int n = it->ndim;
  it->perm_ndim = n;
  for (int d = 0; d < n; d++) it->perm[d] = n - 1 - d;
  if (n <= 1) return;
  if (!it->enforce_linear_iteration) {
    /* insertion sort that leaves ambiguous pairs alone */
    for (int i = 1; i < n; i++) {
      int dim1 = i;
      for (int dim0 = i - 1; dim0 >= 0; dim0--) {
        int cmp = should_swap(it, it->perm[dim0], it->perm[dim1]);
        if (cmp > 0) {
          int t = it->perm[dim0];
          it->perm[dim0] = it->perm[dim1];
          it->perm[dim1] = t;
          dim1 = dim0;
        } else if (cmp < 0) {
          break;
        }
      }
    }
  }
  permute_dimensions(it, it->perm);
}

/* ---- allocate_or_resize_outputs ---- */

static weft_status allocate_or_resize_outputs(weft_iter* it) {
  int n = it->ndim;
  bool inverted = true;
  for (int d = 0; d < n; d++)
    if (it->perm[d] != n - 1 - d) inverted = false;
  for (int i = 0; i < it->noutputs; i++) {
    weft_iter_operand* op = &it->ops[i];
    if (op->tensor && !op->will_resize) continue;
    int64_t es = (int64_t)weft_dtype_size(op->dtype), next = es;
    for (int d = 0; d < n; d++) { /* compatible_stride: dense in iteration order */
      op->stride_bytes[d] = next;
      next = weft__mul_saturate(next, it->shape[d]); /* overflows only for empty shapes */
    }
    op->has_strides = true;
    int64_t sizes[WEFT_MAX_DIMS], strides[WEFT_MAX_DIMS];
    for (int d = 0; d < n; d++) { /* invert_perm: back to the tensor's dim order */
      sizes[it->perm[d]] = it->shape[d];
      strides[it->perm[d]] = op->stride_bytes[d] / es;
    }
    weft_status s = set_output(it, i, sizes, inverted ? NULL : strides, n, WEFT_CONTIGUOUS_FORMAT);
    if (s != WEFT_OK) return s;
  }
  return WEFT_OK;
}

/* ---- coalesce_dimensions ---- */

static bool can_coalesce(const weft_iter* it, int dim0, int dim1) {
  int64_t s0 = it->shape[dim0], s1 = it->shape[dim1];
  if (s0 == 1 || s1 == 1) return true;
  for (int i = 0; i < it->ntensors; i++) {
    const int64_t* st = it->ops[i].stride_bytes;
    if (weft__mul_saturate(s0, st[dim0]) != st[dim1]) return false; /* (empty shapes overflow) */
  }
  return true;
}

static void replace_stride(weft_iter* it, int dim0, int dim1) {
  for (int i = 0; i < it->ntensors; i++) it->ops[i].stride_bytes[dim0] = it->ops[i].stride_bytes[dim1];
}

static void coalesce_dimensions(weft_iter* it) {
  if (it->ndim <= 1) return;
  int prev = 0;
  for (int d = 1; d < it->ndim; d++) {
    if (can_coalesce(it, prev, d)) {
      if (it->shape[prev] == 1) replace_stride(it, prev, d);
      it->shape[prev] = weft__mul_saturate(it->shape[prev], it->shape[d]);
    } else {
      prev++;
      if (prev != d) {
        replace_stride(it, prev, d);
        it->shape[prev] = it->shape[d];
      }
    }
  }
  it->ndim = prev + 1;
  it->has_coalesced_dimensions = true;
}

/* ---- widen_tiny_inner ---- */

/* After coalescing, an inner dim shorter than a vector (3 channels) makes
 * every row a call for 3 elements. Any order is right for a pointwise op, so
 * the longest dim goes inside: rows become long and strided, which the
 * elementwise loop gathers into unit-stride chunks for the SIMD kernels
 * (explain's 'interleaved' / 'deinterleave' loops); for_each then splits a
 * 2-dim result between threads by the long dim (iter_loop.c). */
#define TINY_INNER 4
#define LONG_INNER 16
static void widen_tiny_inner(weft_iter* it) {
  if (!it->widen_tiny_inner || it->is_reduction || it->enforce_linear_iteration || it->ndim < 2) return;
  if (it->shape[0] > TINY_INNER) return;
  int best = -1;
  for (int d = 1; d < it->ndim; d++) {
    if (it->shape[d] >= LONG_INNER && (best < 0 || it->shape[d] > it->shape[best])) best = d;
  }
  if (best < 0) return;
  int64_t t = it->shape[0];
  it->shape[0] = it->shape[best];
  it->shape[best] = t;
  for (int i = 0; i < it->ntensors; i++) {
    int64_t* st = it->ops[i].stride_bytes;
    t = st[0];
    st[0] = st[best];
    st[best] = t;
  }
  it->widened_inner = true;
}

/* ---- reductions ---- */

/* A reduction's outputs are given: views of the result with the input's
 * shape and stride 0 along the reduced dims (PyTorch's review_reduce_result
 * + restride). Records which of the input's dims are reduced, for explain. */
static weft_status check_reduction_operands(weft_iter* it) {
  const weft_tensor* in = it->noutputs < it->ntensors ? it->ops[it->noutputs].tensor : NULL;
  for (int i = 0; i < it->noutputs; i++) {
    const weft_tensor* out = it->ops[i].tensor;
    if (!out || !in || !shape_equals(out->sizes, out->ndim, in->sizes, in->ndim)) {
      return weft__error(WEFT_INTERNAL, "%s: a reduction's outputs are views with the input's shape",
                         it->op_name);
    }
  }
  const weft_tensor* out = it->ops[0].tensor;
  it->reduced_ndim = 0;
  for (int d = 0; d < out->ndim; d++)
    if (out->strides[d] == 0) it->reduced_dims[it->reduced_ndim++] = d;
  return WEFT_OK;
}

/* ---- build ---- */

static weft_status build_steps(weft_iter* it, const weft_iter_config* c) {
  weft_status s;
  if (c->deferred != WEFT_OK) {
    return weft__error(c->deferred, "%s: %s", it->op_name, c->deferred_msg ? c->deferred_msg : "bad config");
  }
  populate_operands(it, c);
  if (it->is_reduction && (s = check_reduction_operands(it)) != WEFT_OK) return s;
  mark_outputs(it);
  if ((s = compute_mem_overlaps(it, c)) != WEFT_OK) return s;
  if ((s = compute_shape(it, c)) != WEFT_OK) return s;
  it->broadcast_ndim = it->ndim;
  memcpy(it->broadcast_shape, it->shape, sizeof it->shape);
  if ((s = mark_resize_outputs(it, c)) != WEFT_OK) return s;
  if ((s = compute_types(it, c)) != WEFT_OK) return s;
  bool fast = false;
  if ((s = fast_set_up(it, &fast)) != WEFT_OK) return s;
  if (!fast) {
    compute_strides(it, c);
    reorder_dimensions(it);
    if ((s = allocate_or_resize_outputs(it)) != WEFT_OK) return s;
    if (!it->is_meta) {
      coalesce_dimensions(it);
      widen_tiny_inner(it);
    }
  }
  for (int i = 0; i < it->ntensors; i++) {
    it->ops[i].data = it->is_meta ? NULL : (char*)weft_tensor_data_ptr(it->ops[i].tensor);
  }
  return WEFT_OK;
}

weft_status weft_iter_build(weft_iter_config* c, weft_iter* it) {
  memset(it, 0, sizeof *it);
  it->op_name = c->op_name ? c->op_name : "TensorIterator";
  it->is_reduction = c->is_reduction;
  it->enforce_linear_iteration = c->enforce_linear_iteration;
  it->widen_tiny_inner = c->widen_tiny_inner;
  weft_status s = build_steps(it, c);
  weft_iter_config_destroy(c);
  if (s != WEFT_OK) weft_iter_destroy(it);
  return s;
}

void weft_iter_destroy(weft_iter* it) {
  for (int i = 0; i < it->ntensors; i++) {
    weft_tensor_release(it->ops[i].tensor);
    it->ops[i].tensor = NULL;
  }
  it->ntensors = 0;
}

int64_t weft_iter_numel(const weft_iter* it) {
  int64_t n = 1;
  for (int d = 0; d < it->ndim; d++)
    if (!it->shape[d]) return 0; /* [2**62, 8, 0] is empty, its product overflows */
  for (int d = 0; d < it->ndim; d++) n *= it->shape[d];
  return n;
}

bool weft_iter_has_contiguous_first_dim(const weft_iter* it) {
  if (it->ndim == 0) return true;
  for (int i = 0; i < it->ntensors; i++) {
    if (it->ops[i].stride_bytes[0] != (int64_t)weft_dtype_size(it->ops[i].dtype)) return false;
  }
  return true;
}

bool weft_iter_is_contiguous(const weft_iter* it) {
  if (weft_iter_numel(it) == 1) return true;
  if (it->ndim != 1) return false;
  return weft_iter_has_contiguous_first_dim(it);
}

bool weft_iter_is_scalar(const weft_iter* it, int arg) {
  for (int d = 0; d < it->ndim; d++) {
    if (it->ops[arg].stride_bytes[d] != 0 && it->shape[d] != 1) return false;
  }
  return true;
}
