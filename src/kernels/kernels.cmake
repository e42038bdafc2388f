# Kernels: every file listed here is compiled once per vector backend into an
# object library (weft_kernels_<isa>). Native x86 builds the SSE2 and scalar
# backends, wasm the wasm128 (-msimd128) and scalar ones; other CPUs (and
# -DWEFT_FORCE_SCALAR=ON) the scalar one only. The tables (kernels.c) and the
# plain-C pieces are compiled once (weft_kernels). WEFT_LAYER_TARGETS_kernels
# lists them all for the top-level CMakeLists.txt.
set(WEFT_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/copy.c
  ${CMAKE_CURRENT_LIST_DIR}/cast.c
  ${CMAKE_CURRENT_LIST_DIR}/transpose.c
  ${CMAKE_CURRENT_LIST_DIR}/vbinary.c
  ${CMAKE_CURRENT_LIST_DIR}/vcmp.c
  ${CMAKE_CURRENT_LIST_DIR}/vunary.c
  ${CMAKE_CURRENT_LIST_DIR}/vunary_math.c
  ${CMAKE_CURRENT_LIST_DIR}/reduce.c
  ${CMAKE_CURRENT_LIST_DIR}/scan.c
  ${CMAKE_CURRENT_LIST_DIR}/gemm.c
  ${CMAKE_CURRENT_LIST_DIR}/gemv.c
  ${CMAKE_CURRENT_LIST_DIR}/pool.c
  ${CMAKE_CURRENT_LIST_DIR}/conv.c
  ${CMAKE_CURRENT_LIST_DIR}/resize.c
  ${CMAKE_CURRENT_LIST_DIR}/norm.c
  ${CMAKE_CURRENT_LIST_DIR}/conv_epilogue.c
  ${CMAKE_CURRENT_LIST_DIR}/conv_rows.c
  ${CMAKE_CURRENT_LIST_DIR}/attention.c
  ${CMAKE_CURRENT_LIST_DIR}/cdist.c)
set(WEFT_KERNEL_ONCE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/kernels.c
  ${CMAKE_CURRENT_LIST_DIR}/cast_ref.c
  ${CMAKE_CURRENT_LIST_DIR}/sort.c)

# No contraction into FMAs: every backend must round the same way.
set(WEFT_KERNEL_FLAGS ${WEFT_WARNINGS} -ffp-contract=off)
list(APPEND WEFT_KERNEL_FLAGS ${WEFT_SAN_FLAGS})

function(weft_kernel_backend name)
  add_library(weft_kernels_${name} OBJECT ${WEFT_KERNEL_SOURCES})
  target_include_directories(weft_kernels_${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(weft_kernels_${name} PRIVATE ${WEFT_KERNEL_FLAGS} ${ARGN})
  target_compile_definitions(weft_kernels_${name} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
  list(APPEND WEFT_LAYER_TARGETS_kernels weft_kernels_${name})
  set(WEFT_LAYER_TARGETS_kernels ${WEFT_LAYER_TARGETS_kernels} PARENT_SCOPE)
endfunction()

add_library(weft_kernels OBJECT ${WEFT_KERNEL_ONCE_SOURCES})
weft_layer_setup(weft_kernels)
set(WEFT_LAYER_TARGETS_kernels weft_kernels)

# WEFT_FORCE_SCALAR leaves the SIMD backend out, so the selection table
# (kernels.c) hands every caller the scalar kernels: the whole test suite
# then runs on the portable backend. WEFT_KERNELS_BEST_ISA tells the tests
# which backend weft__kernels() must report.
weft_kernel_backend(scalar -DWEFT_VEC_FORCE_SCALAR)
set(WEFT_KERNELS_BEST_ISA scalar)
if(WEFT_FORCE_SCALAR)
  # no SIMD backend
elseif(EMSCRIPTEN AND (NOT DEFINED WEFT_WASM_SIMD OR WEFT_WASM_SIMD))
  weft_kernel_backend(wasm128 -msimd128)
  target_compile_definitions(weft_kernels PRIVATE WEFT_KERNELS_HAVE_WASM128)
  set(WEFT_KERNELS_BEST_ISA wasm128)
elseif(EMSCRIPTEN)
  # weft-scalar (-DWEFT_WASM_SIMD=OFF) keeps only the scalar backend, so its
  # .wasm validates on engines without SIMD.
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64|i.86|x86")
  weft_kernel_backend(sse2 -msse2)
  target_compile_definitions(weft_kernels PRIVATE WEFT_KERNELS_HAVE_SSE2)
  set(WEFT_KERNELS_BEST_ISA sse2)
endif()

