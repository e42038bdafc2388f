/* _conv2d_fused (issue 23): conv2d for inference, with what follows a
 * convolution in a CNN applied in the convolution's output tile instead of
 * in passes of their own:
 *
 *   y = activation(conv2d(input, weight, bias, ...) + residual)
 *
 * activation 'none', 'relu' or 'relu6' (MobileNetV2's); residual (ResNet's
 * identity, MobileNetV2's inverted-residual skip) has the output's shape.
 * conv2d's checks and messages (src/ops/conv.c) come first, then the
 * residual's. Every algorithm of src/ops/cpu/conv.c takes the epilogue
 * (ops/cpu/conv_fused.h).
 *
 * Weights are constant in inference, so their packed panels are kept
 * (XNNPACK packs once per operator): hung on the weight's storage, freed
 * with it, keyed on the view (offset, sizes, strides), the dtypes, the
 * packing and the storage's version counter, so an in-place write to the
 * weight (copy_, loadStateDict, an optimizer step) repacks on the next call.
 * The counter counts only once autograd's in-place kernels are registered
 * (the first tensor that requires grad registers them, as every nn module's
 * parameters do); before that a written weight cannot be told from the one
 * packed, so the weight is packed per call. Writes into a tensor's memory
 * behind the ops' back (a typed-array view filled from JS) are not seen.
 * There is no autograd formula: with grad mode on, an input that requires
 * grad is refused ("the derivative for '_conv2d_fused' is not implemented").
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ops/conv_fused.h"
#include "ops/ops.h"
#include "weft/parallel.h"

static const char* const act_names[] = {"none", "relu", "relu6"};

/* ---- the packed-weight cache ---- */

typedef struct packed_entry {
  struct packed_entry* next;
  /* the list's reference while it is on the list, plus one per call running
   * with its panels: a stale entry unlinked while another thread still
   * reads it is freed by the last of them */
  atomic_int refs;
  int64_t offset, sizes[4], strides[4], groups;
  weft_dtype src, ct;
  int packing; /* NCHW's K order and MR panels, NHWC's and NR panels, Winograd's transform */
  unsigned version;
  size_t bytes;
  double data[]; /* the panels (8-byte aligned) */
} packed_entry;

/* guards every storage's list (a lookup, or one weight's packing) */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void release_entry(packed_entry* e) {
  if (e && atomic_fetch_sub(&e->refs, 1) == 1) free(e);
}

/* the storage is going: drop the list's references */
static void free_entries(void* list) {
  for (packed_entry *e = list, *next; e; e = next) next = e->next, release_entry(e);
}

static int packing_of(weft_conv2d_algo a) {
  if (a == WEFT_CONV_WINOGRAD_NHWC) return 2;
  return a == WEFT_CONV_IMPLICIT_GEMM_NHWC || a == WEFT_CONV_GEMM_1X1_NHWC;
}

static bool same_key(const packed_entry* e, const weft_tensor* w, weft_dtype ct, weft_conv2d_algo a, int64_t groups) {
  return e->offset == w->storage_offset && memcmp(e->sizes, w->sizes, sizeof e->sizes) == 0 &&
         memcmp(e->strides, w->strides, sizeof e->strides) == 0 && e->groups == groups && e->src == w->dtype &&
         e->ct == ct && e->packing == packing_of(a);
}

/* The entry of w's storage for this key, packed from wc (w in ct) when
 * missing or stale, with a reference for the caller (release_entry); NULL
 * with the error set on OOM. Under the lock. */
static packed_entry* find_or_pack(const weft_tensor* w, const weft_tensor* wc, weft_dtype ct, weft_conv2d_algo a,
                                  const weft_conv2d_geom* g, size_t bytes) {
  weft_storage* st = w->storage;
  unsigned version = weft_tensor_version(w);
  packed_entry* head = atomic_load(&st->packed);
  for (packed_entry** link = &head; *link; link = &(*link)->next) {
    packed_entry* e = *link;
    if (!same_key(e, w, ct, a, g->groups)) continue;
    if (e->version == version) {
      atomic_fetch_add(&e->refs, 1);
      return e;
    }
    *link = e->next; /* stale: written since it was packed */
    atomic_store(&st->packed, head);
    release_entry(e);
    break;
  }
  packed_entry* e = malloc(sizeof *e + bytes);
  if (!e) return weft__error_null(WEFT_OUT_OF_MEMORY, "conv2d: out of memory (%zu bytes for the packed weight)", bytes);
  *e = (packed_entry){head, 2, w->storage_offset, {0}, {0}, g->groups, w->dtype, ct, packing_of(a), version, bytes};
  memcpy(e->sizes, w->sizes, sizeof e->sizes);
  memcpy(e->strides, w->strides, sizeof e->strides);
  if (weft__conv2d_pack(ct, a, g, weft_tensor_data_ptr(wc), e->data) != WEFT_OK) {
    free(e);
    return NULL;
  }
  atomic_store(&weft__storage_packed_free, free_entries);
  atomic_store(&st->packed, e);
  return e;
}

/* Whether in-place writes bump storage versions yet (see the top) */
static bool versions_counted(void) {
  static weft_op* _Atomic copy_op;
  weft_op* op = atomic_load(&copy_op);
  if (!op) atomic_store(&copy_op, op = weft_op_find("copy_"));
  return op && weft_op_has_kernel(op, WEFT_KEY_AD_INPLACE_OR_VIEW);
}

/* ---- the epilogue, for conv.c's run ---- */

weft_status weft__conv2d_fusion_check(const weft__conv2d_fusion* f, const int64_t sizes[4], const weft_tensor* x) {
  const weft_tensor* r = f->residual;
  if (!r) return WEFT_OK;
  if (r->ndim != 4 || memcmp(r->sizes, sizes, sizeof(int64_t) * 4) != 0)
    return weft__error(WEFT_INVALID_ARGUMENT, "_conv2d_fused: expected residual of size %s (the output's) but got %s",
                       weft__list(sizes, 4).s, weft__list(r->sizes, r->ndim).s);
  if (r->dtype != x->dtype)
    return weft__error(WEFT_INVALID_ARGUMENT, "_conv2d_fused: expected residual of dtype %s (the input's) but got %s",
                       weft_dtype_name(x->dtype), weft_dtype_name(r->dtype));
  if (r->device != x->device)
    return weft__error(WEFT_INVALID_ARGUMENT,
                       "_conv2d_fused: expected residual on the input's device (%s) but got %s",
                       weft_device_name(x->device), weft_device_name(r->device));
  return WEFT_OK;
}

void weft__conv2d_fusion_json(weft__strbuf* s, const weft__conv2d_fusion* f, weft_conv2d_algo a,
                              const weft_conv2d_geom* g, weft_dtype ct) {
  size_t bytes = weft__conv2d_packed_bytes(ct, a, g);
  bool wino = a == WEFT_CONV_WINOGRAD_NHWC;
  const char* start = wino ? "output transform" : "tile start";
  weft__strbuf_put(s, "\"epilogue\":{\"bias\":\"%s\",\"residual\":%s%s%s,\"activation\":\"%s\",\"where\":\"%s\"},",
                   start, f->residual ? "\"" : "", f->residual ? start : "null", f->residual ? "\"" : "",
                   act_names[f->act],
                   wino ? "output transform store" : bytes ? "micro-kernel store"
                   : a == WEFT_CONV_DEPTHWISE_NHWC && ct == WEFT_FLOAT32 ? "depthwise kernel store"
                                                                          : "row pass after the depthwise kernel");
  if (wino) /* 16 products [tiles x C] [C x Cout], one per position of the 4x4 transformed tile */
    weft__strbuf_put(s, "\"gemm\":{\"m\":%lld,\"n\":%lld,\"k\":%lld,\"count\":16},",
                     (long long)(g->n * ((g->ho + 1) / 2) * ((g->wo + 1) / 2)), (long long)g->cout, (long long)g->c);
  weft__strbuf_put(s, "\"packed_weight\":%s,", bytes ? "\"cached on the weight's storage\"" : "null");
}

weft_status weft__conv2d_fusion_run(const weft__conv2d_fusion* f, weft_conv2d_algo a, const weft_conv2d_geom* g,
                                    weft_memory_format fmt, weft_dtype ct, const weft_tensor* w,
                                    const weft_tensor* wc, const weft_tensor* xc, const weft_tensor* bc,
                                    weft_tensor* y) {
  weft_tensor* rt = f->residual ? weft_to_dtype(f->residual, ct, false) : NULL;
  weft_tensor* rc = rt ? weft_contiguous(rt, fmt) : NULL;
  weft_status s = !f->residual || rc ? WEFT_OK : weft_last_status();
  size_t bytes = versions_counted() ? weft__conv2d_packed_bytes(ct, a, g) : 0;
  if (s == WEFT_OK) {
    pthread_mutex_lock(&cache_lock);
    packed_entry* e = bytes ? find_or_pack(w, wc, ct, a, g, bytes) : NULL;
    if (bytes && !e) s = weft_last_status();
    pthread_mutex_unlock(&cache_lock); /* e is ours until release_entry */
    weft_conv2d_epilogue epi = {f->act, rc ? weft_tensor_data_ptr(rc) : NULL};
    if (s == WEFT_OK)
      s = weft__conv2d_fused(weft__kernels(), ct, a, g, weft_tensor_data_ptr(xc), weft_tensor_data_ptr(wc),
                             e ? e->data : NULL, bc ? weft_tensor_data_ptr(bc) : NULL, &epi,
                             weft_tensor_data_ptr(y));
    release_entry(e);
  }
  weft_tensor_release(rt);
  weft_tensor_release(rc);
  return s;
}

/* ---- the op ---- */

static weft_status parse_activation(const char* name, weft_conv_act* act) {
  for (int i = 0; i < (int)(sizeof act_names / sizeof act_names[0]); i++)
    if (strcmp(name, act_names[i]) == 0) {
      *act = (weft_conv_act)i;
      return WEFT_OK;
    }
  return weft__error(WEFT_INVALID_ARGUMENT,
                     "_conv2d_fused: unknown activation '%s' (expected 'none', 'relu' or 'relu6')", name);
}

static weft_tensor* conv2d_fused_kernel(const weft_tensor* input, const weft_tensor* weight, const weft_tensor* bias,
                                        const int64_t* stride, int64_t ns, const int64_t* padding, int64_t np,
                                        const int64_t* dilation, int64_t nd, int64_t groups, const char* activation,
                                        const weft_tensor* residual) {
  weft__conv2d_fusion f = {WEFT_CONV_ACT_NONE, NULL};
  if (parse_activation(activation, &f.act) != WEFT_OK) return NULL;
  /* an unbatched (3-D) input runs as a batch of one: its residual too */
  weft_tensor* r4 = residual && input->ndim == 3 && residual->ndim == 3 ? weft_unsqueeze(residual, 0)
                    : residual ? weft_tensor_retain((weft_tensor*)residual) : NULL;
  if (residual && !r4) return NULL;
  f.residual = r4;
  weft_tensor* y = weft__conv2d_fusable(input, weight, bias, stride, ns, padding, np, dilation, nd, groups, &f);
  weft_tensor_release(r4);
  if (!y) weft__error_rename("conv2d", "_conv2d_fused");
  return y;
}

weft_status weft__conv_fused_register(void) {
  WEFT_KERNEL(op__conv2d_fused, CPU, conv2d_fused_kernel);
  WEFT_KERNEL(op__conv2d_fused, META, conv2d_fused_kernel);
  return WEFT_OK;
}
