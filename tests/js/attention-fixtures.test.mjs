// wt.scaledDotProductAttention (issue 24) against tests/fixtures/attention.json
// (PyTorch 2.x's math path in float64, made by
// tests/fixtures/gen_attention_fixtures.py): every mask kind, causal with
// L < S, L = S, L > S, GQA, the fused tiles' edges and the decode path, on
// each wasm variant at 1 and 3 threads: dtype, shape, contiguous strides,
// values, the gradients of sum(out * gradOut) for query, key and value, and
// errors (WeftErrors with the fixture's message), nothing leaking. Then the
// paths explain() names, and the fused path against the math path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, close, counts, throwsWeft, VARIANTS, tracker } from './helpers.mjs';

const { cases } = loadFixture('attention.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const TOL = { float32: 2e-5, float64: 1e-10 };

function firstBad(got, want, tol) {
  const i = want.findIndex((x, j) => !close(got[j], num(x), tol));
  return i < 0 ? null : `[${i}] ${got[i]}, want ${want[i]}`;
}

function replay(wt, c) {
  const track = tracker();
  const tensor = (s) => {
    const data = s.dtype === 'int64' ? s.storage.map(BigInt) : s.storage.map(num);
    const base = track(wt.tensor(data, { dtype: s.dtype }));
    return track(base.asStrided(s.size, s.stride, s.offset));
  };
  const bad = [];
  try {
    const { query, key, value, attn_mask: mask } = c.args;
    const q = track(tensor(query).detach().requiresGrad_());
    const k = track(tensor(key).detach().requiresGrad_());
    const v = track(tensor(value).detach().requiresGrad_());
    const opts = { isCausal: c.options.is_causal, scale: c.options.scale, enableGqa: c.options.enable_gqa };
    if (mask) opts.attnMask = tensor(mask);
    let out;
    try {
      out = track(wt.scaledDotProductAttention(q, k, v, opts));
    } catch (e) {
      if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
      else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError`);
      else if (e.message !== c.expect.error) bad.push(`message "${e.message}", want "${c.expect.error}"`);
      return bad;
    }
    if (c.expect.error !== undefined) return [`expected "${c.expect.error}", got a result`];
    const w = c.expect;
    if (out.dtype !== w.dtype) return [`dtype ${out.dtype}, want ${w.dtype}`];
    if (JSON.stringify(out.shape) !== JSON.stringify(w.size)) return [`shape ${out.shape}, want ${w.size}`];
    if (!out.isContiguous()) bad.push(`strides ${out.stride()}: not contiguous`);
    const vb = firstBad(out.toArray().flat(Infinity), w.values, TOL[w.dtype]);
    if (vb) bad.push(`value${vb}`);
    if (w.grads) {
      wt.tidy(() => out.mul(tensor(c.args.grad_out)).sum().backward());
      for (const [name, t] of [['query', q], ['key', k], ['value', v]]) {
        const g = t.grad;
        if (g) track(g);
        const gb = g ? firstBad(g.toArray().flat(Infinity), w.grads[name], TOL[w.dtype] * 5) : 'none';
        if (gb) bad.push(`grad ${name}${gb}`);
      }
    }
  } finally {
    track.disposeAll();
  }
  return bad;
}

for (const variant of VARIANTS) {
  test(`scaledDotProductAttention matches the math path (${cases.length} cases, ${variant}, 1 and 3 threads)`,
    async () => {
      const wt = await init({ variant });
      const before = counts(wt);
      const failures = [];
      for (const threads of [1, 3]) {
        if (threads > wt.maxThreads()) continue;
        wt.setNumThreads(threads);
        for (const c of cases) {
          const bad = replay(wt, c);
          if (bad.length) failures.push(`${threads}t ${c.name}: ${bad.join('; ')}`);
        }
      }
      wt.setNumThreads(1);
      assert.deepEqual(failures.slice(0, 12), []);
      assert.deepEqual(counts(wt), before, 'nothing leaks, errors included');
    });
}

test('scaledDotProductAttention: explain names the path; fused equals the math path', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const track = tracker();
  const q = track(wt.randn([1, 2, 16, 8]));
  const k = track(wt.randn([1, 2, 20, 8]));
  const v = track(wt.randn([1, 2, 20, 8]));
  const path = (...a) => wt.explain('scaled_dot_product_attention', ...a).path;
  assert.equal(path(q, k, v), 'fused');
  assert.equal(path(track(q.narrow(2, 0, 1)), k, v), 'decode');
  assert.equal(path(track(q.double()), track(k.double()), track(v.double())), 'fallback');
  assert.equal(path(q, k, v, { dropoutP: 0.5 }), 'fallback');
  const plan = wt.explain('scaled_dot_product_attention', q, k, v, { isCausal: true });
  assert.equal(plan.op, 'scaled_dot_product_attention');
  assert.equal(plan.kind, 'attention');
  // a float mask that requires grad takes the math path; the same mask without grad the fused one
  const m = track(wt.randn([16, 20]));
  const mg = track(m.detach().requiresGrad_());
  assert.equal(path(q, k, v, { attnMask: mg }), 'fallback');
  const a = track(wt.scaledDotProductAttention(q, k, v, { attnMask: m }));
  const b = track(wt.scaledDotProductAttention(q, k, v, { attnMask: mg }));
  const diff = track(track(a.sub(b)).abs()).max().item();
  assert.ok(diff < 1e-5, `fused vs math: ${diff}`);
  wt.tidy(() => b.sum().backward());
  assert.deepEqual(mg.grad.shape, [16, 20]);
  throwsWeft(() => wt.scaledDotProductAttention(q, k, v, { dropoutP: 1.5 }), 'InvalidArgument',
    /^scaled_dot_product_attention: dropout probability has to be between 0 and 1, but got 1.5$/);
  // dropout: the math path, seeded like dropout
  wt.manualSeed(3);
  const d1 = track(wt.scaledDotProductAttention(q, k, v, { dropoutP: 0.3 }));
  wt.manualSeed(3);
  const d2 = track(wt.scaledDotProductAttention(q, k, v, { dropoutP: 0.3 }));
  assert.deepEqual(d1.toArray(), d2.toArray());
  // the fused path's gradient node
  const qg = track(q.detach().requiresGrad_());
  const o = track(wt.scaledDotProductAttention(qg, k, v));
  const fn = o.gradFn;
  assert.equal(fn.name, 'ScaledDotProductFlashAttentionForCpuBackward0');
  fn.dispose();
  track.disposeAll();
});
