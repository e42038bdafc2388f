#!/usr/bin/env bash
# The PyTorch fixture replays through the JS API on a weft-simd built with
# AddressSanitizer: the native ASan stage sees only the C tests, and a heap
# overflow that a replay reaches (sort's line buffer was one) shows up in
# the wasm build as a silent corruption or a trap far from its cause.
#   bash scripts/asan-wasm.sh [--build-only | --no-build] [test files...]
#   (default files: tests/js/*fixtures*.test.mjs)
# Builds build/wasm-asan (weft-simd, -fsanitize=address, the build id of
# dist/, or $WEFT_BUILD_ID with --build-only, which needs no dist/: npm test
# builds it while other stages run), stages a copy of the package in
# build/asan-pkg with that variant in place of dist/weft-simd.*, and runs the
# tests there on the simd variant only (WEFT_TEST_VARIANTS=simd), two files
# at a time. Only the Node glue is linked (the tests load nothing else; the
# browser glue would be a second -O3 link of the same .wasm). An ASan report
# aborts the module: the test fails with the report on stderr. A build id
# that is not dist/'s fails every test at init.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

step=all
case "${1:-}" in
  --build-only) step=build; shift ;;
  --no-build) step=run; shift ;;
esac

dir=build/wasm-asan
if [ "$step" != run ]; then
  id="${WEFT_BUILD_ID:-}"
  if [ "$step" = all ] || [ -z "$id" ]; then
    id="$(node -e 'import("./dist/build-id.js").then((m) => console.log(m.BUILD_ID))')"
  fi
  weft_quiet emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWEFT_WASM_THREADS=OFF -DWEFT_WASM_SIMD=ON \
    -DWEFT_BUILD_ID="$id" -DCMAKE_C_FLAGS=-fsanitize=address \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -sINITIAL_MEMORY=536870912"
  weft_quiet cmake --build "$dir" --target weft-simd-node -j"${WEFT_JOBS:-2}"
  [ "$step" = all ] || exit 0
fi

pkg=build/asan-pkg
rm -rf "$pkg"
mkdir -p "$pkg/tests"
cp -r package.json js dist demo "$pkg/"
cp -r tests/js tests/fixtures "$pkg/tests/"
ln -s "$WEFT_ROOT/node_modules" "$pkg/node_modules"
cp "$dir/node/weft-simd.wasm" "$pkg/dist/"
cp "$dir/node/weft-simd.js" "$pkg/dist/node/"
# dist's browser glue does not match this .wasm: nothing may load it
rm "$pkg/dist/weft-simd.js"

if [ "$#" -eq 0 ]; then
  set -- tests/js/*fixtures*.test.mjs
fi
files=()
for f in "$@"; do files+=("${f#"$WEFT_ROOT/"}"); done
cd "$pkg"
WEFT_TEST_VARIANTS=simd node --test --test-concurrency=2 "${files[@]}"
