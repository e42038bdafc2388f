// wt.trace (the dispatcher's trace), wt.explain (TensorIterator plans) and
// the thread count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: trace of contiguous(channels_last)`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(wt.rand(2, 3, 4, 5));
      const tr = wt.trace(() => track(x.contiguous({ memoryFormat: 'channels_last' })));
      const ops = tr.map((e) => e.op.replace(/^aten::/, ''));
      const at = (name) => ops.findIndex((o) => o === name || o.startsWith(`${name}.`));
      assert.equal(at('contiguous'), 0);
      assert.ok(at('contiguous') < at('clone'));
      assert.ok(at('clone') < at('empty_like'));
      assert.ok(at('empty_like') < at('empty'));
      assert.ok(at('empty') < at('copy_'));
      for (const e of tr) {
        assert.equal(typeof e.key, 'string');
        assert.ok(Number.isInteger(e.depth) && e.depth >= 0);
      }
      assert.equal(tr[0].depth, 0);
      assert.ok(tr[at('clone')].depth > 0);
      assert.equal(tr[at('clone')].key, 'CPU');
      assert.equal(tr[at('copy_')].key, 'CPU');
      // BackendSelect picks the backend of empty, then CPU runs it
      const keysOfEmpty = tr.filter((e) => e.op.startsWith('aten::empty.')).map((e) => e.key);
      assert.deepEqual(keysOfEmpty, ['BackendSelect', 'CPU']);
      // off again: nothing recorded outside fn; errors inside fn propagate and stop it
      assert.deepEqual(wt.trace(() => {}), []);
      assert.throws(() => wt.trace(() => { throw new Error('boom'); }), /boom/);
      const m = wt.trace(() => track(track(wt.empty(2, 3, { device: 'meta' })).t()));
      assert.deepEqual(m.map((e) => e.key).slice(-1), ['Meta']);
      throwsWeft(() => wt.trace(42), 'TypeError');
      track.disposeAll();
    });
  });

  test(`${variant}: explain`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      // the seed's example: [1,64,5,4] contiguous -> channels_last
      const x = track(wt.rand(1, 64, 5, 4));
      const plan = wt.explain('contiguous', x, { memoryFormat: 'channels_last' });
      assert.equal(plan.op, 'copy_');
      assert.deepEqual(plan.broadcastShape, [1, 64, 5, 4]);
      assert.deepEqual(plan.shape, [64, 20]);
      assert.deepEqual(plan.strides, [[4, 256], [80, 4]]);
      assert.equal(plan.commonDtype, 'float32');
      assert.equal(plan.loop, 'transpose');
      assert.equal(typeof plan.fastSetup, 'string');
      assert.ok(plan.chunks >= 1);
      assert.deepEqual(wt.explain('clone', x, { memoryFormat: 'channels_last' }).shape, [64, 20]);
      // no copy needed: no iterator
      assert.equal(wt.explain('contiguous', x), null);
      // copy_ is explained, not run
      const dst = track(wt.zeros(3, 4));
      const src = track(track(wt.ones(4, 3)).t());
      const cp = wt.explain('copy_', dst, src);
      assert.equal(cp.loop, 'transpose');
      assert.deepEqual(dst.toArray(), [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
      const same = wt.explain('to', track(wt.zeros(8, { dtype: 'int32' })), 'float64');
      assert.deepEqual(same.dtypes, ['float64', 'int32']);
      assert.equal(same.fastSetup, 'contiguous');
      throwsWeft(() => wt.explain('copy_', dst, track(wt.ones(5))), 'ShapeError', /must match the size/);
      if (typeof wt.add === 'function') {
        const a = track(wt.rand(4, 1));
        const b = track(wt.rand(1, 5, { dtype: 'float64' }));
        const p = wt.explain('add', a, b);
        assert.deepEqual(p.broadcastShape, [4, 5]);
        assert.deepEqual(p.strides, [[8, 40], [0, 4], [8, 0]]);
        assert.equal(p.commonDtype, 'float64');
        const c = track(wt.zeros(3));
        // the number is a 0-dim operand with stride 0
        const q = wt.explain('add_', c, 1);
        assert.equal(q.loop, 'scalar-broadcast');
        assert.deepEqual(q.strides, [[4], [4], [0]]);
        assert.deepEqual(c.toArray(), [0, 0, 0]);
        const cl = track(track(wt.rand([2, 3, 4, 5])).contiguous({ memoryFormat: 'channels_last' }));
        assert.equal(wt.explain('mul', cl, cl).fastSetup, 'channels_last');
        // an HWC image seen as CHW beside a CHW tensor: the result follows the
        // first operand (PyTorch's layout rule), the loop says which way the
        // channels go: interleaved into an HWC result, or de-interleaved into
        // planes
        const img = track(wt.rand([5, 37, 3]));
        const v = track(img.permute(2, 0, 1));
        const o = track(wt.rand([3, 5, 37]));
        const hwc = wt.explain('add', v, o);
        assert.equal(hwc.loop, 'interleaved');
        assert.equal(hwc.widenedInner, true);
        assert.deepEqual(hwc.shape, [185, 3]);
        assert.deepEqual(hwc.strides, [[12, 4], [12, 4], [4, 740]]);
        const chw = wt.explain('sub', o, v);
        assert.equal(chw.loop, 'deinterleave');
        assert.deepEqual(chw.strides, [[4, 740], [4, 740], [12, 4]]);
        // 2 of the 3 channels (not dense): the result interleaves the 2 kept
        const nd = track(track(img.narrow(2, 0, 2)).permute(2, 0, 1));
        const p2 = wt.explain('mul', nd, 2);
        assert.equal(p2.loop, 'interleaved');
        assert.deepEqual(p2.strides[0], [8, 4]);
        // a copy is no pointwise op: the same layouts stay a transpose / strided
        assert.equal(wt.explain('contiguous', v).loop, 'transpose');
        assert.equal(wt.explain('add', track(v.contiguous()), o).loop, 'vectorized');
      }
      track.disposeAll();
    });
  });

  test(`${variant}: threads`, async () => {
    const wt = await init({ variant, threads: 1 });
    assert.equal(wt.getNumThreads(), 1);
    const max = wt.maxThreads();
    assert.ok(max >= 1);
    if (variant === 'simd') assert.equal(max, 1);
    wt.setNumThreads(max);
    assert.equal(wt.getNumThreads(), max);
    throwsWeft(() => wt.setNumThreads(0), 'InvalidArgument', /at least 1/);
    throwsWeft(() => wt.setNumThreads(1.5), 'TypeError');
    await init({ variant, threads: 'auto' });
    assert.equal(wt.getNumThreads(), max);
    await init({ variant, threads: 1 });
    assert.equal(wt.getNumThreads(), 1);
    await assert.rejects(init({ variant, threads: 0 }), /threads must be a positive integer or 'auto'/);
    wt.setNumThreads(max);
  });
}

// Ops with dedicated kernels (no iterator) record their own plan: the kind
// of walk, the path it takes, the rows parallel_for splits and each row's length.
test('explain: the plans of the shape gathers, the index walks and sorting', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const track = tracker();
    const x = track(wt.rand(4, 6));
    const i2 = track(wt.tensor([0n, 2n]));
    const z = track(wt.zeros(4, 2, { dtype: 'int64' }));
    const plan = (...a) => {
      const p = wt.explain(...a);
      return [p.kind, p.path, p.rows, p.inner, p.dtype];
    };
    assert.deepEqual(plan('flip', x, [0]), ['remap', 'row_copies', 4, 6, 'float32']);
    assert.deepEqual(plan('roll', x, 1, 1), ['remap', 'elements', 4, 6, 'float32']);
    assert.deepEqual(plan('repeat', x, [2, 1]), ['remap', 'row_copies', 8, 6, 'float32']);
    assert.deepEqual(plan('index_select', x, 1, i2), ['gather', 'contiguous_rows', 4, 2, 'float32']);
    assert.deepEqual(plan('gather', x, 1, z), ['gather', 'contiguous_rows', 4, 2, 'float32']);
    assert.deepEqual(plan('index.Tensor', x, [i2]), ['gather', 'contiguous_rows', 2, 6, 'float32']);
    assert.deepEqual(plan('gather', track(x.t()), 0, track(z.t())), ['gather', 'strided', 4, 2, 'float32']);
    assert.deepEqual(plan('sort', x, 1), ['sort', 'insertion', 4, 6, 'float32']);
    assert.deepEqual(plan('sort', track(wt.rand(3, 100)), 1), ['sort', 'radix', 3, 100, 'float32']);
    assert.deepEqual(plan('topk', track(wt.rand(3, 100)), 5), ['sort', 'heap_select', 3, 100, 'float32']);
    assert.equal(wt.explain('topk', x, 2).op, 'topk');
    assert.deepEqual(plan('_unique2', x, true, true, true), ['sort', 'radix', 1, 24, 'float32']);
    // explain runs no loop: x is unchanged by an explained in-place gather
    const before = x.toArray();
    wt.explain('scatter_', x, 1, z, 0);
    assert.deepEqual(x.toArray(), before);
    track.disposeAll();
  });
});
