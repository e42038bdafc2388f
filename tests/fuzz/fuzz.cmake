# libFuzzer targets: one executable per tests/fuzz/fuzz_*.c, linked with
# -fsanitize=fuzzer. Needs clang with its fuzzer runtime (Debian: the clang
# and libclang-rt-dev packages, which scripts/bootstrap.sh installs); without
# it configuring fails, saying so.
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "weft: WEFT_FUZZ needs clang (configure with -DCMAKE_C_COMPILER=clang); "
    "the compiler is ${CMAKE_C_COMPILER_ID}")
endif()
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
check_c_source_compiles("
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) { (void)d; (void)n; return 0; }"
  WEFT_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT WEFT_HAVE_LIBFUZZER)
  message(FATAL_ERROR "weft: ${CMAKE_C_COMPILER} cannot link -fsanitize=fuzzer: libFuzzer is missing "
    "(Debian: apt-get install clang libclang-rt-dev)")
endif()

function(weft_fuzz_targets)
  file(GLOB fuzz_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
  foreach(src ${fuzz_sources})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests/fuzz)
    target_compile_options(${name} PRIVATE ${WEFT_WARNINGS})
    target_compile_definitions(${name} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
    target_link_libraries(${name} PRIVATE weft)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  endforeach()
endfunction()
