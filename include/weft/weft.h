/* weft: PyTorch's tensor machinery, small, in C11, for WebAssembly. */
#ifndef WEFT_H
#define WEFT_H
#include "weft/alloc.h"
#include "weft/autograd.h"
#include "weft/copy.h"
#include "weft/device.h"
#include "weft/dispatch.h"
#include "weft/dtype.h"
#include "weft/elementwise.h"
#include "weft/error.h"
#include "weft/explain.h"
#include "weft/factory.h"
#include "weft/iter.h"
#include "weft/join.h"
#include "weft/parallel.h"
#include "weft/reduce.h"
#include "weft/storage.h"
#include "weft/tensor.h"
#include "weft/view.h"

/* Registers every operator of the library with the dispatcher, once (later
 * calls return at once). Entry points do it on first use and a program that
 * links any operator does it at load time, so only code that looks ops up by
 * name before anything else has run needs to call it. */
void weft_init(void);
#endif
