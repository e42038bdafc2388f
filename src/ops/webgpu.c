/* The WebGPU device's operators (docs/webgpu.md). Factories share the CPU
 * kernels (factory.c registers empty / empty_strided on the WebGPU key: core
 * allocates through the bridge); this file holds what differs: copy_ within
 * and across devices. Within the device copy_ is the strided map family's
 * "copy" over the TensorIterator's plan (broadcast, reorder, coalesce: the
 * CPU's code), so any strides and NCHW <-> NHWC are one dispatch. Reads back
 * to the cpu are asynchronous, so a synchronous copy out of a webgpu tensor
 * is refused and names the async form. */
#include <string.h>

#include "base/strbuf.h"
#include "iter/iter_internal.h"
#include "ops/cpu/copy_iter.h"
#include "ops/ops.h"
#include "ops/webgpu_ops.h"

/* explain(): the plan of a dispatch instead of running it */
static weft_status explain_program(const char* op, const weft__webgpu_program* p) {
  weft__strbuf b = {0};
  const uint32_t* wg = p->workgroup;
  weft__strbuf_put(&b, "{\"op\":\"%s\",\"kind\":\"webgpu\",\"program\":\"%s\",\"workgroupSize\":[%u,%u,%u],"
                   "\"grid\":[%u,%u,%u],\"wgsl\":", op, p->key, wg[0] ? wg[0] : (uint32_t)WEFT_WEBGPU_WORKGROUP,
                   wg[0] ? wg[1] : 1u, wg[0] ? wg[2] : 1u, p->grid[0], p->grid[1], p->grid[2]);
  weft__strbuf_put_json_str(&b, p->wgsl);
  weft__strbuf_put(&b, "}");
  return weft__explain_record_json(weft__strbuf_finish(&b, op));
}

weft_status weft__webgpu_run(const char* op, weft__webgpu_program* p) {
  weft_status s = weft_explaining() ? explain_program(op, p) : weft__webgpu_dispatch(op, p);
  weft__webgpu_program_free(p);
  return s;
}

/* A number's 32 bits in dtype t (a cpu scalar, alpha, a fill value). */
uint32_t weft__webgpu_bits(double v, weft_dtype t) {
  if (t == WEFT_FLOAT32) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  if (t == WEFT_BOOL) return v != 0;
  /* an int32 compute dtype holds int32 values: the number passed its checks */
  return (uint32_t)(int32_t)(v < -2147483648.0 ? -2147483648.0 : v > 2147483647.0 ? 2147483647.0 : v);
}

void weft__webgpu_describe(const weft_iter* it, weft__webgpu_map* m, weft_dtype compute) {
  m->ndim = it->ndim;
  m->numel = 1;
  for (int d = 0; d < it->ndim; d++) m->sizes[d] = it->shape[d], m->numel *= it->shape[d];
  for (int k = 0; k < it->ntensors; k++) {
    const weft_tensor* t = it->ops[k].tensor;
    if (k > 0 && t->device == WEFT_DEVICE_CPU) {
      /* the cpu scalar rule (iter_build.c): its value, in the compute dtype */
      m->scalar[k] = true;
      m->dtype[k] = compute;
      m->scalar_bits[k] = weft__webgpu_bits(weft_tensor_get_double(t, 0), compute);
      continue;
    }
    int64_t es = (int64_t)weft_dtype_size(it->ops[k].dtype);
    m->dtype[k] = it->ops[k].dtype;
    m->buffer[k] = weft__webgpu_buffer_of(t);
    m->offset[k] = t->storage_offset;
    for (int d = 0; d < it->ndim; d++) m->strides[k][d] = it->ops[k].stride_bytes[d] / es;
  }
}

/* A copy of t's whole storage (int32 words), so t's offsets and strides
 * read the same values from it: the input of an op whose output is another
 * view of that storage (one buffer cannot be read and written by one
 * dispatch through two bindings). */
weft_tensor* weft__webgpu_storage_copy(const char* op, const weft_tensor* t) {
  int64_t words = (weft_storage_nbytes(t->storage) + 3) / 4;
  weft_tensor* c = weft_empty(&words, 1, WEFT_INT32, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT);
  if (!c || words == 0) return c;
  weft__webgpu_map m = {.name = "copy", .expr = "a0", .compute = WEFT_INT32, .result = WEFT_INT32, .nin = 1,
                        .ndim = 1, .numel = words, .sizes = {words}, .dtype = {WEFT_INT32, WEFT_INT32},
                        .buffer = {weft__webgpu_buffer_of(c), weft__webgpu_buffer_of(t)}, .strides = {{1}, {1}}};
  weft__webgpu_program p;
  weft_status s = weft__webgpu_map_program(op, &m, &p);
  if (s == WEFT_OK) s = weft__webgpu_run(op, &p);
  if (s == WEFT_OK) return c;
  weft_tensor_release(c);
  return NULL;
}

static bool same_elements(const weft__webgpu_map* m, int k) {
  if (m->dtype[k] != m->dtype[0] || m->offset[k] != m->offset[0]) return false;
  for (int d = 0; d < m->ndim; d++)
    if (m->sizes[d] > 1 && m->strides[k][d] != m->strides[0][d]) return false;
  return true;
}

weft_status weft__webgpu_resolve_aliases(const char* op, weft__webgpu_map* m, const weft_tensor* out,
                                         weft_tensor** snapshot) {
  *snapshot = NULL;
  for (int k = 1; k <= m->nin; k++) {
    if (m->scalar[k] || m->buffer[k] != m->buffer[0]) continue;
    if (same_elements(m, k)) {
      m->alias[k] = true;
      continue;
    }
    if (!*snapshot && !(*snapshot = weft__webgpu_storage_copy(op, out))) return weft_last_status();
    m->buffer[k] = weft__webgpu_buffer_of(*snapshot);
  }
  return WEFT_OK;
}

weft_status weft__host_readable(const char* op, const weft_tensor* t) {
  if (!t || t->device != WEFT_DEVICE_WEBGPU) return WEFT_OK;
  return weft__error(WEFT_NOT_IMPLEMENTED,
                     "%s: not implemented on the webgpu device: this op reads the values of a tensor on the cpu "
                     "(move it first: await t.toAsync('cpu'))", op);
}

/* webgpu -> webgpu, any strides, broadcast src, a dtype cast on the way. */
static weft_status copy_on_device(weft_tensor* self, const weft_tensor* src) {
  if (self->numel == 0 || self == src) return WEFT_OK;
  if (self->storage == src->storage) {
    /* one buffer cannot be bound for reading and writing at once */
    weft_tensor* tmp = weft_clone(src, WEFT_CONTIGUOUS_FORMAT);
    if (!tmp) return weft_last_status();
    weft_status s = copy_on_device(self, tmp);
    weft_tensor_release(tmp);
    return s;
  }
  /* the CPU copy's plan: the same broadcast, reorder and coalescing */
  weft_iter it;
  weft_status s = weft__copy_iter_build(self, src, &it);
  if (s != WEFT_OK) return s;
  weft__webgpu_map m = {.name = "copy", .expr = "a0", .compute = src->dtype, .result = src->dtype, .nin = 1};
  weft__webgpu_describe(&it, &m, src->dtype);
  weft__webgpu_program p;
  s = weft__webgpu_map_program("copy_", &m, &p);
  weft_iter_destroy(&it);
  return s == WEFT_OK ? weft__webgpu_run("copy_", &p) : s;
}

static bool same_layout(const weft_tensor* a, const weft_tensor* b) {
  if (a->ndim != b->ndim || a->dtype != b->dtype) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->sizes[i] != b->sizes[i] || (a->sizes[i] > 1 && a->strides[i] != b->strides[i])) return false;
  return true;
}

/* A layout that fills its storage from offset 0: its bytes go as they lie. */
static bool whole_dense(const weft_tensor* t) {
  return t->storage_offset == 0 && weft_tensor_is_non_overlapping_and_dense(t) &&
         weft_storage_nbytes(t->storage) == t->numel * (int64_t)weft_dtype_size(t->dtype);
}

/* cpu -> webgpu: the values laid out as self is (broadcast and cast by the
 * cpu copy_ when src differs), one upload; a strided or offset self gets a
 * dense upload and the device copy. */
static weft_status upload(weft_tensor* self, const weft_tensor* src) {
  if (self->numel == 0) return WEFT_OK;
  if (!whole_dense(self)) {
    weft_tensor* dense = weft_empty(self->sizes, self->ndim, self->dtype, WEFT_DEVICE_WEBGPU, WEFT_CONTIGUOUS_FORMAT);
    weft_status s = dense ? upload(dense, src) : weft_last_status();
    if (s == WEFT_OK) s = copy_on_device(self, dense);
    weft_tensor_release(dense);
    return s;
  }
  const weft_tensor* host = src;
  weft_tensor* tmp = NULL;
  if (!same_layout(src, self) || !weft_tensor_is_non_overlapping_and_dense(src)) {
    tmp = weft_empty_strided(self->sizes, self->strides, self->ndim, self->dtype, WEFT_DEVICE_CPU);
    weft_status s = tmp ? weft_copy_(tmp, src) : weft_last_status();
    if (s != WEFT_OK) {
      weft_tensor_release(tmp);
      return s;
    }
    host = tmp;
  }
  weft_status s = weft__webgpu_upload("copy_", weft__webgpu_buffer_of(self), weft_tensor_data_ptr(host),
                                      self->numel * (int64_t)weft_dtype_size(self->dtype));
  weft_tensor_release(tmp);
  return s;
}

static weft_status copy_webgpu(weft_tensor* self, const weft_tensor* src) {
  if (self->device == WEFT_DEVICE_META || src->device == WEFT_DEVICE_META)
    return weft__error(WEFT_INVALID_ARGUMENT, "copy_: cannot copy from a %s tensor into a %s tensor",
                       weft_device_name(src->device), weft_device_name(self->device));
  if (self->device == WEFT_DEVICE_CPU)
    return weft__error(WEFT_NOT_IMPLEMENTED,
                       "copy_: a webgpu tensor is read back asynchronously: use await t.toAsync('cpu') "
                       "(or await t.dataAsync())");
  if (src->device == WEFT_DEVICE_CPU) return upload(self, src);
  return copy_on_device(self, src);
}

weft_status weft__webgpu_register(void) {
  weft__webgpu_install();
  WEFT_KERNEL(copy_, WEBGPU, copy_webgpu);
  return WEFT_OK;
}
