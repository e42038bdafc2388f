// Built by tests/js/vite.test.mjs into build/vite-app/out. weft's workers
// (worker mode, and the pthread workers of weft-simd-threads) load the
// Emscripten glue with dynamic import(), which Vite can only bundle into
// ES-format workers: apps set worker.format to 'es'.
export default {
  worker: { format: 'es' },
};
