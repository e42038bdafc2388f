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
#
# The stages run in WEFT_TEST_LANES lanes at once (default 2 on 2 or more
# cores), each stage with WEFT_JOBS = cores / lanes build and test jobs, so a
# stage's serial parts (configuring, linking, one fuzz target, the last slow
# test of a ctest run) leave no core idle: a lane takes the next stage not
# yet taken, in the order below; the stages that need dist/ (layer check, JS,
# wasm ASan, fuzz, browser) come last and wait for the build. Each stage's
# output goes to build/test-logs/<stage>.log and is printed when the stage
# ends, in the order below, followed by its line "test: <stage> (<s> s)"
# (its own wall time). The first stage to fail ends the run: its output is
# printed, the other lanes are stopped, and the run exits with its status.
# build/test-logs/times.txt lists each stage's wall and CPU (user+sys) time.
# WEFT_TEST_LANES=1 runs the stages one after the other at -j2, as before.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cd "$WEFT_ROOT"

total_start=$SECONDS
cores="$(nproc 2>/dev/null || echo 2)"
lanes="${WEFT_TEST_LANES:-$((cores >= 2 ? 2 : 1))}"
if [ "$lanes" -gt 1 ]; then
  WEFT_JOBS="${WEFT_JOBS:-$((cores / lanes > 1 ? cores / lanes : 1))}"
else
  WEFT_JOBS="${WEFT_JOBS:-2}"
fi
export WEFT_JOBS
# the generated files first (build.sh makes them again, then a no-op): the
# C stages compile src/ beside the build
node src/ops/gen_elementwise.mjs
node scripts/gen_types.mjs
# one build id for dist/ and the wasm ASan build (scripts/build-wasm.sh)
if [ -z "${WEFT_BUILD_ID:-}" ]; then
  WEFT_BUILD_ID="$(node -p 'require("./package.json").version')+$(git rev-parse --short HEAD 2>/dev/null || echo nogit)"
fi
export WEFT_BUILD_ID

# Configures, builds and runs ctest in one build directory.
ctest_dir() {
  local dir="$1"
  shift
  weft_quiet "$@" -S . -B "$dir"
  weft_quiet cmake --build "$dir" -j"$WEFT_JOBS"
  ctest --test-dir "$dir" --output-on-failure -j"$WEFT_JOBS"
}

# The stages, in the order lanes take them: the C stages first (the longest
# first), then the ones that need dist/.
STAGES=(build native_tsan native_asan wasm_threads native_scalar wasm_nothreads asan_build
  asan_replays fuzz js browser layers)
declare -A TITLE=(
  [build]="build"
  [layers]="layer check"
  [native_asan]="native C tests, SSE2, ASan+UBSan"
  [native_scalar]="native C tests, scalar kernels"
  [native_tsan]="native C tests, ThreadSanitizer"
  [wasm_threads]="wasm C tests, threads"
  [wasm_nothreads]="wasm C tests, nothreads"
  [js]="JS tests"
  [asan_replays]="wasm ASan fixture replays"
  [fuzz]="fuzz targets"
  [browser]="browser tests"
)
# printed in this order (the order the stages ran in before lanes); a stage
# with no title is printed as part of the next one (its output first, its
# time added)
PRINT_ORDER=(build layers native_asan native_scalar native_tsan wasm_threads wasm_nothreads
  js asan_build asan_replays fuzz browser)
[ "$lanes" -gt 1 ] || STAGES=("${PRINT_ORDER[@]}")
declare -A NEEDS=([layers]=build [js]=build [asan_replays]="build asan_build" [fuzz]=build [browser]=build)
# WEFT_TEST_STAGES="native_tsan js" runs only those stages (a stage left out
# counts as done: dist/ must be there when build is left out); npm test runs
# them all.
if [ -n "${WEFT_TEST_STAGES:-}" ]; then
  declare -A picked=()
  for s in $WEFT_TEST_STAGES; do
    [ -n "${TITLE[$s]+x}" ] || [ "$s" = asan_build ] || { echo "test: no stage $s (${STAGES[*]})" >&2; exit 2; }
    picked[$s]=1
    [ "$s" != asan_replays ] || picked[asan_build]=1
  done
  keep() { local out=() s; for s in "$@"; do [ -z "${picked[$s]:-}" ] || out+=("$s"); done; echo "${out[@]}"; }
  read -r -a STAGES <<< "$(keep "${STAGES[@]}")"
  read -r -a PRINT_ORDER <<< "$(keep "${PRINT_ORDER[@]}")"
  for s in "${!NEEDS[@]}"; do
    needs=()
    for d in ${NEEDS[$s]}; do [ -z "${picked[$d]:-}" ] || needs+=("$d"); done
    NEEDS[$s]="${needs[*]}"
  done
fi

stage_build() { scripts/build.sh; }
# includes and calls point down the layers (src/README.md)
stage_layers() { node scripts/check_layers.mjs build/native; }
stage_native_asan() { ctest_dir build/native-asan cmake -DWEFT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug; }
# -O2 without NDEBUG: optimized, internal asserts still on
stage_native_scalar() {
  ctest_dir build/native-scalar cmake -DWEFT_FORCE_SCALAR=ON -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS=-O2
}
# every C test under ThreadSanitizer: any report fails the run
# (tests/c/test_parallel_stress.c churns thread counts, nests, raises errors in workers)
stage_native_tsan() {
  ctest_dir build/native-tsan cmake -DWEFT_TSAN=ON -DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=-O1 -g"
}
wasm_c_tests() {
  ctest_dir "build/wasm-tests-$1" emcmake cmake -DWEFT_WASM_TESTS=ON -DWEFT_WASM_THREADS="$2" \
    -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS=-O2
}
stage_wasm_threads() { wasm_c_tests threads ON; }
stage_wasm_nothreads() { wasm_c_tests nothreads OFF; }
# two test files at a time: most JS tests use one core (Node's default runs one file at a time on 2 cores)
stage_js() { node --test --test-concurrency=2 tests/js/*.test.mjs; }
# the PyTorch fixture replays on a weft-simd built with AddressSanitizer
# (built while other stages run: it needs only the build id)
stage_asan_build() { bash scripts/asan-wasm.sh --build-only; }
stage_asan_replays() { bash scripts/asan-wasm.sh --no-build; }
# every committed crash replayed, then 4 s of fuzzing per target (seeded)
stage_fuzz() { node scripts/fuzz.mjs --time 4 --seed 1; }
stage_browser() { node --test tests/browser/*.test.mjs; }

logs=build/test-logs
rm -rf "$logs"
mkdir -p "$logs"

# Runs one stage, its stdout and stderr into <stage>.out and .err; writes
# "<status> <wall s> <cpu s>" to <stage>.status when it ends. The stage runs
# in a subshell with -e, as a background job so that -e holds in it.
run_stage() {
  local s="$1" t0=$SECONDS rc=0 cpu=0
  (
    set -e
    "stage_$s"
    times > "$logs/$s.times"
  ) > "$logs/$s.out" 2> "$logs/$s.err" &
  wait $! || rc=$?
  if [ -f "$logs/$s.times" ]; then
    # the second line of `times`: the stage's processes, "XmY.YYYs XmY.YYYs"
    cpu="$(sed -n 2p "$logs/$s.times" | awk '{ n = 0; for (i = 1; i <= 2; i++) {
      split($i, p, "m"); n += p[1] * 60 + p[2] } printf "%.1f", n }')"
  fi
  echo "$rc $((SECONDS - t0)) $cpu" > "$logs/$s.status.new"
  mv "$logs/$s.status.new" "$logs/$s.status"
}

# Waits for the stages $s needs; fails when one of them failed.
wait_needs() {
  local d rc
  for d in ${NEEDS[$1]:-}; do
    until [ -f "$logs/$d.status" ]; do sleep 1; done
    read -r rc _ < "$logs/$d.status"
    [ "$rc" -eq 0 ] || return 1
  done
}

# A lane: takes the next stage no lane has taken (mkdir is the atomic claim)
# and runs it, until none is left or one fails. (run_stage is not called in
# an `||` list: that would turn -e off inside the stage.)
lane() {
  set +m
  local s rc
  for s in "${STAGES[@]}"; do
    mkdir "$logs/$s.claim" 2>/dev/null || continue
    wait_needs "$s" || return 0
    run_stage "$s"
    read -r rc _ < "$logs/$s.status"
    [ "$rc" -eq 0 ] || return 0
  done
}

# Each lane in its own process group (job control on while they start), so
# that a failure stops every process of the other lanes.
lane_pids=()
set -m
for ((i = 0; i < lanes; i++)); do
  lane < /dev/null &
  lane_pids+=($!)
done
set +m
stop_lanes() {
  local p
  for p in "${lane_pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_lanes EXIT

print_stage() {
  cat "$logs/$1.out"
  cat "$logs/$1.err" >&2
}

# A failed stage: its output, then the run ends with its status.
fail_stage() {
  local rc
  read -r rc _ < "$logs/$1.status"
  print_stage "$1"
  stop_lanes
  trap - EXIT
  exit "$rc"
}

printf 'stage\twall_s\tcpu_s\n' > "$logs/times.txt"
part_secs=0
for s in "${PRINT_ORDER[@]}"; do
  until [ -f "$logs/$s.status" ]; do
    # a stage later in the order that failed ends the run now
    for f in "$logs"/*.status; do
      [ -e "$f" ] || continue
      read -r rc _ < "$f"
      [ "$rc" -eq 0 ] || fail_stage "$(basename "$f" .status)"
    done
    sleep 1
  done
  read -r rc secs cpu < "$logs/$s.status"
  [ "$rc" -eq 0 ] || fail_stage "$s"
  print_stage "$s"
  printf '%s\t%s\t%s\n' "$s" "$secs" "$cpu" >> "$logs/times.txt"
  part_secs=$((part_secs + secs))
  if [ -n "${TITLE[$s]:-}" ]; then
    echo "test: ${TITLE[$s]} ($part_secs s)"
    part_secs=0
  fi
done
trap - EXIT
wait
echo "test: all passed ($((SECONDS - total_start)) s)"
