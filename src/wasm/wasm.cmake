# WebAssembly targets (included by the top-level CMakeLists.txt under emcmake).
#
# One build directory per variant, chosen with -DWEFT_WASM_THREADS=ON|OFF and
# -DWEFT_WASM_SIMD=ON|OFF:
#   THREADS=ON            -> weft-simd-threads (-msimd128 -pthread, a pool of pthread workers)
#   THREADS=OFF           -> weft-simd         (-msimd128, single-threaded)
#   THREADS=OFF, SIMD=OFF -> weft-scalar       (no SIMD instruction anywhere: kernels use the
#                            scalar vector backend; for engines without wasm SIMD)
# -DWEFT_BUILD_ID="<version>+<hash>" is compiled into weft_build_id() and the
# glue (Module.weftGlueBuildId), and checked against dist/build-id.js at load.
# Each variant links src/wasm/exports.c (+ exports_dispatch.c) against the `weft` library twice:
#   node/<variant>.js  classic MODULARIZE glue, loaded by dist/node.js through require
#   es6/<variant>.js   EXPORT_ES6 glue for browsers and bundlers
# scripts/build-wasm.sh copies both into dist/. The module also exports the
# benchmark workloads (src/wasm/bench_exports.c + bench/workloads.c, a few
# KB) so bench/run.mjs measures the shipped build. With -DWEFT_WASM_TESTS=ON
# the same flags build the C tests as Node programs instead (top-level
# CMakeLists.txt; scripts/test.sh runs both variants).

option(WEFT_WASM_THREADS "Build the pthread (SharedArrayBuffer) variant" ON)
option(WEFT_WASM_SIMD "Use wasm SIMD (OFF: the weft-scalar variant)" ON)
set(WEFT_WASM_POOL_SIZE 4 CACHE STRING "Pthread workers started with the module")
set(WEFT_BUILD_ID "unknown" CACHE STRING "Build id shared by the glue, the .wasm and dist/build-id.js")

if(WEFT_WASM_THREADS AND NOT WEFT_WASM_SIMD)
  message(FATAL_ERROR "weft: the threaded wasm variant is built with SIMD only")
endif()
if(WEFT_WASM_THREADS)
  set(WEFT_WASM_VARIANT weft-simd-threads)
  set(WEFT_WASM_ISA_FLAGS "-msimd128 -mbulk-memory -pthread")
elseif(NOT WEFT_WASM_SIMD)
  set(WEFT_WASM_VARIANT weft-scalar)
  set(WEFT_WASM_ISA_FLAGS "-mbulk-memory")
else()
  set(WEFT_WASM_VARIANT weft-simd)
  # (no atomics: WEFT_THREAD_LOCAL, src/core/internal.h, is plain static storage)
  set(WEFT_WASM_ISA_FLAGS "-msimd128 -mbulk-memory")
endif()

# Every object in the link must agree on atomics/bulk-memory (wasm-ld refuses
# shared memory otherwise), including objects of targets defined before this
# file such as the per-ISA kernels. CMAKE_C_FLAGS is read when the directory
# is generated, so appending here reaches all of them.
set(CMAKE_C_FLAGS "${CMAKE_C_FLAGS} ${WEFT_WASM_ISA_FLAGS} -DWEFT_WASM_POOL_SIZE=${WEFT_WASM_POOL_SIZE}")

set(WEFT_WASM_EXPORTED_FUNCTIONS
  _malloc _free
  _weft_last_error _weft_last_status _weft_status_name _weft_clear_error
  _weft_dtype_name _weft_device_name _weft_memory_format_name
  _weft_tensor_release _weft_tensor_dim _weft_tensor_dtype _weft_tensor_device
  _weft_tensor_element_size _weft_tensor_data_ptr _weft_tensor_is_contiguous
  _weft_tensor_is_non_overlapping_and_dense _weft_tensor_suggest_memory_format
  _weft_promote_types _weft_can_cast _weft_get_default_dtype _weft_set_default_dtype _weft_build_id)
list(JOIN WEFT_WASM_EXPORTED_FUNCTIONS "," WEFT_WASM_EXPORTS_CSV)

file(WRITE ${CMAKE_BINARY_DIR}/build-id.pre.js "Module['weftGlueBuildId'] = '${WEFT_BUILD_ID}';\n")
set(WEFT_WASM_LINK_FLAGS
  -O3 -mbulk-memory --pre-js ${CMAKE_BINARY_DIR}/build-id.pre.js
  -sMODULARIZE=1 -sEXPORT_NAME=createWeft
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB
  -sEXPORTED_FUNCTIONS=${WEFT_WASM_EXPORTS_CSV}
  -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,wasmMemory -Wno-pthreads-mem-growth)
if(WEFT_WASM_SIMD)
  list(APPEND WEFT_WASM_LINK_FLAGS -msimd128)
endif()
if(WEFT_WASM_THREADS)
  # As many Web Workers as the pool can use here, not always the maximum: each
  # one loads the glue and instantiates the module before init() resolves, so
  # on a 2-core machine 4 workers cost startup time for 1 that weft uses. The
  # core count is the one emscripten_num_logical_cores() reports (parallel.c
  # caps the threads at it). The glue reads the variable when it makes its
  # pool (a name: the setting is pasted into the glue, and a call's
  # parentheses would not survive the link command line), set by the one
  # --pre-js file (CMake drops a second --pre-js as a duplicate option).
  #
  # Startup (issue 26): loading a worker costs about 30 ms of CPU each, and
  # the glue resolves only once all have loaded. js/loader.js asks for a lazy
  # pool (Module.weftLazyWorkers, with its own instantiateWasm): none at
  # load, so the module's run dependency is released here once the instance
  # is received; weftStartWorkers then loads them in the background, each
  # handed to pthread_create (PThread.unusedWorkers) only once it has
  # loaded, and reports the count so C raises its worker limit.
  file(APPEND ${CMAKE_BINARY_DIR}/build-id.pre.js
    "var weftPoolTarget = (function () {\n"
    "  var node = typeof process == 'object' && process.versions && process.versions.node && typeof require == 'function';\n"
    "  var cores = node ? require('os').cpus().length : typeof navigator == 'object' && navigator['hardwareConcurrency'];\n"
    "  return Math.max(1, Math.min(${WEFT_WASM_POOL_SIZE}, (cores || ${WEFT_WASM_POOL_SIZE} + 1) - 1));\n"
    "})();\n"
    "var weftPoolSize = Module['weftLazyWorkers'] ? 0 : weftPoolTarget;\n"
    "if (Module['weftLazyWorkers']) {\n"
    "  var weftInstantiate = Module['instantiateWasm'];\n"
    "  Module['instantiateWasm'] = function (info, receive) {\n"
    "    return weftInstantiate(info, function (instance, module) {\n"
    "      receive(instance, module);\n"
    "      removeRunDependency('wasm-instantiate');\n"
    "    });\n"
    "  };\n"
    "  Module['weftStartWorkers'] = function (onLoaded, onError) {\n"
    "    for (var i = 0; i < weftPoolTarget; i++) {\n"
    "      PThread.allocateUnusedWorker();\n"
    "      var w = PThread.unusedWorkers.pop();\n"
    "      if (w.on) w.on('error', onError); else w.addEventListener('error', onError);\n"
    "      PThread.loadWasmModuleToWorker(w, function (w) {\n"
    "        PThread.unusedWorkers.push(w);\n"
    "        onLoaded(PThread.unusedWorkers.length + PThread.runningWorkers.length);\n"
    "      });\n"
    "    }\n"
    "    return weftPoolTarget;\n"
    "  };\n"
    "}\n")
  list(APPEND WEFT_WASM_LINK_FLAGS -pthread -sPTHREAD_POOL_SIZE=weftPoolSize)
endif()

function(weft_wasm_glue target subdir)
  add_executable(${target} src/wasm/exports.c src/wasm/exports_dispatch.c src/wasm/exports_autograd.c src/wasm/bench_exports.c
    bench/workloads.c)
  target_link_libraries(${target} PRIVATE weft)
  target_include_directories(${target} PRIVATE src ${CMAKE_BINARY_DIR})
  target_compile_options(${target} PRIVATE ${WEFT_WARNINGS})
  target_compile_definitions(${target} PRIVATE WEFT_BUILD_ID="${WEFT_BUILD_ID}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${CMAKE_BINARY_DIR}/build-id.pre.js)
  target_link_options(${target} PRIVATE ${WEFT_WASM_LINK_FLAGS} ${ARGN})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${WEFT_WASM_VARIANT} SUFFIX ".js"
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${subdir})
endfunction()

# Size (issue 26: the gzipped .wasm is what a page downloads). Code that runs
# once per op call or once per program, not per element, is built for size:
# the generated entry points, adapters and registration (ops/ops.c), the JS
# ABI per op (wasm/exports_*.c), the derivative formulas (they call ops), and
# the linear-algebra drivers (QR, SVD, eigh, LU, norms: O(n^3) on small
# matrices, rarely in a hot loop), and the rarely used families (einsum's
# planning, cdist, the data ops, upsampling, isnan/isclose/nan_to_num, the
# padding modes, index_copy, the view ops' backwards). Every kernel, GEMM, conv and
# elementwise loop stays at -O3; bench/run.mjs's rows show the difference is noise.
set(WEFT_WASM_SIZE_SOURCES
  src/ops/ops.c src/wasm/exports_dispatch.c src/wasm/exports_autograd.c src/autograd/formulas.c
  src/ops/linalg_decomp.c src/ops/linalg_eigh.c src/ops/linalg_norm.c src/ops/linalg_qr.c src/ops/linalg_svd.c
  src/ops/cpu/qr.c src/ops/cpu/lu.c src/ops/cpu/eigh.c src/ops/cpu/svd.c
  src/ops/einsum.c src/ops/cdist.c src/ops/dataops.c src/ops/upsample.c src/ops/cpu/resize.c
  src/ops/pointwise.c src/ops/pad.c src/ops/index_copy.c src/ops/view_backward.c src/ops/cpu/lstsq_svd.c
  # the factories (random draws, ranges, eye: once per tensor made, in no
  # timed loop), the losses' drivers (a [batch, classes] pass beside the
  # GEMMs of a step), conv_transpose's driver (its GEMM and col2im stay
  # -O3), explain and the autograd hooks
  src/ops/factory.c src/ops/loss.c src/ops/conv_transpose.c src/ops/explain.c src/iter/iter_explain.c
  src/iter/explain_capture.c src/autograd/hooks.c
  )
set_source_files_properties(${WEFT_WASM_SIZE_SOURCES} PROPERTIES COMPILE_OPTIONS -Os)
# The WebGPU backend's host side (every src/webgpu/ file and each op family's
# *_webgpu.c) only writes WGSL text and records commands, once per op call;
# its speed is the GPU's, and a page on the CPU never runs it. And the
# generated code (one copy per op-table line). Both smallest.
file(GLOB WEFT_WASM_WEBGPU_SOURCES ${CMAKE_SOURCE_DIR}/src/webgpu/*.c ${CMAKE_SOURCE_DIR}/src/ops/webgpu.c
  ${CMAKE_SOURCE_DIR}/src/ops/*_webgpu.c)
set_source_files_properties(src/ops/ops.c src/wasm/exports_dispatch.c src/autograd/formulas.c
  ${WEFT_WASM_WEBGPU_SOURCES} PROPERTIES COMPILE_OPTIONS -Oz)

# The typed JS entry points (weft_wasm_op_<cname>, src/wasm/exports_dispatch.c)
# are a tenth of the gzipped module. The out= overloads and the backward ops
# get none: JS calls them through the boxed stack (js/ops.js falls back to
# it when a typed entry point is missing), a few microseconds more per call
# on paths that are not an inner loop (an out= call, a backward op called
# from JS). Their names come from the op tables, as
# `#define WJ_COLD_<cname> ~, 1` lines in the build directory's wj_cold.h.
file(GLOB WEFT_OP_DEF_FILES ${CMAKE_SOURCE_DIR}/src/ops/*.def)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${WEFT_OP_DEF_FILES})
set(WEFT_WJ_COLD "/* Generated by src/wasm/wasm.cmake from the op tables (src/ops/, .def): ops without a typed JS entry point. */\n")
foreach(def IN LISTS WEFT_OP_DEF_FILES)
  file(STRINGS ${def} cold_lines REGEX "^WEFT_OP\\([A-Za-z0-9_]+_(out|backward),")
  foreach(line IN LISTS cold_lines)
    string(REGEX REPLACE "^WEFT_OP\\(([A-Za-z0-9_]+),.*" "\\1" cname "${line}")
    string(APPEND WEFT_WJ_COLD "#define WJ_COLD_${cname} ~, 1\n")
  endforeach()
endforeach()
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/wj_cold.h CONTENT "${WEFT_WJ_COLD}" @ONLY)

# A -DWEFT_WASM_TESTS=ON build directory holds the C tests (top-level
# CMakeLists.txt), not the glue.
if(WEFT_WASM_TESTS)
  return()
endif()

weft_wasm_glue(${WEFT_WASM_VARIANT}-node node -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0)
weft_wasm_glue(${WEFT_WASM_VARIANT}-es6 es6 -sEXPORT_ES6=1 -sENVIRONMENT=web,worker)
