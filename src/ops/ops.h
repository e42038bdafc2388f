/* Declarations generated from the op table: weft_<cname>, weft_redispatch_<cname>,
 * kernel types and typed registration (src/dispatch/opgen.h). The public
 * headers declare the same entry points under their usual names. */
#ifndef WEFT_OPS_OPS_H
#define WEFT_OPS_OPS_H

#include "dispatch/opgen.h"

#define WEFT_OP WEFT_OP_DECLARE
#include "ops/ops.def"
#undef WEFT_OP

/* src/ops/register.c */
weft_status weft__ops_register_kernels(void);

#endif
