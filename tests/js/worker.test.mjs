// Worker mode in Node (worker_threads): the same API, async results, copies
// by default and transfers on request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initWorker } from 'weft';
import { init, WeftError } from './helpers.mjs';

test('initWorker: chains without awaiting, reads through promises', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const b = await ww.backend();
    assert.equal(b.variant, 'simd');
    const x = ww.arange(6, { dtype: 'float32' }).view(2, 3);
    const y = x.t().contiguous();
    assert.deepEqual(await y.toArray(), [[0, 3], [1, 4], [2, 5]]);
    assert.deepEqual(await y.shape, [3, 2]);
    assert.equal(await y.dtype, 'float32');
    assert.deepEqual(await y.stride(), [2, 1]);
    assert.ok((await y.data()) instanceof Float32Array);
    assert.equal(await y.toString(), 'tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])');
    assert.equal(await ww.promoteTypes('int32', 'float16'), 'float16');
    const m = await ww.memory();
    assert.ok(m.tensors >= 3);
    x.dispose();
    y.dispose();
    assert.equal(await y.isDisposed, true);
  } finally {
    await ww.terminate();
  }
});

test('initWorker: the op table works through the worker', async (t) => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const a = ww.arange(3, { dtype: 'float32' });
    if ((await ww.memory()) && typeof (await a.dtype) === 'string') {
      const probe = ww.add(a, 1);
      const ok = await probe.ready.then(() => true, () => false);
      if (!ok) { t.skip('no elementwise ops in this build'); return; }
      assert.deepEqual(await probe.toArray(), [1, 2, 3]);
      assert.deepEqual(await a.mul(2).add(a, { alpha: 2 }).toArray(), [0, 4, 8]);
      const plan = await ww.explain('add', a, 1);
      assert.equal(plan.op, 'add');
      assert.equal(plan.numel, 3);
    }
  } finally {
    await ww.terminate();
  }
});

test('initWorker: errors keep their WeftError code and message', async () => {
  const ww = await initWorker({ variant: 'scalar' });
  try {
    const bad = ww.ones(2, 3).view(7);
    await assert.rejects(bad.toArray(), (e) => e instanceof WeftError && e.code === 'ShapeError' &&
      /^view: shape '\[7\]' is invalid for input of size 6$/.test(e.message));
    await assert.rejects(bad.ready, /shape '\[7\]'/);
    const t = ww.ones(1);
    t.dispose();
    await assert.rejects(t.toArray(), /disposed/);
    await assert.rejects(ww.nonsense(1).toArray(), (e) => e instanceof WeftError && /wt has no attribute 'nonsense'/.test(e.message));
  } finally {
    await ww.terminate();
  }
});

test('initWorker: inputs are copied unless { transfer: true }', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    const a = new Float32Array([1, 2, 3]);
    const t = ww.tensor(a);
    assert.deepEqual(await t.toArray(), [1, 2, 3]);
    assert.equal(a.length, 3, 'the caller keeps its array');
    a[0] = 9;
    assert.deepEqual(await t.toArray(), [1, 2, 3], 'the tensor holds a copy');
    const b = new Float64Array([4, 5]);
    const u = ww.tensor(b, { dtype: 'float32', transfer: true });
    assert.equal(b.length, 0, 'transferred: detached on this side');
    assert.equal(await u.dtype, 'float32');
    assert.deepEqual(await u.toArray(), [4, 5]);
  } finally {
    await ww.terminate();
  }
});

test('initWorker: tidy disposes what the callback made', async () => {
  const ww = await initWorker({ variant: 'simd-threads', threads: 2 });
  try {
    assert.equal((await ww.backend()).threads, true);
    const before = (await ww.memory()).tensors;
    const kept = ww.tidy((w) => {
      const a = w.ones(4, 4);
      a.t();
      return { r: a.contiguous({ memoryFormat: 'contiguous_format' }) };
    });
    assert.deepEqual(await kept.r.shape, [4, 4]);
    assert.equal((await ww.memory()).tensors, before + 1);
    kept.r.dispose();
    assert.equal((await ww.memory()).tensors, before);
  } finally {
    await ww.terminate();
  }
});

test('initWorker: the main thread stays responsive while the worker computes', async () => {
  const ww = await initWorker({ variant: 'simd' });
  try {
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 1);
    const big = ww.rand([512, 512]);
    for (let i = 0; i < 10; i++) big.t().contiguous().dispose();
    await big.numel();
    clearInterval(timer);
    assert.ok(ticks > 0, 'timers ran while the worker worked');
    big.dispose();
  } finally {
    await ww.terminate();
  }
});

// t.T and t.mT are tensor-valued properties (views made in the worker), t.ndim a value.
test('worker mode: t.T, t.mT, t.ndim', async () => {
  const ww = await initWorker();
  try {
    const x = ww.arange(6, { dtype: 'float32' }).view(1, 2, 3);
    assert.deepEqual(await x.T.shape, [3, 2, 1]);
    assert.deepEqual(await x.mT.contiguous().toArray(), [[[0, 3], [1, 4], [2, 5]]]);
    assert.equal(await x.ndim, 3);
  } finally {
    await ww.terminate();
  }
});

test('worker mode: t.T of a failed tensor rejects with its error', async () => {
  const ww = await initWorker();
  try {
    const bad = ww.zeros(-1);
    await assert.rejects(bad.T.ready, (e) => e instanceof WeftError && /zeros|negative/.test(e.message));
  } finally {
    await ww.terminate();
  }
});
