/* Helpers shared by src/iter/. Not installed. */
#ifndef WEFT_ITER_INTERNAL_H
#define WEFT_ITER_INTERNAL_H

#include "weft/iter.h"

/* PyTorch's C++ ScalarType names ("Float", "Long", ...), which its iterator
 * error messages use. */
const char* weft__torch_scalar_name(weft_dtype t);

#endif
