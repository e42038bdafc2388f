#!/usr/bin/env bash
# npm run build: the native library, both wasm variants and the JS API, into
# build/ and dist/.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF --log-level=WARNING >/dev/null
cmake --build build/native -j2 -- --no-print-directory >/dev/null
scripts/build-wasm.sh
cp js/*.js js/weft.d.ts dist/
echo "build: dist/ is ready"
