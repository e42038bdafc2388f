#!/usr/bin/env bash
# Builds the two wasm variants into dist/:
#   weft-simd-threads  -msimd128 -pthread (needs SharedArrayBuffer)
#   weft-simd          -msimd128, single-threaded
# Each variant is linked twice from the same objects: ES6 glue for browsers
# (dist/weft-<v>.js) and classic glue for Node (dist/node/weft-<v>.js, in a
# {"type":"commonjs"} folder so its pthread worker script loads as CommonJS).
# Both links must produce the same .wasm, which dist/ then holds once.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

mkdir -p dist/node
printf '{ "type": "commonjs" }\n' > dist/node/package.json
for variant in simd-threads simd; do
  dir="build/wasm-$variant"
  threads=OFF
  [ "$variant" = simd-threads ] && threads=ON
  weft_quiet emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWEFT_WASM_THREADS="$threads"
  weft_quiet cmake --build "$dir" -j2
  name="weft-$variant"
  if ! cmp -s "$dir/node/$name.wasm" "$dir/es6/$name.wasm"; then
    echo "build-wasm: $dir/node/$name.wasm and $dir/es6/$name.wasm differ" >&2
    exit 1
  fi
  cp "$dir/es6/$name.js" "$dir/es6/$name.wasm" dist/
  cp "$dir/node/$name.js" dist/node/
  if [ -f "$dir/es6/$name.worker.js" ]; then
    cp "$dir/es6/$name.worker.js" dist/
    cp "$dir/node/$name.worker.js" dist/node/
  fi
done
