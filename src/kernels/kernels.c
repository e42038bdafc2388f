/* The selection tables: one per backend this build compiled, from kernels.inc. */
#include "kernels/kernels.h"

#if defined(WEFT_KERNELS_HAVE_WASM128)
#define BEST_ISA wasm128
#elif defined(WEFT_KERNELS_HAVE_SSE2)
#define BEST_ISA sse2
#else
#define BEST_ISA scalar
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

static const weft_kernels k_best = {
    .isa = STR(BEST_ISA),
#define K(family, name, u) .name = WEFT__UK_NAME(name, BEST_ISA, u),
#include "kernels/kernels.inc"
#undef K
};

static const weft_kernels k_scalar = {
    .isa = "scalar",
#define K(family, name, u) .name = WEFT__UK_NAME(name, scalar, u),
#include "kernels/kernels.inc"
#undef K
};

const weft_kernels* weft__kernels(void) { return &k_best; }
const weft_kernels* weft__kernels_scalar(void) { return &k_scalar; }

weft_xcopy_fn* weft__copy_kernel(const weft_kernels* k, size_t elem_size) {
  switch (elem_size) {
    case 1: return k->x8_copy;
    case 2: return k->x16_copy;
    case 4: return k->x32_copy;
    case 8: return k->x64_copy;
    default: return NULL;
  }
}

weft_xcopy_strided_fn* weft__copy_strided_kernel(const weft_kernels* k, size_t elem_size) {
  switch (elem_size) {
    case 1: return k->x8_copy_strided;
    case 2: return k->x16_copy_strided;
    case 4: return k->x32_copy_strided;
    case 8: return k->x64_copy_strided;
    default: return NULL;
  }
}

weft_xfill_fn* weft__fill_kernel(const weft_kernels* k, size_t elem_size) {
  switch (elem_size) {
    case 1: return k->x8_fill;
    case 2: return k->x16_fill;
    case 4: return k->x32_fill;
    case 8: return k->x64_fill;
    default: return NULL;
  }
}

weft_transpose_fn* weft__transpose_kernel(const weft_kernels* k, size_t elem_size) {
  switch (elem_size) {
    case 1: return k->x8_transposec;
    case 2: return k->x16_transposec;
    case 4: return k->x32_transposec;
    case 8: return k->x64_transposec;
    default: return NULL;
  }
}
