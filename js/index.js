// Node entry point: loads the classic (CommonJS) Emscripten glue from
// node/ with the .wasm bytes read from disk, since the glue's fetch cannot
// read file paths.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { applyThreads, createApi, parseInitOptions, WeftError } from './core.js';

export { WeftError };

// Built artifacts sit next to this file in dist/; from the source tree (js/)
// they are in ../dist/.
const here = new URL('./', import.meta.url);
const artifacts = existsSync(new URL('./weft-simd.wasm', here)) ? here : new URL('../dist/', here);
const require = createRequire(import.meta.url);
const loaded = new Map();

// Emscripten's pool workers keep the event loop alive forever; unref them
// (and any worker added later) so a script exits when its own work is done.
function unrefWorkers(M) {
  const P = M.PThread;
  if (!P) return;
  for (const w of [...P.unusedWorkers, ...P.runningWorkers]) w.unref?.();
  const allocate = P.allocateUnusedWorker;
  P.allocateUnusedWorker = function allocateUnrefWorker(...args) {
    const r = allocate.apply(this, args);
    P.unusedWorkers[P.unusedWorkers.length - 1]?.unref?.();
    return r;
  };
}

async function load(variant) {
  const glue = new URL(`./node/weft-${variant}.js`, artifacts);
  const wasm = new URL(`./weft-${variant}.wasm`, artifacts);
  if (!existsSync(glue) || !existsSync(wasm)) {
    throw new WeftError('InvalidArgument',
      `init: weft-${variant} is not built (run npm run build); looked in ${fileURLToPath(artifacts)}`);
  }
  const factory = require(fileURLToPath(glue));
  const M = await factory({ wasmBinary: await readFile(wasm) });
  unrefWorkers(M);
  return createApi(M, { variant });
}

/** Loads (once per variant) and returns the weft API. */
export async function init(options) {
  const { variant = 'simd-threads', threads } = parseInitOptions(options);
  if (!loaded.has(variant)) {
    const p = load(variant);
    loaded.set(variant, p);
    p.catch(() => loaded.delete(variant));
  }
  const wt = await loaded.get(variant);
  applyThreads(wt, threads);
  return wt;
}
