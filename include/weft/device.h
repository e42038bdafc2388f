#ifndef WEFT_DEVICE_H
#define WEFT_DEVICE_H
#ifdef __cplusplus
extern "C" {
#endif
/* cpu holds data in wasm (or native) memory; meta tensors carry only sizes,
 * strides and dtype; webgpu data lives in GPUBuffers on the JS side (see
 * docs/webgpu.md): a storage holds a buffer handle, never a pointer. */
typedef enum { WEFT_DEVICE_CPU = 0, WEFT_DEVICE_META = 1, WEFT_DEVICE_WEBGPU = 2, WEFT_DEVICE_COUNT } weft_device;
const char* weft_device_name(weft_device d);                 /* "cpu", "meta", "webgpu" */
int weft_device_from_name(const char* name, weft_device* out); /* weft_status */
#ifdef __cplusplus
}
#endif
#endif
