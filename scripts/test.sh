#!/usr/bin/env bash
# npm test: build, check the layers, then run every C test (tests/c/test_*.c) on each backend
# the kernels are compiled for, then the JS tests:
#   build/native-asan            native SSE2 kernels, ASan+UBSan
#   build/native-scalar          native, WEFT_FORCE_SCALAR (the scalar kernels everywhere)
#   build/native-tsan            native SSE2 kernels, ThreadSanitizer
#   build/wasm-tests-threads     wasm SIMD + pthreads, under Node
#   build/wasm-tests-nothreads   wasm SIMD single-threaded, under Node
# then the PyTorch fixture replays again on an AddressSanitizer weft-simd
# (scripts/asan-wasm.sh), then the fuzz targets for a few seconds each (scripts/fuzz.mjs: libFuzzer,
# clang ASan+UBSan, build/fuzz; and the .npy reader's JS fuzzer), then the
# browser tests (Chromium). Each stage prints its time.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

stage_start=$SECONDS
total_start=$SECONDS
stage_done() {
  echo "test: $1 ($((SECONDS - stage_start)) s)"
  stage_start=$SECONDS
}

# Configures, builds and runs ctest in one build directory.
ctest_dir() {
  local dir="$1"
  shift
  weft_quiet "$@" -S . -B "$dir"
  weft_quiet cmake --build "$dir" -j2
  ctest --test-dir "$dir" --output-on-failure -j2
}

scripts/build.sh
stage_done "build"
# includes and calls point down the layers (src/README.md)
node scripts/check_layers.mjs build/native
stage_done "layer check"
ctest_dir build/native-asan cmake -DWEFT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
stage_done "native C tests, SSE2, ASan+UBSan"
# -O2 without NDEBUG: optimized, internal asserts still on
ctest_dir build/native-scalar cmake -DWEFT_FORCE_SCALAR=ON -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS=-O2
stage_done "native C tests, scalar kernels"
# every C test under ThreadSanitizer: any report fails the run
# (tests/c/test_parallel_stress.c churns thread counts, nests, raises errors in workers)
ctest_dir build/native-tsan cmake -DWEFT_TSAN=ON -DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=-O1 -g"
stage_done "native C tests, ThreadSanitizer"
for threads in ON OFF; do
  variant=threads
  [ "$threads" = ON ] || variant=nothreads
  ctest_dir "build/wasm-tests-$variant" emcmake cmake -DWEFT_WASM_TESTS=ON -DWEFT_WASM_THREADS="$threads" \
    -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS=-O2
  stage_done "wasm C tests, $variant"
done
# two test files at a time: most JS tests use one core (Node's default runs one file at a time on 2 cores)
node --test --test-concurrency=2 tests/js/*.test.mjs
stage_done "JS tests"
# the PyTorch fixture replays on a weft-simd built with AddressSanitizer
bash scripts/asan-wasm.sh
stage_done "wasm ASan fixture replays"
# every committed crash replayed, then 4 s of fuzzing per target (seeded)
node scripts/fuzz.mjs --time 4 --seed 1
stage_done "fuzz targets"
node --test tests/browser/*.test.mjs
stage_done "browser tests"
echo "test: all passed ($((SECONDS - total_start)) s)"
