// wt.nn.Embedding and wt.nn.RMSNorm: Embedding's default initialization
// after manualSeed equals PyTorch 1.13's after manual_seed (within a few
// float32 ulps, as wt.randn; the padding row exactly zero) and its reprs
// (tests/fixtures/transformer.json); RMSNorm's is 2.4's; fromPretrained
// shares the data and freezes; gradients skip the padding row; state dicts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, counts, throwsWeft, VARIANTS } from './helpers.mjs';

const { layers } = loadFixture('transformer.json');
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bits = (v) => { f32[0] = v; return u32[0]; };
const ulps = (a, b) => Math.abs(bits(a) - bits(b));

test('Embedding: PyTorch 1.13 initialization after manualSeed and reprs', async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    for (const c of layers) {
      if (c.seed !== null) wt.manualSeed(c.seed);
      const m = new wt.nn.Embedding(...c.args, c.options);
      assert.equal(String(m), c.repr);
      if (c.weight) {
        const got = m.weight.data();
        c.weight.forEach((w, i) => {
          if (w === 0) assert.equal(got[i], 0, `padding row ${i}`);
          else assert.ok(ulps(got[i], w) <= 4, `${variant} seed ${c.seed} weight[${i}] ${got[i]} vs ${w}`);
        });
      }
      m.dispose();
    }
  }
});

test('Embedding: forward, padding gradient, fromPretrained, state dict', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const m = new wt.nn.Embedding(6, 3, { paddingIdx: 0 });
    assert.deepEqual(Object.keys(m.stateDict()), ['weight']);
    const ids = wt.tensor([[0n, 2n, 2n], [5n, 0n, 1n]]);
    const y = m.forward(ids);
    assert.deepEqual(y.shape, [2, 3, 3]);
    y.sum().backward();
    assert.deepEqual(m.weight.grad.toArray(), [[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 0], [0, 0, 0], [1, 1, 1]]);
    const w = wt.tensor([[1, 2], [3, 4], [5, 6]]);
    const p = wt.nn.Embedding.fromPretrained(w);
    assert.equal(p.weight.requiresGrad, false);
    assert.equal(String(p), 'Embedding(3, 2)');
    assert.deepEqual(p.forward(wt.tensor([2, 1], { dtype: 'int32' })).toArray(), [[5, 6], [3, 4]]);
    w.mul_(2); // the module shares w's data, as PyTorch's Parameter(_weight) does
    assert.deepEqual(p.weight.toArray(), [[2, 4], [6, 8], [10, 12]]);
    const q = wt.nn.Embedding.fromPretrained(w, { freeze: false, paddingIdx: -1, maxNorm: 5 });
    assert.equal(q.weight.requiresGrad, true);
    assert.equal(q.paddingIdx, 2);
    // maxNorm renormalizes the rows read, in place
    q.forward(wt.tensor([1n]));
    assert.ok(Math.abs(Math.hypot(...q.weight.toArray()[1]) - 5) < 1e-5);
    throwsWeft(() => new wt.nn.Embedding(3, 2, { paddingIdx: 3 }), 'InvalidArgument', /^Padding_idx must be within num_embeddings$/);
    throwsWeft(() => new wt.nn.Embedding(3, 2, { _weight: wt.zeros([2, 2]) }), 'InvalidArgument',
      /^Shape of weight does not match num_embeddings and embedding_dim$/);
    throwsWeft(() => wt.nn.Embedding.fromPretrained(wt.zeros([3])), 'InvalidArgument',
      /^Embeddings parameter is expected to be 2-dimensional$/);
    throwsWeft(() => m.forward(wt.tensor([6n])), 'IndexError', /^index out of range in self$/);
    for (const t of [m, p, q]) t.dispose();
  });
  assert.deepEqual(counts(wt), before);
});

test('RMSNorm: 2.4 parameters, repr and forward', async () => {
  const wt = await init();
  wt.tidy(() => {
    const n = new wt.nn.RMSNorm(4);
    assert.equal(String(n), 'RMSNorm((4,), eps=None, elementwise_affine=True)');
    assert.deepEqual(n.weight.toArray(), [1, 1, 1, 1]);
    assert.deepEqual(Object.keys(n.stateDict()), ['weight']);
    const m = new wt.nn.RMSNorm([2, 3], { eps: 1e-5, elementwiseAffine: false });
    assert.equal(String(m), 'RMSNorm((2, 3), eps=1e-05, elementwise_affine=False)');
    assert.equal(m.weight, null);
    const x = wt.tensor([[3, 4, 0, 0]]);
    const y = n.forward(x).toArray()[0];
    const r = Math.sqrt(25 / 4 + 1.1920928955078125e-7);
    [3, 4, 0, 0].forEach((v, i) => assert.ok(Math.abs(y[i] - v / r) < 1e-6));
    n.dispose(), m.dispose();
  });
});
