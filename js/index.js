// Node entry point: loads the classic (CommonJS) Emscripten glue from
// node/ with the .wasm bytes read from disk, since the glue's fetch cannot
// read file paths. pthreads run on worker_threads.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createApi, WeftError } from './core.js';
import { createWorkerApi } from './worker-client.js';
import {
  binaryFor, checkWasmBytes, fileUrl, guardStartup, initCached, mark, moduleOptions,
} from './loader.js';

export { WeftError };

// Built artifacts sit next to this file in dist/; from the source tree (js/)
// they are in ../dist/.
const here = new URL('./', import.meta.url);
const artifacts = existsSync(new URL('./weft-simd.wasm', here)) ? here : new URL('../dist/', here);
const require = createRequire(import.meta.url);

// Emscripten's pool workers keep the event loop alive forever; unref them
// (and any worker loaded later) so a script exits when its own work is done.
// After the glue's worker.on('message'): Node refs a worker's port again
// when a 'message' listener is added.
function unrefWorkers(M) {
  const P = M.PThread;
  if (!P) return;
  for (const w of [...P.unusedWorkers, ...P.runningWorkers]) w.unref?.();
  const load = P.loadWasmModuleToWorker;
  P.loadWasmModuleToWorker = function loadUnrefWorker(worker, ...args) {
    const r = load.call(this, worker, ...args);
    worker.unref?.();
    return r;
  };
}

function toPath(u) {
  const s = String(u);
  return s.startsWith('file:') ? fileURLToPath(s) : s;
}

async function readWasm(opts, variant) {
  const file = `weft-${variant}.wasm`;
  const given = binaryFor(opts, variant);
  if (given) return { bytes: checkWasmBytes(given, `wasmBinary (${file})`), file };
  const url = fileUrl(file, opts, artifacts) ?? new URL(file, artifacts).href;
  if (/^https?:/.test(url)) {
    const res = await fetch(url);
    if (!res.ok) throw new WeftError('InvalidArgument', `init: fetching ${url} failed: HTTP ${res.status}`);
    return { bytes: checkWasmBytes(await res.arrayBuffer(), url), file };
  }
  const path = toPath(url);
  if (!existsSync(path)) {
    throw new WeftError('InvalidArgument', `init: ${path} does not exist (run npm run build, or fix wasmPaths)`);
  }
  return { bytes: checkWasmBytes(await readFile(path), path), file };
}

async function load(opts, variant) {
  const glue = new URL(`./node/weft-${variant}.js`, artifacts);
  if (!existsSync(glue)) {
    throw new WeftError('InvalidArgument',
      `init: weft-${variant} is not built (run npm run build); looked in ${fileURLToPath(artifacts)}`);
  }
  const { bytes, file } = await readWasm(opts, variant);
  mark('read');
  const factory = require(fileURLToPath(glue));
  mark('glue');
  const { opts: moduleOpts, failed } = moduleOptions((info) => WebAssembly.instantiate(bytes, info));
  const M = await guardStartup(moduleOpts, Promise.race([factory(moduleOpts), failed]), `weft-${variant}`);
  unrefWorkers(M);
  return { M, file };
}

/** Loads (once per variant and paths) and returns the weft API. */
export async function init(options) {
  return initCached(options, load, createApi);
}

/**
 * Worker mode: weft runs in a worker_threads Worker; same API, async results.
 * The worker keeps the process alive only while calls are pending.
 */
export async function initWorker(options) {
  const w = new Worker(new URL('./worker-node.js', import.meta.url));
  w.unref();
  const endpoint = {
    post: (msg, transfer) => w.postMessage(msg, transfer),
    onMessage: (cb) => w.on('message', cb),
    busy: () => w.ref(),
    idle: () => w.unref(),
    terminate: () => w.terminate(),
    onDeath: (cb) => {
      w.on('error', (e) => cb(e?.message ?? String(e)));
      w.on('exit', (code) => cb(`exit code ${code}`));
    },
  };
  const failed = new Promise((_, reject) => w.once('error', reject));
  try {
    return await Promise.race([createWorkerApi(endpoint, options), failed]);
  } catch (e) {
    await w.terminate();
    throw e;
  }
}
