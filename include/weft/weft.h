/* weft: PyTorch's tensor machinery, small, in C11, for WebAssembly. */
#ifndef WEFT_H
#define WEFT_H
#include "weft/alloc.h"
#include "weft/copy.h"
#include "weft/device.h"
#include "weft/dispatch.h"
#include "weft/dtype.h"
#include "weft/elementwise.h"
#include "weft/error.h"
#include "weft/explain.h"
#include "weft/iter.h"
#include "weft/parallel.h"
#include "weft/storage.h"
#include "weft/tensor.h"
#include "weft/view.h"
#endif
