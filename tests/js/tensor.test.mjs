// Tensor data out, printing, dispose and the memory counters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { counts, init, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: toArray, data, item on views`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(track(wt.arange(6, { dtype: 'float32' })).view(2, 3));
      const tx = track(x.t());
      assert.deepEqual(tx.toArray(), [[0, 3], [1, 4], [2, 5]]);
      assert.deepEqual(Array.from(tx.data()), [0, 3, 1, 4, 2, 5]);
      assert.ok(tx.data() instanceof Float32Array);
      assert.equal(track(track(x.select(0, 1)).select(0, 2)).item(), 5);
      assert.equal(track(wt.tensor([true])).item(), true);
      assert.equal(track(wt.tensor([[7]])).item(), 7);
      assert.deepEqual(track(wt.tensor(2.5)).toArray(), 2.5);
      assert.deepEqual(track(wt.empty([0, 2])).toArray(), []);
      assert.equal(track(wt.empty([0])).data().length, 0);
      throwsWeft(() => x.item(), 'InvalidArgument', /a Tensor with 6 elements cannot be converted to Scalar/);
      const m = track(wt.empty([2], { device: 'meta' }));
      throwsWeft(() => m.data(), 'NotImplemented', /meta tensor/);
      throwsWeft(() => m.toArray(), 'NotImplemented');
      track.disposeAll();
    });
  });

  test(`${variant}: toString prints like PyTorch`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    const s = (t) => String(track(t));
    assert.equal(s(wt.tensor([[0.1, 0.2]])), 'tensor([[0.1000, 0.2000]])');
    assert.equal(s(track(wt.arange(6)).view(2, 3)), 'tensor([[0, 1, 2],\n        [3, 4, 5]])');
    assert.equal(s(wt.ones(2, 2)), 'tensor([[1., 1.],\n        [1., 1.]])');
    assert.equal(s(wt.tensor(3.5)), 'tensor(3.5000)');
    assert.equal(s(wt.tensor(3)), 'tensor(3.)');
    assert.equal(s(wt.tensor(3n)), 'tensor(3)');
    assert.equal(s(wt.tensor([true, false])), 'tensor([ True, False])');
    assert.equal(s(wt.tensor([1, 2], { dtype: 'float16' })), 'tensor([1., 2.], dtype=torch.float16)');
    assert.equal(s(wt.tensor([1, 2], { dtype: 'int32' })), 'tensor([1, 2], dtype=torch.int32)');
    assert.equal(s(wt.tensor([1e-5, 1, 1000])), 'tensor([1.0000e-05, 1.0000e+00, 1.0000e+03])');
    assert.equal(s(wt.tensor([NaN, Infinity, -1.5])), 'tensor([    nan,     inf, -1.5000])');
    assert.equal(s(wt.zeros([0, 3])), 'tensor([], size=(0, 3))');
    assert.equal(s(wt.zeros([0], { dtype: 'int64' })), 'tensor([], dtype=torch.int64)');
    assert.equal(s(wt.arange(2000, { dtype: 'float32' })),
      'tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])');
    assert.equal(s(track(wt.arange(30)).view(2, 15)),
      'tensor([[ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14],\n' +
      '        [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]])');
    assert.equal(inspect(track(wt.tensor([1n, 2n]))), 'tensor([1, 2])');
    track.disposeAll();
  });

  test(`${variant}: dispose, and disposed tensors throw`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const x = wt.rand([4, 4]);
    const v = x.view(16);
    assert.equal(wt.memory().tensors, before.tensors + 2);
    assert.equal(wt.memory().storages, before.storages + 1);
    assert.equal(wt.memory().bytesInUse, before.bytesInUse + 64);
    x.dispose();
    assert.equal(x.isDisposed, true);
    x.dispose();
    assert.equal(wt.memory().storages, before.storages + 1);
    v.dispose();
    assert.deepEqual(counts(wt), before);
    throwsWeft(() => x.view(2, 8), 'InvalidArgument', /^view: tensor has been disposed$/);
    throwsWeft(() => x.shape, 'InvalidArgument', /^shape: tensor has been disposed$/);
    throwsWeft(() => x.contiguous(), 'InvalidArgument', /^contiguous: tensor has been disposed$/);
    throwsWeft(() => x.toArray(), 'InvalidArgument', /^toArray: tensor has been disposed$/);
    throwsWeft(() => x.dataPtr(), 'InvalidArgument', /disposed/);
    throwsWeft(() => wt.emptyLike(x), 'InvalidArgument', /^empty_like: tensor has been disposed$/);
    assert.equal(inspect(x), 'tensor(<disposed>)');
  });

  test(`${variant}: memory counters and peak`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      const m0 = wt.memory();
      assert.deepEqual(Object.keys(m0), ['tensors', 'storages', 'bytesInUse', 'peakBytes', 'metaBytes', 'webgpuBytes', 'heapBytes',
        'jsTensors', 'collected', 'tidyScopes']);
      const big = wt.empty([1 << 20], { dtype: 'uint8' });
      const m1 = wt.memory();
      assert.equal(m1.bytesInUse, m0.bytesInUse + (1 << 20));
      assert.ok(m1.peakBytes >= m1.bytesInUse);
      big.dispose();
      assert.ok(wt.memory().peakBytes >= m1.bytesInUse);
    });
  });

  test(`${variant}: thrown calls leak nothing`, async () => {
    const wt = await init({ variant });
    const x = wt.rand([2, 3, 4, 5]);
    await noLeaks(wt, () => {
      for (let i = 0; i < 50; i++) {
        assert.throws(() => x.view(7));
        assert.throws(() => x.reshape(1.5));
        assert.throws(() => x.permute(0, 0, 1, 2));
        assert.throws(() => wt.tensor([[1], [2, 3]]));
        assert.throws(() => wt.tensor(['x']));
        assert.throws(() => wt.empty([2], { dtype: 'complex64' }));
        assert.throws(() => wt.empty([-2]));
        assert.throws(() => wt.full([2, -1], 1));
        assert.throws(() => x.clone({ memoryFormat: 'channels_last_3d' }));
        assert.throws(() => x.item());
      }
    });
    x.dispose();
  });

  test(`${variant}: large tensors grow memory and stay readable`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      const n = 8 << 20;
      const a = wt.full([n], 3, { dtype: 'float32' });
      const b = wt.ones([n], { dtype: 'float64' });
      const d = a.data();
      assert.equal(d.length, n);
      assert.equal(d[n - 1], 3);
      assert.equal(b.data()[n - 1], 1);
      const t = wt.tensor(new Float32Array(1000).fill(2));
      assert.equal(t.data()[999], 2);
      a.dispose();
      b.dispose();
      t.dispose();
    });
  });
}
