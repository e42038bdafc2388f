// Variant choice and load checks shared by the Node and browser entry points.
//
// The chain is weft-simd-threads -> weft-simd -> weft-scalar. A variant is
// skipped when the engine cannot run it (no SharedArrayBuffer / shared wasm
// memory, no wasm SIMD), and a variant that fails to load or instantiate
// hands over to the next one; wt.backend.reason says why the winner won.
import { BUILD_ID } from './build-id.js';
import { WeftError, didYouMean } from './core.js';
import { installNpy } from './npy.js';
import { installSafetensors } from './safetensors.js';

export const VARIANTS = ['simd-threads', 'simd', 'scalar'];

// (func (result v128) i32.const 0 i8x16.splat): valid only where the engine
// has fixed-width SIMD.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: () -> v128
  0x03, 0x02, 0x01, 0x00, // function section
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // code
]);

export function wasmSimdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// Shared wasm memory (wasm threads) and a SharedArrayBuffer to put it in. In
// browsers the page must also be cross-origin isolated.
export function threadSupport() {
  const isolated = typeof globalThis.crossOriginIsolated === 'boolean' ? globalThis.crossOriginIsolated : null;
  if (typeof SharedArrayBuffer === 'undefined') {
    return { ok: false, isolated, why: isolated === false
      ? 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin ' +
        'and Cross-Origin-Embedder-Policy: require-corp), so SharedArrayBuffer is unavailable'
      : 'SharedArrayBuffer is unavailable' };
  }
  if (isolated === false) {
    return { ok: false, isolated, why: 'the page is not cross-origin isolated (serve it with ' +
      'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)' };
  }
  try {
    const m = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    if (!(m.buffer instanceof SharedArrayBuffer)) throw new Error('not shared');
  } catch {
    return { ok: false, isolated, why: 'this engine has no WebAssembly threads (shared memory)' };
  }
  return { ok: true, isolated, why: '' };
}

export function parseInitOptions(opts) {
  if (opts === undefined || opts === null) opts = {};
  if (typeof opts !== 'object') {
    throw new WeftError('TypeError', `init(): options must be an object, not ${typeof opts}`);
  }
  const allowed = ['threads', 'variant', 'locateFile', 'wasmPaths', 'wasmBinary'];
  for (const k of Object.keys(opts)) {
    if (!allowed.includes(k)) {
      throw new WeftError('TypeError', `init() got an unexpected option '${k}'${didYouMean(k, allowed)}`);
    }
  }
  const { variant, locateFile, wasmPaths, wasmBinary } = opts;
  if (variant !== undefined && !VARIANTS.includes(variant)) {
    throw new WeftError('InvalidArgument',
      `init: unknown variant '${variant}' (expected ${VARIANTS.map((v) => `'${v}'`).join(', ')})`);
  }
  const threads = opts.threads ?? 'auto';
  if (threads !== 'auto' && !(Number.isInteger(threads) && threads >= 1)) {
    throw new WeftError('InvalidArgument',
      `init: threads must be a positive integer or 'auto', but got ${String(threads)}`);
  }
  if (locateFile !== undefined && typeof locateFile !== 'function') {
    throw new WeftError('TypeError', 'init: locateFile must be a function (path, prefix) => url');
  }
  if (wasmPaths !== undefined && typeof wasmPaths !== 'string' && !(wasmPaths instanceof URL) &&
      (wasmPaths === null || typeof wasmPaths !== 'object')) {
    throw new WeftError('TypeError',
      "init: wasmPaths must be a base URL/directory or an object { 'weft-simd.wasm': url, ... }");
  }
  if (wasmBinary !== undefined) {
    const isBytes = wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(wasmBinary);
    if (isBytes && variant === undefined) {
      throw new WeftError('InvalidArgument',
        "init: wasmBinary given as bytes needs a variant ('simd-threads', 'simd' or 'scalar'); " +
        'or pass { simd: bytes, ... }');
    }
    if (!isBytes && (wasmBinary === null || typeof wasmBinary !== 'object')) {
      throw new WeftError('TypeError', 'init: wasmBinary must be an ArrayBuffer, a Uint8Array or { variant: bytes }');
    }
  }
  return { variant, threads, locateFile, wasmPaths, wasmBinary };
}

// The variants to try, best first, and why the better ones were skipped.
export function planVariants(opts) {
  const simd = wasmSimdSupported();
  const th = threadSupport();
  if (opts.variant === 'simd-threads' && !th.ok) {
    throw new WeftError('InvalidArgument', `init: variant 'simd-threads' cannot run here: ${th.why}`);
  }
  if (opts.variant && opts.variant !== 'scalar' && !simd) {
    throw new WeftError('InvalidArgument', `init: variant '${opts.variant}' needs WebAssembly SIMD, ` +
      "which this engine lacks (use 'scalar')");
  }
  if (opts.variant) {
    return { chain: [opts.variant], skipped: [], simd, threads: th, reason: `variant '${opts.variant}' requested` };
  }
  const chain = [];
  const skipped = [];
  if (!simd) {
    skipped.push('weft-simd-threads and weft-simd: this engine has no WebAssembly SIMD');
  } else if (!th.ok) {
    skipped.push(`weft-simd-threads: ${th.why}`);
    chain.push('simd');
  } else {
    chain.push('simd-threads', 'simd');
  }
  chain.push('scalar');
  return { chain, skipped, simd, threads: th, reason: '' };
}

let warnedThreads = false;

// One console warning per page for "asked for threads, cannot have them".
export function warnThreads(opts, plan, chosen) {
  const asked = typeof opts.threads === 'number' && opts.threads > 1;
  if (!asked || chosen === 'simd-threads' || warnedThreads) return;
  warnedThreads = true;
  const why = plan.threads.ok ? plan.reason : plan.threads.why;
  console.warn(`weft: init({ threads: ${opts.threads} }) runs single-threaded (weft-${chosen}): ${why}.`);
}

// Resolves a file name against wasmPaths / locateFile / the default base.
export function fileUrl(name, opts, base) {
  const { wasmPaths, locateFile } = opts;
  if (wasmPaths !== undefined && typeof wasmPaths === 'object' && !(wasmPaths instanceof URL)) {
    if (wasmPaths[name] !== undefined) return String(wasmPaths[name]);
  } else if (wasmPaths !== undefined) {
    const dir = String(wasmPaths);
    return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
  }
  if (locateFile) return locateFile(name, String(base));
  return null;
}

export function binaryFor(opts, variant) {
  const b = opts.wasmBinary;
  if (b === undefined) return null;
  if (b instanceof ArrayBuffer || ArrayBuffer.isView(b)) return variant === opts.variant ? b : null;
  return b[variant] ?? null;
}

// The first bytes of a .wasm are '\0asm' and version 1. Anything else (an
// HTML error page, a git-lfs pointer, a truncated download) is refused here
// with the URL in the message, not by the compiler with an opaque one.
export function checkWasmBytes(bytes, url) {
  const u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes)
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (u8.length >= 8 && magic.every((b, i) => u8[i] === b)) return u8;
  const head = new TextDecoder().decode(u8.subarray(0, 40)).replace(/\s+/g, ' ').trim();
  throw new WeftError('InvalidArgument', `init: ${url} is not a WebAssembly module ` +
    `(${u8.length} bytes${head ? `, starting with ${JSON.stringify(head)}` : ''})`);
}

// The JS files and the .wasm must come from one build.
export function checkBuildId(M, variant, file) {
  const wasmId = M._weft_build_id ? M.UTF8ToString(M._weft_build_id()) : 'unknown';
  const glueId = M.weftGlueBuildId ?? wasmId;
  if (BUILD_ID && wasmId !== BUILD_ID) {
    throw new WeftError('InvalidArgument', `init: weft.js ${BUILD_ID} does not match ${file} ${wasmId} ` +
      '(mixed files from two builds: reinstall or rebuild weft)');
  }
  if (glueId !== wasmId) {
    throw new WeftError('InvalidArgument',
      `init: weft-${variant}.js ${glueId} does not match ${file} ${wasmId} (mixed files from two builds)`);
  }
  return wasmId;
}

// Pool workers the glue started, and how many have the module loaded.
export function workerState(M) {
  const P = M.PThread;
  if (!P) return { pool: 0, loaded: 0 };
  const all = [...P.unusedWorkers, ...P.runningWorkers];
  return { pool: all.length, loaded: all.filter((w) => w.loaded).length };
}

// Emscripten 3.1.6 resolves its factory only after every pool worker loaded,
// and never rejects when one cannot start (a CSP without worker-src, a COEP-
// blocked or missing worker script): the promise would hang. The glue runs
// synchronously inside the factory call and makes its pool then, on the
// Module object we passed in, so the workers can be watched from here.
export function guardStartup(moduleObj, ready, what, timeoutMs = 30000) {
  const P = moduleObj.PThread;
  if (!P) return ready;
  let timer;
  const failed = new Promise((_, reject) => {
    const fail = (detail) => reject(new WeftError('InternalError',
      `init: a pthread worker of ${what} failed to start${detail ? `: ${detail}` : ''}`));
    for (const w of P.unusedWorkers) {
      if (typeof w.addEventListener === 'function') {
        w.addEventListener('error', (e) => fail(e?.message || 'worker error (blocked by a Content-Security-Policy, ' +
          'Cross-Origin-Embedder-Policy or a missing worker script?)'));
      } else if (typeof w.on === 'function') {
        w.on('error', (e) => fail(e?.message ?? String(e)));
      }
    }
    timer = setTimeout(() => fail(`not ready after ${timeoutMs} ms`), timeoutMs);
    timer.unref?.();
  });
  return Promise.race([ready, failed]).then((M) => {
    clearTimeout(timer);
    return M;
  }, (e) => {
    clearTimeout(timer);
    try { P.terminateAllThreads(); } catch { /* the pool is being dropped anyway */ }
    throw e;
  });
}

// Startup marks (performance.mark 'weft:<stage>'), read by
// bench/startup_bench.mjs for its breakdown of init().
export function mark(stage) {
  globalThis.performance?.mark?.(`weft:${stage}`);
}

// The factory's options from both entry points: the glue receives its
// instance from instantiate(info) (a Promise of { instance, module }: the
// entry point compiles the .wasm its own way), and the threaded glue makes
// no pthread worker before init() resolves (weftLazyWorkers: see
// src/wasm/wasm.cmake and startWorkers). `failed` rejects when instantiation
// fails, which the glue itself would never report.
export function moduleOptions(instantiate) {
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  failed.catch(() => {}); // raced by the caller; never an unhandled rejection
  const opts = {
    weftLazyWorkers: true,
    instantiateWasm(info, receive) {
      instantiate(info).then((r) => {
        mark('instantiated');
        receive(r.instance, r.module);
      }).catch(fail);
      return {};
    },
  };
  return { opts, failed };
}

// Starts the threaded glue's pthread workers in the background (about 30 ms
// of CPU each, which init() used to wait for), from a task after init()
// resolved so the caller's first ops do not share the CPU with them: C runs
// with the workers loaded so far (weft_set_worker_limit), fewer threads until
// the rest have loaded, never a wait. ready resolves with the count once all
// are loaded or one failed (the pool then keeps the ones that loaded).
export function startWorkers(M) {
  if (!M.weftStartWorkers) {
    return { ready: () => Promise.resolve(workerState(M).loaded), loaded: () => workerState(M).loaded };
  }
  M._weft_wasm_set_worker_limit(0);
  let loaded = 0;
  let done;
  const ready = new Promise((resolve) => { done = resolve; });
  setTimeout(() => {
    const target = M.weftStartWorkers((count) => {
      loaded = count;
      M._weft_wasm_set_worker_limit(count);
      if (count >= target) {
        mark('workers');
        done(count);
      }
    }, () => done(loaded));
  }, 0);
  // Node: the workers are unref'd (js/index.js) so a script need not wait for
  // them; one awaiting them keeps the process alive until they are loaded
  let settled = false;
  ready.then(() => { settled = true; });
  const whenReady = () => {
    if (!settled) {
      const keep = setInterval(() => {}, 1000);
      ready.then(() => clearInterval(keep));
    }
    return ready;
  };
  return { ready: whenReady, loaded: () => loaded };
}

// Tries each variant in turn; load(variant) returns { M, file }.
export async function loadChain(opts, load, finish) {
  const plan = planVariants(opts);
  const failures = [];
  for (const variant of plan.chain) {
    try {
      const { M, file } = await load(variant);
      mark('runtime');
      const buildId = checkBuildId(M, variant, file);
      const workers = startWorkers(M);
      const parts = [...plan.skipped, ...failures];
      const reason = plan.reason || (parts.length ? parts.join('; ') : `weft-${variant} is the best this engine runs`);
      const backend = {
        variant, simd: variant !== 'scalar', threads: variant === 'simd-threads',
        crossOriginIsolated: plan.threads.isolated, reason,
      };
      warnThreads(opts, { ...plan, reason }, variant);
      const api = installSafetensors(installNpy(finish(M, { variant, backend, buildId, workers })));
      mark('api');
      return api;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (opts.variant || (e instanceof WeftError && / does not match /.test(msg))) throw e;
      failures.push(`weft-${variant} failed: ${msg}`);
    }
  }
  throw new WeftError('InternalError', `init: no weft variant could be loaded: ${failures.join('; ')}`);
}

// One module per (variant, wasmPaths); an auto choice is cached under the
// variant it picked too, so init() and init({ variant }) share it. Bytes or
// a locateFile given by the caller are never cached.
const loaded = new Map();

function cacheKey(opts, variant = opts.variant ?? 'auto') {
  if (opts.wasmBinary !== undefined || opts.locateFile) return null;
  const paths = opts.wasmPaths;
  return JSON.stringify([variant, paths === undefined ? null
    : typeof paths === 'object' && !(paths instanceof URL) ? JSON.stringify(paths) : String(paths)]);
}

// init() of both entry points: load(opts, variant) -> { M, file } is theirs.
export async function initCached(options, load, finish) {
  mark('init');
  const opts = parseInitOptions(options);
  const key = cacheKey(opts);
  let p = key === null ? null : loaded.get(key);
  if (!p && key !== null && !opts.variant) p = loaded.get(cacheKey(opts, planVariants(opts).chain[0]));
  if (!p) {
    p = loadChain(opts, (v) => load(opts, v), finish);
    if (key !== null) {
      loaded.set(key, p);
      p.catch(() => loaded.delete(key));
    }
  }
  const wt = await p;
  const picked = cacheKey(opts, wt.variant);
  if (picked !== null && !loaded.has(picked)) loaded.set(picked, p);
  wt.setNumThreads(opts.threads === 'auto' ? wt.maxThreads() : opts.threads); // clamped, visible in wt.backend
  return wt;
}
