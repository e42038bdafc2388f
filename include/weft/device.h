#ifndef WEFT_DEVICE_H
#define WEFT_DEVICE_H
#ifdef __cplusplus
extern "C" {
#endif
/* cpu holds data; meta tensors carry only sizes, strides and dtype. */
typedef enum { WEFT_DEVICE_CPU = 0, WEFT_DEVICE_META = 1, WEFT_DEVICE_COUNT } weft_device;
const char* weft_device_name(weft_device d);                 /* "cpu", "meta" */
int weft_device_from_name(const char* name, weft_device* out); /* weft_status */
#ifdef __cplusplus
}
#endif
#endif
