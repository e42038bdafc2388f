// Browser entry point: the ES6 Emscripten glue. The threaded variant needs
// SharedArrayBuffer, which pages only get when cross-origin isolated (served
// with COOP: same-origin and COEP: require-corp); otherwise weft-simd runs.
import { applyThreads, createApi, parseInitOptions, WeftError } from './core.js';

export { WeftError };

const loaded = new Map();

function canUseThreads() {
  return typeof SharedArrayBuffer !== 'undefined' && globalThis.crossOriginIsolated === true;
}

// One literal import per variant so bundlers see both glue files; each glue
// finds its .wasm with new URL('weft-<variant>.wasm', import.meta.url).
async function load(variant, locateFile) {
  const glue = variant === 'simd-threads'
    ? await import('./weft-simd-threads.js')
    : await import('./weft-simd.js');
  const M = await glue.default(locateFile ? { locateFile } : {});
  return createApi(M, { variant });
}

/** Loads (once per variant) and returns the weft API. */
export async function init(options) {
  const { variant: asked, threads, locateFile } = parseInitOptions(options);
  if (asked === 'simd-threads' && !canUseThreads()) {
    throw new WeftError('InvalidArgument', "init: variant 'simd-threads' needs a cross-origin " +
      'isolated page (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp)');
  }
  const variant = asked ?? (canUseThreads() ? 'simd-threads' : 'simd');
  if (!loaded.has(variant)) {
    const p = load(variant, locateFile);
    loaded.set(variant, p);
    p.catch(() => loaded.delete(variant));
  }
  const wt = await loaded.get(variant);
  applyThreads(wt, threads);
  return wt;
}
