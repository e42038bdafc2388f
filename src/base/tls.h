/* Thread-local storage, or plain static storage in a wasm build without
 * pthreads: wasm-ld (clang 14) refuses TLS in objects built with
 * -mbulk-memory but without atomics, and one thread needs none. */
#ifndef WEFT_BASE_TLS_H
#define WEFT_BASE_TLS_H

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define WEFT_THREAD_LOCAL
#else
#define WEFT_THREAD_LOCAL _Thread_local
#endif

#endif
