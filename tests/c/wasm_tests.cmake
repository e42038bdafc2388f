# The C tests as Node programs (included by the top-level CMakeLists.txt
# under emcmake with -DWEFT_WASM_TESTS=ON). src/wasm/wasm.cmake has already
# set the variant's compile flags (-msimd128 -mbulk-memory, plus -pthread
# when WEFT_WASM_THREADS=ON), so one build directory per variant:
#   emcmake cmake -S . -B build/wasm-tests-threads   -DWEFT_WASM_TESTS=ON -DWEFT_WASM_THREADS=ON
#   emcmake cmake -S . -B build/wasm-tests-nothreads -DWEFT_WASM_TESTS=ON -DWEFT_WASM_THREADS=OFF
#   cmake --build <dir> -j2 && ctest --test-dir <dir>
# Each test links to <name>.js + <name>.wasm and ctest runs `node <name>.js`;
# main's return value is the exit code. (Not through the toolchain's
# CMAKE_CROSSCOMPILING_EMULATOR: emcmake 3.1.6 sets it to
# `node --experimental-wasm-threads`, an option Node 20 refuses.)

find_program(WEFT_NODE NAMES node nodejs REQUIRED)
# The repository's package.json says "type": "module"; the glue (and its
# pthread worker script) is CommonJS.
file(WRITE ${CMAKE_BINARY_DIR}/package.json "{ \"type\": \"commonjs\" }\n")

set(WEFT_WASM_TEST_LINK_FLAGS
  # the objects keep their -O level (scripts/test.sh: -O2, asserts on); -O0
  # at link skips wasm-opt (5 s per test) and turns on the glue's ASSERTIONS
  # and stack-overflow checks
  -O0
  -sENVIRONMENT=node
  # main returning ends the process: exit() terminates the pthread workers,
  # which otherwise keep Node alive
  -sEXIT_RUNTIME=1
  # compile the .wasm synchronously from the file: Node's fetch cannot read
  # file paths
  -sWASM_ASYNC_COMPILATION=0
  # huge allocations must come back NULL (an OOM error), not abort
  -sINITIAL_MEMORY=64MB -sALLOW_MEMORY_GROWTH=1 -sABORTING_MALLOC=0
  -Wno-pthreads-mem-growth)
if(WEFT_WASM_THREADS)
  # the pool's workers (WEFT_WASM_POOL_SIZE) start with the module, so
  # pthread_create never waits for the event loop main() is blocking
  list(APPEND WEFT_WASM_TEST_LINK_FLAGS -pthread -sPTHREAD_POOL_SIZE=${WEFT_WASM_POOL_SIZE})
endif()

function(weft_wasm_test name)
  target_link_options(${name} PRIVATE ${WEFT_WASM_TEST_LINK_FLAGS})
  set_target_properties(${name} PROPERTIES SUFFIX ".js")
  add_test(NAME ${name} COMMAND ${WEFT_NODE} $<TARGET_FILE:${name}>)
  # a hang (a worker keeping Node alive) fails instead of blocking ctest
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
  # Every test runs in wasm today. One that cannot for a real reason (fork,
  # more than 2 GB) gets `set_tests_properties(<name> PROPERTIES DISABLED
  # TRUE)` here with that reason, so ctest lists it as "Not Run (Disabled)".
endfunction()
