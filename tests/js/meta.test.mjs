// Meta tensors: every factory takes { device: 'meta' }; views and copies keep
// the device and give PyTorch's shapes and strides with no data. The view
// chains and memory-format fixtures are replayed from meta factories, values
// skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
// fixtures-lib checks errors against js/index.js's WeftError: load from there too
import { init } from '../../js/index.js';
import { noLeaks, tracker } from './helpers.mjs';
import { loadFixture, replayChain } from './fixtures-lib.mjs';

function throwsWeft(fn, code, re) {
  assert.throws(fn, (e) => e.name === 'WeftError' && e.code === code && re.test(e.message));
}

const wtPromise = init();

// The API with every fixture factory on the meta device.
function metaApi(wt) {
  const meta = (o) => ({ ...(o ?? {}), device: 'meta' });
  const m = Object.create(wt);
  m.arange = (s, e, st, o) => wt.arange(s, e, st, meta(o));
  m.tensor = (d, o) => wt.tensor(d, meta(o));
  m.empty = (shape, o) => wt.empty(shape, meta(o));
  m.emptyStrided = (size, stride, o) => wt.emptyStrided(size, stride, meta(o));
  return m;
}

function withoutValues(chain) {
  return { ...chain, steps: chain.steps.map((s) => (s.out ? { ...s, out: { ...s.out, values: undefined } } : s)) };
}

for (const file of ['chains.json', 'memformat.json']) {
  test(`meta: ${file} replayed on meta tensors`, async () => {
    const wt = metaApi(await wtPromise);
    const probe = wt.arange(0, 4, 1, { dtype: 'float32' });
    assert.equal(probe.device, 'meta');
    assert.equal(probe.view(2, 2).device, 'meta');
    probe.dispose();
    const problems = [];
    let steps = 0;
    for (const chain of loadFixture(file).chains) {
      const r = replayChain(wt, withoutValues(chain));
      steps += chain.steps.length;
      for (const p of r.problems) problems.push(`${chain.id}: ${p}`);
    }
    assert.ok(steps > 100);
    assert.deepEqual(problems.slice(0, 20), []);
  });
}

test('meta: every factory, device and no data', async () => {
  const wt = await wtPromise;
  const track = tracker();
  await noLeaks(wt, () => {
    const d = { device: 'meta' };
    const made = {
      empty: wt.empty(2, 3, { ...d, memoryFormat: 'contiguous_format' }),
      emptyCL: wt.empty([2, 3, 4, 5], { ...d, memoryFormat: 'channels_last' }),
      emptyStrided: wt.emptyStrided([2, 3], [1, 2], d),
      zeros: wt.zeros(2, 3, d),
      ones: wt.ones([2, 3], d),
      full: wt.full([2, 3], 1.5, d),
      arange: wt.arange(0, 6, 1, d),
      rand: wt.rand(2, 3, d),
      randn: wt.randn(2, 3, d),
      tensor: wt.tensor([[1, 2, 3], [4, 5, 6]], d),
    };
    for (const [name, t] of Object.entries(made)) {
      track(t);
      assert.equal(t.device, 'meta', name);
      throwsWeft(() => t.toArray(), 'NotImplemented', /meta tensor; no data/);
      throwsWeft(() => t.data(), 'NotImplemented', /meta tensor; no data/);
    }
    assert.deepEqual(made.emptyCL.stride(), [60, 1, 15, 3]);
    assert.deepEqual(made.emptyStrided.stride(), [1, 2]);
    assert.equal(made.full.dtype, 'float32');
    assert.equal(made.arange.dtype, 'int64');
    assert.deepEqual(made.arange.shape, [6]);
    assert.equal(made.tensor.dtype, 'float32');
    throwsWeft(() => track(wt.full([], 1, d)).item(), 'NotImplemented', /meta tensor; no data/);
    const el = track(wt.emptyLike(made.emptyCL));
    assert.equal(el.device, 'meta');
    assert.deepEqual(el.stride(), [60, 1, 15, 3]);
    // copies and elementwise ops stay on meta, with PyTorch's output strides
    const c = track(made.emptyCL.contiguous());
    assert.equal(c.device, 'meta');
    assert.deepEqual(c.stride(), [60, 20, 5, 1]);
    const cpu = track(wt.zeros(2, 3));
    assert.equal(cpu.device, 'cpu');
    if (typeof wt.add === 'function') {
      const s = track(wt.add(made.emptyCL, 1));
      assert.equal(s.device, 'meta');
      assert.deepEqual(s.stride(), [60, 1, 15, 3]);
    }
    track.disposeAll();
  });
});
