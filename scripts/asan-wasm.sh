#!/usr/bin/env bash
# The PyTorch fixture replays through the JS API on a weft-simd built with
# AddressSanitizer: the native ASan stage sees only the C tests, and a heap
# overflow that a replay reaches (sort's line buffer was one) shows up in
# the wasm build as a silent corruption or a trap far from its cause.
#   bash scripts/asan-wasm.sh [test files...]   (default: tests/js/*fixtures*.test.mjs)
# Builds build/wasm-asan (weft-simd, -fsanitize=address, the build id of
# dist/), stages a copy of the package in build/asan-pkg with that variant
# in place of dist/weft-simd.*, and runs the tests there on the simd variant
# only (WEFT_TEST_VARIANTS=simd). An ASan report aborts the module: the test
# fails with the report on stderr.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

id="$(node -e 'import("./dist/build-id.js").then((m) => console.log(m.BUILD_ID))')"
dir=build/wasm-asan
weft_quiet emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWEFT_WASM_THREADS=OFF -DWEFT_WASM_SIMD=ON \
  -DWEFT_BUILD_ID="$id" -DCMAKE_C_FLAGS=-fsanitize=address \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -sINITIAL_MEMORY=536870912"
weft_quiet cmake --build "$dir" -j2

pkg=build/asan-pkg
rm -rf "$pkg"
mkdir -p "$pkg/tests"
cp -r package.json js dist demo "$pkg/"
cp -r tests/js tests/fixtures "$pkg/tests/"
ln -s "$WEFT_ROOT/node_modules" "$pkg/node_modules"
cp "$dir/es6/weft-simd.js" "$dir/es6/weft-simd.wasm" "$pkg/dist/"
cp "$dir/node/weft-simd.js" "$pkg/dist/node/"

if [ "$#" -eq 0 ]; then
  set -- tests/js/*fixtures*.test.mjs
fi
files=()
for f in "$@"; do files+=("${f#"$WEFT_ROOT/"}"); done
cd "$pkg"
WEFT_TEST_VARIANTS=simd node --test "${files[@]}"
