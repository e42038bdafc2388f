// Bench-only: lets tfjs-wasm start its threaded build (XNNPACK on a
// pthreadpool) in Node, so a 2-thread bench row sets weft's 2 threads beside
// tfjs's 2 threads. In a browser with COOP/COEP none of this is needed.
//
// Why tfjs refuses in Node, and what is changed here (nothing in tfjs itself):
// - its WASM_HAS_MULTITHREAD_SUPPORT flag answers false whenever IS_NODE:
//   the flag is set true (Node has SharedArrayBuffer and wasm threads);
// - it hands Emscripten the pthread worker script and its own main script as
//   Blobs behind `blob:` URLs, which worker_threads cannot start nor
//   importScripts read: the text of every Blob built is recorded, and
//   URL.createObjectURL of a recorded Blob returns a temp file holding that
//   text; the main script Blob that Emscripten posts to each worker is swapped
//   for its file path (the worker imports a string as a path);
// - the main script is the factory's source cut out of tfjs's Node bundle,
//   so it names the bundle's module-scope requires (require$$0 = fs, ...):
//   its temp file starts with those same requires;
// - XNNPACK's pool is capped at os.cpus().length / 2 (meant to skip
//   hyperthreads): os.cpus() reports twice the cores while tfjs initialises.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

const texts = new WeakMap(); // Blob -> its text (string parts only, as tfjs builds them)
const files = new Map(); // temp file -> Blob
let dir = null;

// The bundle's `var require$$N = require('m');` lines, for the main script's preamble.
function bundleRequires(peerRequire) {
  const src = readFileSync(peerRequire.resolve('@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.node.js'), 'utf8');
  const lines = src.match(/^var (require\$\$\d+|commonjsGlobal) = .*$/gm) ?? [];
  return lines.join('\n');
}

function install(preamble) {
  const NodeBlob = globalThis.Blob;
  globalThis.Blob = class RecordedBlob extends NodeBlob {
    constructor(parts = [], opts) {
      super(parts, opts);
      if (parts.every((p) => typeof p === 'string')) texts.set(this, parts.join(''));
    }
  };
  const createObjectURL = URL.createObjectURL;
  URL.createObjectURL = (blob) => {
    if (!texts.has(blob)) return createObjectURL(blob);
    dir ??= mkdtempSync(join(tmpdir(), 'tfjs-threads-'));
    const file = join(dir, `blob${files.size}.js`);
    const text = texts.get(blob);
    // the main script (not the worker script) needs the bundle's requires in scope
    writeFileSync(file, text.startsWith('var WasmBackendModule') ? `${preamble}\n${text}` : text);
    files.set(file, blob);
    return file;
  };
  // Emscripten's 'load' message carries the main script Blob: send its file instead
  const postMessage = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg?.cmd === 'load' && msg.urlOrBlob instanceof NodeBlob && texts.has(msg.urlOrBlob)) {
      msg = { ...msg, urlOrBlob: URL.createObjectURL(msg.urlOrBlob) };
    }
    return postMessage.call(this, msg, ...rest);
  };
  process.on('exit', () => dir && rmSync(dir, { recursive: true, force: true }));
}

let installed = false;

// tfjs-core on its wasm backend with `threads` threads asked (the threaded
// build when threads > 1); returns { tf, backend, threads } with the count
// XNNPACK's pool really runs.
export async function tfjsWasmThreaded(peerRequire, threads) {
  const tf = peerRequire('@tensorflow/tfjs-core');
  const backend = peerRequire('@tensorflow/tfjs-backend-wasm');
  if (threads > 1) {
    if (!installed) install(bundleRequires(peerRequire));
    installed = true;
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
  }
  backend.setThreadsCount(threads);
  const cpus = os.cpus;
  os.cpus = () => [...cpus(), ...cpus()];
  try {
    await tf.setBackend('wasm');
    await tf.ready();
  } finally {
    os.cpus = cpus;
  }
  return { tf, backend, threads: backend.getThreadsCount() };
}
