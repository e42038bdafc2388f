#!/usr/bin/env bash
# npm test: build, run the native C tests under ASan+UBSan, then the JS tests.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

scripts/build.sh
weft_quiet cmake -S . -B build/native-asan -DWEFT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
weft_quiet cmake --build build/native-asan -j2
ctest --test-dir build/native-asan --output-on-failure -j2
node --test tests/js/*.test.mjs
node --test tests/browser/*.test.mjs
