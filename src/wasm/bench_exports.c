/* Benchmark entry points of the wasm module (bench/run.mjs): the workloads
 * of bench/workloads.c, the same C the native bench runs, exported so the
 * shipped dist/ build itself is measured. JS times each call. */
#include <emscripten/emscripten.h>

#include "../../bench/workloads.h"
#include "weft/parallel.h"

EMSCRIPTEN_KEEPALIVE int weft_wasm_bench_setup(void) { return (int)weft_bench_setup(); }
EMSCRIPTEN_KEEPALIVE void weft_wasm_bench_teardown(void) { weft_bench_teardown(); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_bench_run(int w) { return (int)weft_bench_run(w); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_bench_count(void) { return WEFT_BENCH_COUNT; }
EMSCRIPTEN_KEEPALIVE const char* weft_wasm_bench_name(int w) { return weft_bench_name(w); }
EMSCRIPTEN_KEEPALIVE double weft_wasm_bench_bytes(int w) { return weft_bench_bytes(w); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_bench_ceiling(int w) { return weft_bench_ceiling(w); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_bench_verify(void) { return weft_bench_verify(); }
EMSCRIPTEN_KEEPALIVE int weft_wasm_bench_set_threads(int n) {
  weft_set_num_threads(n);
  return weft_get_num_threads();
}
