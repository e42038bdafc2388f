// Variant choice, wt.backend, the build id check, bad .wasm files and the
// step-down chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, VARIANTS, WeftError } from './helpers.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const { BUILD_ID } = await import(new URL('../../dist/build-id.js', import.meta.url));

function runChild(mode) {
  const script = fileURLToPath(new URL('./env-child.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, mode], { timeout: 60000 }, (err, out, errOut) =>
      (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(JSON.parse(out))));
  });
}

function tmpWith(files) {
  const dir = mkdtempSync(join(tmpdir(), 'weft-wasm-'));
  for (const [name, content] of Object.entries(files)) {
    if (content === true) copyFileSync(join(dist, name), join(dir, name));
    else writeFileSync(join(dir, name), content);
  }
  return dir;
}

test('the build id is version+hash, in the JS and every .wasm', async () => {
  assert.match(BUILD_ID, /^\d+\.\d+\.\d+\+[0-9a-z]+$/);
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    assert.equal(wt.buildId, BUILD_ID);
  }
});

test('wt.backend describes the loaded variant', async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    const b = wt.backend;
    assert.equal(b.variant, variant);
    assert.equal(b.simd, variant !== 'scalar');
    assert.equal(b.threads, variant === 'simd-threads');
    assert.equal(b.crossOriginIsolated, null, 'Node has no cross-origin isolation');
    assert.match(b.reason, /requested/);
    // one Web Worker per extra thread the machine can run (4 at most), loaded after init() resolved
    const workers = variant === 'simd-threads' ? Math.max(1, wt.maxThreads() - 1) : 0;
    assert.equal(await wt.threadsReady(), workers);
    assert.equal(wt.backend.workers, workers);
    assert.ok(Object.isFrozen(b));
  }
  const auto = await init();
  assert.equal(auto.backend.variant, 'simd-threads');
  assert.equal(auto, await init({ variant: 'simd-threads' }), 'init() and init({ variant }) share a module');
});

test('init resolves before the pthread workers load; kernels run on the ones loaded so far', async () => {
  const wt = await init({ variant: 'simd-threads', wasmBinary: readFileSync(join(dist, 'weft-simd-threads.wasm')) });
  assert.ok(wt.maxThreads() >= 1 && wt.maxThreads() <= 5);
  const want = Math.max(1, Math.min(4, cpus().length - 1));
  // a parallel op before any worker has loaded runs on the calling thread, and right
  const a = wt.arange(1 << 20); // int64: the sums are exact
  const before = wt.backend.workers;
  assert.ok(before <= want);
  assert.equal(a.sum().item(), (1 << 20) * ((1 << 20) - 1) / 2);
  assert.equal(await wt.threadsReady(), want);
  assert.equal(wt.backend.workers, want);
  assert.equal(a.mul(2).sum().item(), (1 << 20) * ((1 << 20) - 1));
  a.dispose();
});

test('a .wasm from another build is refused with both ids', async () => {
  const bytes = readFileSync(join(dist, 'weft-simd.wasm'));
  const at = bytes.indexOf(Buffer.from(BUILD_ID));
  assert.ok(at > 0, 'the id is in the data section');
  const other = Buffer.from(bytes);
  other.write('9', at); // "0.1.0+abc" -> "9.1.0+abc"
  const otherId = '9' + BUILD_ID.slice(1);
  const dir = tmpWith({ 'weft-simd.wasm': other });
  try {
    await assert.rejects(init({ variant: 'simd', wasmPaths: dir }), (e) => e instanceof WeftError &&
      e.message.includes(`weft.js ${BUILD_ID} does not match`) && e.message.includes(otherId));
    await assert.rejects(init({ variant: 'simd', wasmBinary: other }), /does not match/);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('a file that is not wasm gives an error naming it', async () => {
  const html = '<!DOCTYPE html><html><body>404 Not Found</body></html>';
  const dir = tmpWith({ 'weft-simd.wasm': html });
  try {
    await assert.rejects(init({ variant: 'simd', wasmPaths: dir }), (e) => e instanceof WeftError &&
      e.message.includes(join(dir, 'weft-simd.wasm')) && /is not a WebAssembly module/.test(e.message) &&
      e.message.includes('<!DOCTYPE html>'));
    await assert.rejects(init({ variant: 'scalar', wasmPaths: dir }), /weft-scalar.wasm does not exist/);
    await assert.rejects(init({ variant: 'simd', wasmBinary: new Uint8Array(3) }),
      /wasmBinary \(weft-simd.wasm\) is not a WebAssembly module \(3 bytes/);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('a variant that fails to load steps down the chain', async () => {
  const dir = tmpWith({ 'weft-simd-threads.wasm': 'Not Found', 'weft-simd.wasm': true, 'weft-scalar.wasm': true });
  try {
    const wt = await init({ wasmPaths: dir });
    assert.equal(wt.backend.variant, 'simd');
    assert.match(wt.backend.reason, /weft-simd-threads failed: .*weft-simd-threads.wasm is not a WebAssembly module/);
    const t = wt.ones(2);
    assert.deepEqual(t.toArray(), [1, 1]);
    t.dispose();
    writeFileSync(join(dir, 'weft-simd.wasm'), '');
    const wt2 = await init({ wasmPaths: dir + '/' });
    assert.equal(wt2.backend.variant, 'scalar');
    writeFileSync(join(dir, 'weft-scalar.wasm'), 'x');
    const bad = join(dir, 'weft-scalar.wasm');
    await assert.rejects(init({ wasmPaths: { 'weft-simd-threads.wasm': bad, 'weft-simd.wasm': bad,
      'weft-scalar.wasm': bad } }), (e) =>
      e instanceof WeftError && /no weft variant could be loaded/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('wasmBinary: bytes for one variant, or a map', async () => {
  const bytes = readFileSync(join(dist, 'weft-scalar.wasm'));
  const a = await init({ variant: 'scalar', wasmBinary: bytes });
  assert.equal(a.backend.variant, 'scalar');
  assert.notEqual(a, await init({ variant: 'scalar' }), 'custom bytes are never cached');
  const b = await init({ wasmBinary: { 'simd-threads': new Uint8Array(8), simd: bytes.buffer.slice(0, 4) } });
  assert.equal(b.backend.variant, 'scalar');
  await assert.rejects(init({ wasmBinary: bytes }), /wasmBinary given as bytes needs a variant/);
  await assert.rejects(init({ wasmPaths: 3 }), /wasmPaths must be/);
  await assert.rejects(init({ locateFile: 'x' }), /locateFile must be a function/);
});

test('not cross-origin isolated: weft-simd, and one warning for threads: 4', async () => {
  const r = await runChild('not-isolated');
  assert.equal(r.backend.variant, 'simd');
  assert.equal(r.backend.threads, false);
  assert.equal(r.backend.crossOriginIsolated, false);
  assert.match(r.backend.reason, /not cross-origin isolated/);
  assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
  assert.match(r.warnings[0], /threads: 4.*single-threaded \(weft-simd\).*Cross-Origin-Opener-Policy: same-origin/);
  assert.equal(r.same, true);
  assert.deepEqual(r.values, [[0, 3], [1, 4], [2, 5]]);
});

test('no wasm SIMD: weft-scalar', async () => {
  const r = await runChild('no-simd');
  assert.equal(r.backend.variant, 'scalar');
  assert.equal(r.backend.simd, false);
  assert.equal(r.warnings.length, 1);
  assert.match(r.backend.reason, /no WebAssembly SIMD/);
  assert.deepEqual(r.values, [[0, 3], [1, 4], [2, 5]]);
});

test('the pthread glue starts workers from URLs, never blob:', () => {
  for (const f of ['weft-simd-threads.js', 'node/weft-simd-threads.js', 'weft-simd-threads.worker.js']) {
    const src = readFileSync(join(dist, f), 'utf8');
    assert.ok(!src.includes('createObjectURL'), f);
  }
  const es6 = readFileSync(join(dist, 'weft-simd-threads.js'), 'utf8');
  assert.match(es6, /new Worker\(new URL\("weft-simd-threads\.worker\.js",import\.meta\.url\)\)/);
});
