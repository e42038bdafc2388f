/* Expands the op table: entry points, adapters and schema registration. */
#include <stdio.h>
#include <stdlib.h>

#include "ops/elementwise.h"
#include "ops/ops.h"

#define WEFT_OP WEFT_OP_DEFINE
#include "ops/ops.def"
#undef WEFT_OP

static weft_status register_schemas(void) {
#define WEFT_OP WEFT_OP_REGISTER
#include "ops/ops.def"
#undef WEFT_OP
  return WEFT_OK;
}

void weft__ops_register_all(void) {
  if (register_schemas() != WEFT_OK || weft__ops_register_kernels() != WEFT_OK ||
      weft__elementwise_register() != WEFT_OK) {
    /* The op table is part of the library: a bad line is a build bug. */
    fprintf(stderr, "weft: op table registration failed: %s\n", weft_last_error());
    abort();
  }
}
