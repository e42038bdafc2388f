/* The library's operators: expands the op table into entry points, adapters
 * and schema registration, and registers everything once (weft_init). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WEFT_OPGEN_INIT weft_init
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

static weft_status register_all(void) {
  weft_status s = register_schemas();
#define WEFT__OP_FILE_CALL(f) \
  if (s == WEFT_OK) s = weft__##f##_register();
  WEFT_OP_FILES(WEFT__OP_FILE_CALL)
#undef WEFT__OP_FILE_CALL
  return s;
}

static void init_body(void) {
  /* The op table is part of the library: a bad line is a build bug. */
  if (register_all() != WEFT_OK) {
    fprintf(stderr, "weft: op table registration failed: %s\n", weft_last_error());
    abort();
  }
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

void weft_init(void) {
  pthread_once(&init_once, init_body);
}

/* Lookups by name (weft_op_find, the JS op list) see every op of a program
 * that links any of them: this object file holds every entry point. */
#if defined(__GNUC__)
__attribute__((constructor)) static void init_at_load(void) {
  weft_init();
}
#endif
