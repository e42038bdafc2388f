#!/usr/bin/env bash
# npm run build: the native library, both wasm variants and the JS API, into
# build/ and dist/.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

# The files made from the op tables (committed; tests/js/optable.test.mjs checks them)
node src/ops/gen_elementwise.mjs
node scripts/gen_types.mjs
weft_quiet cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF
weft_quiet cmake --build build/native -j"${WEFT_JOBS:-2}"
scripts/build-wasm.sh
cp js/*.js js/*.d.ts dist/
mkdir -p dist/nn && cp js/nn/*.js dist/nn/
mkdir -p dist/models && cp js/models/*.js js/models/*.d.ts dist/models/
mv dist/build-id.js.new dist/build-id.js
# the API reference, made from the built API (tests/js/api-docs.test.mjs checks it)
node scripts/gen_api_docs.mjs
echo "build: dist/ is ready"
