/* The JS imports behind webgpu.h. Under Emscripten each is an EM_JS call
 * into Module.weftWebGPU (js/webgpu.js installs it at wt.initWebGPU());
 * natively the same entries refuse, so the key and the device exist in
 * every build and only allocation says there is no GPU. */
#include "webgpu/webgpu.h"

#include <stdatomic.h>

#include "base/error.h"
#include "core/internal.h"

/* JS return codes of alloc / upload / dispatch (js/webgpu.js speaks them) */
enum { JS_NO_DEVICE = -1, JS_OUT_OF_MEMORY = -2, JS_FAILED = -3 };

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>

/* nbytes as a double: JS has no int64 here, and 2**53 bytes is no GPU's */
EM_JS(int, weft_webgpu_js_alloc, (double nbytes), {
  const g = Module['weftWebGPU'];
  return g ? g.alloc(nbytes) : -1;
});
EM_JS(void, weft_webgpu_js_free, (int handle), {
  const g = Module['weftWebGPU'];
  if (g) g.free(handle);
});
EM_JS(int, weft_webgpu_js_upload, (int handle, const void* src, double nbytes), {
  const g = Module['weftWebGPU'];
  return g ? g.upload(handle, wasmMemory.buffer, src, nbytes) : -1;
});
EM_JS(int, weft_webgpu_js_dispatch, (const char* key, const char* wgsl, const int32_t* buffers, int nbuffers,
                                     const uint32_t* params, int nparams, const uint32_t* grid), {
  const g = Module['weftWebGPU'];
  return g ? g.dispatch(UTF8ToString(key), wgsl, buffers, nbuffers, params, nparams, grid, wasmMemory.buffer) : -1;
});
#define WEFT_WEBGPU_BUILD_HAS_DEVICE 1
#else
static int weft_webgpu_js_alloc(double nbytes) { return (void)nbytes, JS_NO_DEVICE; }
static void weft_webgpu_js_free(int handle) { (void)handle; }
static int weft_webgpu_js_upload(int handle, const void* src, double nbytes) {
  return (void)handle, (void)src, (void)nbytes, JS_NO_DEVICE;
}
static int weft_webgpu_js_dispatch(const char* key, const char* wgsl, const int32_t* buffers, int nbuffers,
                                   const uint32_t* params, int nparams, const uint32_t* grid) {
  (void)key, (void)wgsl, (void)buffers, (void)nbuffers, (void)params, (void)nparams, (void)grid;
  return JS_NO_DEVICE;
}
#define WEFT_WEBGPU_BUILD_HAS_DEVICE 0
#endif

/* The error of a refused JS call, named after the op the user called. */
static weft_status refusal(const char* op, int code, double nbytes) {
  if (code == JS_NO_DEVICE) {
    if (!WEFT_WEBGPU_BUILD_HAS_DEVICE)
      return weft__error(WEFT_NOT_IMPLEMENTED,
                         "%s: this is a native build of weft, which has no WebGPU device (WebGPU runs in the "
                         "browser's wasm build)", op);
    return weft__error(WEFT_NOT_IMPLEMENTED, "%s: no WebGPU device: call await wt.initWebGPU() first", op);
  }
  if (code == JS_OUT_OF_MEMORY)
    return weft__error(WEFT_OUT_OF_MEMORY, "%s: WebGPU out of memory: tried to allocate %.0f bytes", op, nbytes);
  return weft__error(WEFT_INTERNAL, "%s: the WebGPU device refused the call (its message is on the console)", op);
}

static int32_t storage_alloc(int64_t nbytes) {
  int h = weft_webgpu_js_alloc((double)nbytes);
  if (h > 0) return h;
  refusal("empty", h, (double)nbytes);
  return 0;
}

static void storage_free(int32_t handle) { weft_webgpu_js_free(handle); }

static const weft__device_storage_ops storage_ops = {storage_alloc, storage_free};

void weft__webgpu_install(void) { atomic_store(&weft__webgpu_storage_ops, &storage_ops); }

weft_status weft__webgpu_upload(const char* op, int32_t handle, const void* src, int64_t nbytes) {
  int r = weft_webgpu_js_upload(handle, src, (double)nbytes);
  return r == 0 ? WEFT_OK : refusal(op, r, (double)nbytes);
}

int32_t weft__webgpu_buffer_of(const weft_tensor* t) { return t->storage->device_buffer; }

weft_status weft__webgpu_dispatch(const char* op, const weft__webgpu_program* p) {
  int r = weft_webgpu_js_dispatch(p->key, p->wgsl, p->buffers, p->nbuffers, p->params, p->nparams, p->grid);
  return r == 0 ? WEFT_OK : refusal(op, r, 0);
}
