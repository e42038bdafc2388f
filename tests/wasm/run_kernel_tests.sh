#!/bin/sh
# Build the kernel and parallel C tests with emcc (wasm SIMD; with and
# without pthreads) and run them under node. Kernels are compiled twice, as
# kernels.cmake does: wasm128 (-msimd128) and scalar (WEFT_VEC_FORCE_SCALAR).
# Usage: tests/wasm/run_kernel_tests.sh [outdir]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-/tmp/weft-wasm-kernel-tests}
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
mkdir -p "$OUT"
CFLAGS="-O2 -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -msimd128 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I$ROOT/include -I$ROOT/src -I$ROOT/tests/c"
KERNELS="copy cast transpose vbinary vcmp vunary"
ONCE="$ROOT/src/kernels/kernels.c $ROOT/src/kernels/cast_ref.c $ROOT/src/kernels/transpose_blocked.c"
fail=0
for variant in threads nothreads; do
  if [ $variant = threads ]; then
    VF="-pthread -mbulk-memory"; LF="-pthread -sPTHREAD_POOL_SIZE=4 -sINITIAL_MEMORY=128MB -sEXIT_RUNTIME=1 -sENVIRONMENT=node,worker"
  else
    # no -mbulk-memory here: wasm-ld 14 rejects _Thread_local (src/core/error.c)
    # with bulk memory but without atomics
    VF=""; LF="-sINITIAL_MEMORY=128MB -sENVIRONMENT=node"
  fi
  objs=""
  for k in $KERNELS; do
    emcc $CFLAGS $VF -c "$ROOT/src/kernels/$k.c" -o "$OUT/$k.wasm128.$variant.o"
    emcc $CFLAGS $VF -DWEFT_VEC_FORCE_SCALAR -c "$ROOT/src/kernels/$k.c" -o "$OUT/$k.scalar.$variant.o"
    objs="$objs $OUT/$k.wasm128.$variant.o $OUT/$k.scalar.$variant.o"
  done
  for t in test_kernels_copy test_kernels_cast test_kernels_transpose test_kernels_elementwise test_parallel; do
    emcc $CFLAGS $VF -DWEFT_KERNELS_HAVE_WASM128 "$ROOT/tests/c/$t.c" $ONCE $objs \
      "$ROOT"/src/core/*.c "$ROOT/src/parallel/parallel.c" $LF -o "$OUT/$t.$variant.js"
    printf '%s (%s): ' "$t" "$variant"
    if ! (cd "$OUT" && node --no-experimental-fetch "$t.$variant.js" 2>&1 | tail -n 5); then fail=1; fi
  done
done
exit $fail
