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
  assert.equal(path(q, k, v, { dropoutP: 0.5 }), 'fused');
  assert.equal(path(track(q.narrow(2, 0, 2)), k, v, { dropoutP: 0.5 }), 'decode');
  assert.equal(path(q, k, v, { dropoutP: 1 }), 'fallback');
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
  // dropout: seeded by manualSeed
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

// Dropout in the fused kernel: its mask Z (0 or 1 / (1 - p) per query, key)
// read back through q = 0 (uniform probabilities 1 / S) and v = the S x S
// identity, where out = Z / S; the mask depends on the seed and the
// element's (batch, head, query, key) only, so the same seed gives the same
// mask to any q, k, v, and a call with fewer queries the first rows. Against the composite
// softmax(q k^T scale) Z v: values, gradients, the decode path, and 1 vs 3
// threads bit for bit.
test('scaledDotProductAttention: dropout in the fused kernel', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const track = tracker();
  const B = 1, H = 4, L = 64, S = 128, E = 8, P = 0.3, SEED = 11;
  const mask = (rows = L) => {
    const zq = track(wt.zeros([B, H, rows, E])), zk = track(wt.randn([B, H, S, E]));
    const id = track(track(wt.eye(S)).expand([B, H, S, S]));
    wt.manualSeed(SEED);
    return track(track(wt.scaledDotProductAttention(zq, zk, id, { dropoutP: P })).mul(S));
  };
  const z = mask();
  const zs = z.toArray().flat(3);
  const keep = 1 / (1 - P);
  assert.ok(zs.every((x) => x === 0 || Math.abs(x - keep) < 1e-4), 'factors 0 or 1 / (1 - p)');
  const frac = zs.filter((x) => x !== 0).length / zs.length;
  assert.ok(Math.abs(frac - (1 - P)) < 0.012, `kept ${frac}`); // sigma 0.0025
  const rows = z.toArray().flat(2).map((r) => r.filter((x) => x !== 0).length / S);
  const rv = rows.reduce((a, r) => a + (r - (1 - P)) ** 2, 0) / rows.length, binom = (P * (1 - P)) / S;
  assert.ok(rv > 0.6 * binom && rv < 1.5 * binom, `row variance ${rv}, binomial ${binom}`); // rel. sigma 0.09
  wt.manualSeed(SEED + 1);
  const other = track(wt.scaledDotProductAttention(track(wt.zeros([B, H, L, E])), track(wt.randn([B, H, S, E])),
    track(track(wt.eye(S)).expand([B, H, S, S])), { dropoutP: P }));
  assert.ok(track(track(track(other.mul(S)).sub(z)).abs()).max().item() > 1, 'another seed, another mask');

  const q0 = track(wt.randn([B, H, L, E])), k0 = track(wt.randn([B, H, S, E])), v0 = track(wt.randn([B, H, S, E]));
  const go = track(wt.randn([B, H, L, E]));
  const leaf = (t) => track(t.detach().requiresGrad_());
  const fusedRun = (threads, rowsUsed = L) => {
    wt.setNumThreads(threads);
    const [q, k, v] = [leaf(q0.narrow(2, 0, rowsUsed)), leaf(k0), leaf(v0)];
    wt.manualSeed(SEED);
    const o = track(wt.scaledDotProductAttention(q, k, v, { dropoutP: P }));
    wt.tidy(() => o.mul(go.narrow(2, 0, rowsUsed)).sum().backward());
    wt.setNumThreads(1);
    return [o, q.grad, k.grad, v.grad].map((t) => t.toArray().flat(3));
  };
  const [q, k, v] = [leaf(q0), leaf(k0), leaf(v0)];
  const p = track(track(track(wt.matmul(q, track(k.transpose(-2, -1)))).mul(1 / Math.sqrt(E))).softmax(-1));
  const ref = track(wt.matmul(track(p.mul(z)), v));
  wt.tidy(() => ref.mul(go).sum().backward());
  const want = [ref, q.grad, k.grad, v.grad].map((t) => t.toArray().flat(3));
  const one = fusedRun(1);
  ['out', 'dq', 'dk', 'dv'].forEach((name, i) => {
    const bad = one[i].findIndex((x, j) => !close(x, want[i][j], 2e-4));
    assert.equal(bad, -1, `${name}[${bad}] ${one[i][bad]}, composite ${want[i][bad]}`);
  });
  assert.deepEqual(fusedRun(3), one, '3 threads: the same bits');
  // the decode path (2 query rows) against the composite with its mask: the first rows of the longer call's
  const z2 = mask(2), q2 = q0.narrow(2, 0, 2);
  assert.deepEqual(z2.toArray(), track(z.narrow(2, 0, 2)).toArray(), 'the mask does not depend on L');
  const p2 = track(track(track(wt.matmul(q2, track(k0.transpose(-2, -1)))).mul(1 / Math.sqrt(E))).softmax(-1));
  const want2 = track(wt.matmul(track(p2.mul(z2)), v0)).toArray().flat(3);
  const dec = fusedRun(1, 2)[0];
  assert.equal(dec.findIndex((x, j) => !close(x, want2[j], 2e-4)), -1, 'decode vs composite');
  assert.ok(z2.toArray().flat(3).some((x) => x === 0), 'decode drops');
  track.disposeAll();
});
