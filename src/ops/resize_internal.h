/* What src/ops/pad.c and src/ops/upsample.c share. */
#ifndef WEFT_OPS_RESIZE_INTERNAL_H
#define WEFT_OPS_RESIZE_INTERNAL_H

#include "base/error.h"

/* A PyTorch message prefixed with the op the user called ("pad: ..."). */
weft_status weft__resize_fail(weft_status s, const char* op, const char* fmt, ...) WEFT__PRINTF(3, 4);

#endif
