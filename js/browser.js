// Browser entry point: the ES6 Emscripten glue. The threaded variant needs
// SharedArrayBuffer, which pages only get when cross-origin isolated (served
// with COOP: same-origin and COEP: require-corp); otherwise weft-simd runs,
// and weft-scalar where the engine has no wasm SIMD.
//
// The .wasm is fetched here (not by the glue) so that an HTML error page or a
// missing file gives an error naming its URL. pthreads are started by the
// glue with new Worker(<url of weft-simd-threads.worker.js>): no blob: URLs,
// so a Content-Security-Policy without blob: in worker-src works.
import { createApi, WeftError } from './core.js';
import { createWorkerApi } from './worker-client.js';
import {
  binaryFor, checkWasmBytes, fileUrl, guardStartup, initCached, mark, moduleOptions,
} from './loader.js';

export { WeftError };

// One literal new URL(...) and import(...) per variant so bundlers see every
// file and rewrite the URLs to their hashed names.
const WASM_URL = {
  'simd-threads': () => new URL('./weft-simd-threads.wasm', import.meta.url),
  simd: () => new URL('./weft-simd.wasm', import.meta.url),
  scalar: () => new URL('./weft-scalar.wasm', import.meta.url),
};
const GLUE = {
  'simd-threads': () => import('./weft-simd-threads.js'),
  simd: () => import('./weft-simd.js'),
  scalar: () => import('./weft-scalar.js'),
};

// The response for url, or an error naming it.
async function fetchOk(url) {
  let res;
  try {
    res = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new WeftError('InvalidArgument', `init: fetching ${url} failed: ${e.message}`);
  }
  if (!res.ok) throw new WeftError('InvalidArgument', `init: fetching ${url} failed: HTTP ${res.status}`);
  return res;
}

// Compiled while the response streams in where the server sends it as
// application/wasm (what compileStreaming requires); otherwise, or if that
// fails, from the bytes, whose check names the URL in its error.
async function compileWasm(url) {
  const res = await fetchOk(url);
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
  if (typeof WebAssembly.compileStreaming === 'function' && type === 'application/wasm') {
    try {
      return await WebAssembly.compileStreaming(res);
    } catch { /* the bytes' check below says what is wrong */ }
    return WebAssembly.compile(checkWasmBytes(await (await fetchOk(url)).arrayBuffer(), url));
  }
  return WebAssembly.compile(checkWasmBytes(await res.arrayBuffer(), url));
}

async function load(opts, variant) {
  const file = `weft-${variant}.wasm`;
  const given = binaryFor(opts, variant);
  // (the base is cut from import.meta.url by hand: bundlers would take a
  // new URL('./', import.meta.url) for an asset and bundle the directory index)
  const base = String(import.meta.url).replace(/[^/]*$/, '');
  const url = given ? null : fileUrl(file, opts, base) ?? WASM_URL[variant]().href;
  // the .wasm compiles while the glue is imported
  const compiled = given ? WebAssembly.compile(checkWasmBytes(given, `wasmBinary (${file})`)) : compileWasm(url);
  compiled.catch(() => {}); // awaited below; a failure is reported there
  let glue;
  try {
    glue = await GLUE[variant]();
    mark('glue');
  } catch (e) {
    await compiled; // a missing .wasm is the clearer error
    throw e;
  }
  await compiled;
  mark('compiled');
  const { opts: moduleOpts, failed } = moduleOptions(async (info) => {
    const module = await compiled;
    return { module, instance: await WebAssembly.instantiate(module, info) };
  });
  // The worker script: wasmPaths/locateFile may move it; by default the glue
  // finds it with new URL(..., import.meta.url).
  const workerFile = `weft-${variant}.worker.js`;
  if (opts.locateFile || (opts.wasmPaths !== undefined && fileUrl(workerFile, opts, '') !== null)) {
    moduleOpts.locateFile = (path, prefix) => fileUrl(path, opts, prefix) ?? prefix + path;
  }
  const M = await guardStartup(moduleOpts, Promise.race([glue.default(moduleOpts), failed]), `weft-${variant}`);
  return { M, file: url ?? file };
}

/** Loads (once per variant and paths) and returns the weft API. */
export async function init(options) {
  return initCached(options, load, createApi);
}

/**
 * Worker mode: weft runs in a dedicated module Worker, so the page's main
 * thread never blocks on a kernel; the same API with async results.
 */
export async function initWorker(options) {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const endpoint = {
    post: (msg, transfer) => w.postMessage(msg, transfer),
    onMessage: (cb) => w.addEventListener('message', (e) => cb(e.data)),
    terminate: () => w.terminate(),
    onDeath: (cb) => w.addEventListener('error', (e) => cb(e.message ?? 'error')),
  };
  const failed = new Promise((_, reject) => w.addEventListener('error', (e) =>
    reject(new WeftError('InternalError', `initWorker: the worker failed to start: ${e.message ?? 'error'}`))));
  try {
    return await Promise.race([createWorkerApi(endpoint, options), failed]);
  } catch (e) {
    w.terminate();
    throw e;
  }
}
