# Benchmarks: every bench/bench_*.c becomes an executable (not a test).
# Run e.g. ./build/bench_dispatch. bench_weft (the issue-5 workloads, also
# run in wasm by bench/run.mjs) adds bench/workloads.c.
file(GLOB WEFT_BENCHES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/bench_*.c)
foreach(bench_src ${WEFT_BENCHES})
  get_filename_component(bench_name ${bench_src} NAME_WE)
  add_executable(${bench_name} ${bench_src})
  target_include_directories(${bench_name} PRIVATE src)
  target_compile_options(${bench_name} PRIVATE ${WEFT_WARNINGS})
  target_compile_definitions(${bench_name} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
  target_link_libraries(${bench_name} PRIVATE weft)
endforeach()
if(TARGET bench_weft)
  target_sources(bench_weft PRIVATE ${CMAKE_CURRENT_LIST_DIR}/workloads.c)
endif()
