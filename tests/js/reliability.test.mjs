// Regression tests for the findings of the first reliability probe (issue 16):
// each failed before its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { createWorkerApi } from '../../js/worker-client.js';
import { counts, init, throwsWeft, VARIANTS, WeftError } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: toArray of zero-size tensors is cheap; a result too large for JS is a prompt WeftError`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const t0 = Date.now();
    const wide = wt.empty([0, 1e9]);
    assert.deepEqual(wide.toArray(), []);
    const three = wt.empty([3, 0, 5]);
    assert.deepEqual(three.toArray(), [[], [], []]);
    // a valid 128-byte .npy could ask for this: a billion empty arrays
    const tall = wt.empty([1e9, 0]);
    throwsWeft(() => tall.toArray(), 'InvalidArgument', /would make 1000000000 JS values .*data\(\)/);
    assert.equal(tall.data().length, 0);
    const big = wt.zeros([150e6], { dtype: 'uint8' });
    throwsWeft(() => big.toArray(), 'InvalidArgument', /shape \[150000000\].*data\(\)/);
    assert.ok(Date.now() - t0 < 5000, 'refused before building anything');
    for (const t of [wide, three, tall, big]) t.dispose();
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: a boxed call that fails while pushing its arguments keeps nothing alive`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const live = wt.ones(1000);
    const gone = wt.ones(1000);
    gone.dispose();
    throwsWeft(() => wt.ops.call('add', live, gone), undefined, /disposed/);
    live.dispose();
    // before the fix, the stack still held `live` until the next boxed call
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: an out= resize through one wrapper shows in another wrapper of the same tensor`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const x = wt.empty([0]);
    const c = x.contiguous(); // self: a second JS wrapper of one C tensor
    const d = x.to('float32');
    assert.equal(c.handle('test'), x.handle('test'));
    assert.equal(d.handle('test'), x.handle('test'));
    const a = wt.arange(0, 4, { dtype: 'float32' });
    wt.add(a, 1, { out: c });
    for (const t of [x, c, d]) {
      assert.deepEqual(t.shape, [4]);
      assert.equal(t.numel(), 4);
      assert.deepEqual(Array.from(t.data()), [1, 2, 3, 4]);
    }
    for (const t of [a, x, c, d]) t.dispose();
    assert.deepEqual(counts(wt), before);
  });
}

test('setNumThreads: integers >= 1 only; above maxThreads() clamped, and wt.backend says so', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const max = wt.maxThreads();
  for (const bad of [1.5, NaN, Infinity, '2', null]) throwsWeft(() => wt.setNumThreads(bad), 'TypeError');
  for (const bad of [0, -1, -(2 ** 32) + 2]) throwsWeft(() => wt.setNumThreads(bad), 'InvalidArgument', /at least 1/);
  wt.setNumThreads(2 ** 32 + 2); // used to wrap to 2 in C's int
  assert.equal(wt.getNumThreads(), max);
  assert.deepEqual({ ...wt.backend.threadClamp }, { requested: 2 ** 32 + 2, used: max });
  assert.equal(wt.backend.numThreads, max);
  wt.setNumThreads(1);
  assert.equal(wt.getNumThreads(), 1);
  assert.equal(wt.backend.threadClamp, null);
  assert.equal(wt.backend.numThreads, 1);
  assert.ok(Object.isFrozen(wt.backend));
  wt.setNumThreads(max);
});

test('worker mode: an argument that cannot be cloned rejects that call with a WeftError; the worker goes on', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const bad = ww.promoteTypes(() => 1, 'float32');
    await assert.rejects(bad, (e) => e instanceof WeftError && e.code === 'InvalidArgument' &&
      /promoteTypes: an argument cannot be sent to the worker/.test(e.message));
    const t = ww.ones(2, { dtype: Symbol('x') });
    await assert.rejects(t.toArray(), WeftError);
    assert.equal(await ww.promoteTypes('int32', 'float32'), 'float32');
  } finally {
    await ww.terminate(); // nothing left pending: resolves, and Node can exit
  }
});

// A fake endpoint stands in for a worker that dies with calls in flight.
test('worker mode: a dead worker rejects every pending call and every later one', async () => {
  let onMessage, onDeath;
  const posted = [];
  const endpoint = {
    post: (msg) => {
      posted.push(msg);
      if (msg.kind === 'init') queueMicrotask(() => onMessage({ id: msg.id, ok: true }));
    },
    onMessage: (cb) => { onMessage = cb; },
    onDeath: (cb) => { onDeath = cb; },
    terminate: async () => {},
  };
  const api = await createWorkerApi(endpoint, {});
  // (this file's worker-client.js has its own WeftError class: check by name)
  const died = (e) => e.name === 'WeftError' && e.code === 'InternalError' &&
    /the worker stopped \(exit code 1\)/.test(e.message);
  const inFlight = [api.memory(), api.ones(3).toArray()].map((p) => assert.rejects(p, died));
  onDeath('exit code 1');
  await Promise.all(inFlight);
  await assert.rejects(api.getNumThreads(), died);
  assert.ok(posted.length >= 3);
  await api.terminate();
});

// A .npy v1.0 file with this header dict and these data bytes.
function npyWith(dict, data = new Uint8Array(0)) {
  let header = dict;
  while ((10 + header.length + 1) % 64) header += ' ';
  header += '\n';
  const out = new Uint8Array(10 + header.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(data, 10 + header.length);
  return out;
}

test('fromNpy refuses a __proto__ key and a repeated key', async () => {
  const wt = await init({ variant: 'simd' });
  const before = counts(wt);
  const ok = wt.fromNpy(npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(4)));
  assert.deepEqual(ok.shape, [1]);
  ok.dispose();
  throwsWeft(() => wt.fromNpy(npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), '__proto__': 'x', }",
    new Uint8Array(4))), 'InvalidArgument', /unexpected header key '__proto__'/);
  throwsWeft(() => wt.fromNpy(npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1,), }",
    new Uint8Array(4))), 'InvalidArgument', /header has the key 'shape' twice/);
  assert.deepEqual(counts(wt), before);
});

for (const variant of VARIANTS) {
  test(`${variant}: float to integer conversions follow one rule on every path`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const vals = [1e30, -1e30, NaN, Infinity, -Infinity, 3e9, -3.7, 255.9, 300, -1, 2 ** 53 + 2];
    const fits = [-1, 2.9, 0, 100.5, 7]; // -1 into uint8 is 255, as in PyTorch (an int); -3.7 would overflow
    for (const dtype of ['int32', 'int64', 'int16', 'int8', 'uint8']) {
      // plain JS numbers are Python's: beyond the dtype they are refused (js/traps.js), else cast
      throwsWeft(() => wt.tensor(vals, { dtype }), 'OverflowError', /without overflow|Overflow when unpacking long/);
      const fromJs = wt.tensor(fits, { dtype });
      const fitsF64 = wt.tensor(Float64Array.from(fits));
      const fitsCast = fitsF64.to(dtype);
      assert.deepEqual([...fromJs.data()], [...fitsCast.data()], dtype);
      for (const t of [fromJs, fitsF64, fitsCast]) t.dispose();
      // a Float64Array converts as the cast does (numpy arrays into torch.tensor too)
      const fromF64 = wt.tensor(Float64Array.from(vals), { dtype });
      const f64 = wt.tensor(Float64Array.from(vals));
      const viaCast = f64.to(dtype);
      assert.deepEqual([...fromF64.data()], [...viaCast.data()], `${dtype} from float64`);
      const fromF32 = wt.tensor(Float32Array.from(vals), { dtype });
      const f32 = wt.tensor(Float32Array.from(vals));
      const viaCast32 = f32.to(dtype);
      assert.deepEqual([...fromF32.data()], [...viaCast32.data()], `${dtype} from float32`);
      for (const t of [fromF64, f64, viaCast, fromF32, f32, viaCast32]) t.dispose();
    }
    const i32 = wt.tensor(Float64Array.from([1e30, -1e30, NaN]), { dtype: 'int32' });
    assert.deepEqual(i32.toArray(), [2147483647, -2147483648, 0]);
    i32.dispose();
    // full used to return uninitialized memory when fill_ refused the value
    throwsWeft(() => wt.full([2], 1e300, { dtype: 'int32' }), 'OverflowError', /cannot be converted to type int32 without overflow/);
    throwsWeft(() => wt.full([2], 300, { dtype: 'int8' }), 'OverflowError');
    assert.deepEqual(counts(wt), before);
  });
}
