// wt.nn.MultiheadAttention and the transformer modules against PyTorch 1.13
// (tests/fixtures/transformer.json and tests/fixtures/pt/transformer.pt, made
// by tests/fixtures/gen_transformer_fixtures.py): state dicts from torch.save
// loaded unchanged, eval-mode outputs, attention weights, output strides and
// the gradients of inputs and parameters; default initialization after
// manualSeed; reprs and state-dict keys; PyTorch's messages for bad calls.
// MultiheadAttention runs with needWeights true (explicit probabilities) and
// false (wt.scaledDotProductAttention); the layers always take the latter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VARIANTS, init, close, noLeaks, throwsWeft } from './helpers.mjs';

const FX = JSON.parse(readFileSync(new URL('../fixtures/transformer.json', import.meta.url), 'utf8'));
const PT = readFileSync(new URL('../fixtures/pt/transformer.pt', import.meta.url));
const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const camelKeys = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [camel(k), v]));
const TOL = 2e-5;
const [E, H, D, NHEAD, DFF] = [8, 2, 8, 2, 16];

// the first value of `got` (a tensor) further than TOL from `want`'s, as a problem
function compare(label, got, want, problems) {
  if (got === null || got === undefined) return problems.push(`${label}: missing`);
  if (JSON.stringify(got.shape) !== JSON.stringify(want.shape)) return problems.push(`${label}: shape [${got.shape}] vs [${want.shape}]`);
  const g = got.data();
  const w = want.data();
  for (let i = 0; i < w.length; i++) {
    if (!close(Number(g[i]), Number(w[i]), TOL)) return problems.push(`${label}[${i}]: ${g[i]} vs ${w[i]}`);
  }
  return null;
}

// the inputs as leaves requiring grad, q === k and k === v as in the case
function leaves(c, spec) {
  const q = c.query.clone().requiresGrad_(true);
  const k = spec.same === 'qkv' ? q : c.key.clone().requiresGrad_(true);
  const v = spec.same === 'qkv' ? q : spec.same === 'kv' ? k : c.value.clone().requiresGrad_(true);
  return { query: q, key: k, value: v };
}

function makeMha(wt, spec, state) {
  const { num_heads: heads = H, ...rest } = spec.ctor;
  const m = new wt.nn.MultiheadAttention(E, heads, camelKeys(rest));
  m.loadStateDict(state);
  return m.eval();
}

// one MultiheadAttention case, with or without the weights: problems as strings
function mhaProblems(wt, spec, c, { needWeights, isCausal = false, dropMask = false }) {
  const problems = [];
  const label = `${spec.name} needWeights=${needWeights}${isCausal ? ' isCausal' : ''}`;
  const m = makeMha(wt, spec, c.state);
  const x = leaves(c, spec);
  const [out, w] = m(x.query, x.key, x.value, { keyPaddingMask: c.key_padding_mask ?? null, needWeights,
    attnMask: dropMask ? null : c.attn_mask ?? null, averageAttnWeights: spec.average_attn_weights ?? true, isCausal });
  compare(`${label} out`, out, c.out, problems);
  assert.deepEqual(out.stride(), spec.strides.out, `${label} output strides`);
  if (needWeights) {
    compare(`${label} weights`, w, c.weights, problems);
    assert.deepEqual(w.stride(), spec.strides.weights, `${label} weight strides`);
  } else assert.equal(w, null, `${label}: no weights`);
  wt.sum(wt.mul(out, c.gout)).backward();
  for (const name of ['query', 'key', 'value']) {
    if (c.grads[name]) compare(`${label} grad ${name}`, x[name].grad, c.grads[name], problems);
  }
  for (const [name, p] of m.namedParameters()) compare(`${label} grad ${name}`, p.grad, c.grads[`param.${name}`], problems);
  m.dispose();
  return problems;
}


test("MultiheadAttention: outputs, weights, strides and gradients equal PyTorch's for its saved state dicts", async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    const blob = wt.load(PT);
    const problems = [];
    for (const spec of FX.mha) {
      const c = blob[spec.name];
      problems.push(...wt.tidy(() => mhaProblems(wt, spec, c, { needWeights: true })));
      problems.push(...wt.tidy(() => mhaProblems(wt, spec, c, { needWeights: false })));
      // the causal hint: the fused kernel's own mask gives what the explicit one gave
      if (spec.causal) problems.push(...wt.tidy(() => mhaProblems(wt, spec, c, { needWeights: false, isCausal: true })));
    }
    assert.deepEqual(problems.slice(0, 8), [], `${variant}: ${problems.length} problems`);
  }
});

test('MultiheadAttention, needWeights: false, goes through wt.scaledDotProductAttention (with the isCausal hint as its own)', async () => {
  const wt = await init({ variant: 'simd' });
  const spec = FX.mha.find((s) => s.causal);
  const blob = wt.load(PT);
  const sdpa = wt.scaledDotProductAttention;
  const calls = [];
  wt.scaledDotProductAttention = (q, k, v, opts) => {
    calls.push({ shape: q.shape, mask: opts.attnMask?.shape ?? null, isCausal: opts.isCausal });
    return sdpa(q, k, v, opts);
  };
  let problems;
  try {
    problems = wt.tidy(() => mhaProblems(wt, spec, blob[spec.name], { needWeights: false, isCausal: true }));
    wt.tidy(() => mhaProblems(wt, spec, blob[spec.name], { needWeights: true, isCausal: true }));
  } finally {
    wt.scaledDotProductAttention = sdpa;
  }
  assert.deepEqual(problems, []);
  // the hint replaced the mask (the kernel builds it); with the weights, no kernel call
  assert.deepEqual(calls, [{ shape: [2, 4, 3, 2], mask: null, isCausal: true }]);
  const m = makeMha(wt, spec, blob[spec.name].state);
  const x = blob[spec.name].query;
  throwsWeft(() => m(x, x, x, { isCausal: true, needWeights: false }), 'InvalidArgument', /Need attnMask if specifying the isCausal hint/);
  m.dispose();
});

// ---- the layers and stacks ----

function makeLayer(wt, spec) {
  const opts = camelKeys(spec.ctor);
  if (spec.kind === 'transformer') return new wt.nn.Transformer(D, NHEAD, 1, 2, DFF, opts);
  const Layer = spec.kind.startsWith('enc') ? wt.nn.TransformerEncoderLayer : wt.nn.TransformerDecoderLayer;
  const layer = new Layer(D, NHEAD, DFF, opts);
  if (spec.kind === 'encoder' || spec.kind === 'decoder') {
    const Stack = spec.kind === 'encoder' ? wt.nn.TransformerEncoder : wt.nn.TransformerDecoder;
    const stack = new Stack(layer, spec.layers, { norm: spec.norm ? new wt.nn.LayerNorm(D) : null });
    layer.dispose(); // the stack holds copies
    return stack;
  }
  return layer;
}

function layerProblems(wt, spec, c) {
  const problems = [];
  const m = makeLayer(wt, spec);
  assert.equal(m.toString(), spec.repr, `${spec.name} repr`);
  assert.deepEqual(Object.keys(m.stateDict()), spec.keys, `${spec.name} state-dict keys`);
  m.loadStateDict(c.state);
  m.eval();
  const src = c.src.clone().requiresGrad_(true);
  const tgt = c.tgt ? c.tgt.clone().requiresGrad_(true) : null;
  const masks = camelKeys(c.masks);
  const out = spec.kind === 'transformer' ? m(src, tgt, masks) : tgt ? m(tgt, src, masks) : m(src, masks);
  compare(`${spec.name} out`, out, c.out, problems);
  assert.deepEqual(out.stride(), spec.stride, `${spec.name} output strides`);
  wt.sum(wt.mul(out, c.gout)).backward();
  compare(`${spec.name} grad src`, src.grad, c.grads.src, problems);
  if (tgt) compare(`${spec.name} grad tgt`, tgt.grad, c.grads.tgt, problems);
  for (const [name, p] of m.namedParameters()) compare(`${spec.name} grad ${name}`, p.grad, c.grads[`param.${name}`], problems);
  m.dispose();
  return problems;
}

test("TransformerEncoderLayer/DecoderLayer, the stacks and Transformer equal PyTorch's (outputs, strides, gradients, reprs, keys)", async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    const blob = wt.load(PT);
    const problems = [];
    for (const spec of FX.layers) problems.push(...wt.tidy(() => layerProblems(wt, spec, blob[spec.name])));
    assert.deepEqual(problems.slice(0, 8), [], `${variant}: ${problems.length} problems`);
  }
});

test('the modules leave nothing behind: a training step of MultiheadAttention and of an encoder stack', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => wt.tidy(() => {
    const m = new wt.nn.MultiheadAttention(E, H, { addBiasKv: true, addZeroAttn: true, kdim: 5, vdim: 6 });
    const [q, k, v] = [wt.randn([3, 2, E]), wt.randn([4, 2, 5]), wt.randn([4, 2, 6])];
    const mask = wt.tensor([[false, true, false, false], [false, false, false, true], [true, false, false, false]]);
    const [out, w] = m(q, k, v, { attnMask: mask, keyPaddingMask: wt.zeros([2, 4], { dtype: 'bool' }) });
    out.sum().backward();
    m.dispose();
  }));
  await noLeaks(wt, () => wt.tidy(() => {
    const layer = new wt.nn.TransformerEncoderLayer(D, NHEAD, DFF);
    const enc = new wt.nn.TransformerEncoder(layer, 2);
    layer.dispose();
    const x = wt.randn([4, 2, D]);
    const out = enc(x);
    out.sum().backward();
    enc.dispose();
  }));
});

// ---- construction ----

function build(wt, c) {
  if (c.ctor === 'TransformerEncoder') {
    const layer = new wt.nn.TransformerEncoderLayer(D, NHEAD, DFF);
    const enc = new wt.nn.TransformerEncoder(layer, 2);
    layer.dispose();
    return enc;
  }
  return new wt.nn[c.ctor](...c.args, camelKeys(c.opts));
}

test('default initialization after manualSeed equals PyTorch after manual_seed, and draws as many numbers', async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    const problems = [];
    for (const c of FX.init) {
      wt.manualSeed(c.seed);
      const m = build(wt, c);
      const after = wt.rand([3]);
      const label = `${variant} seed ${c.seed} ${c.ctor}(${c.args ?? ''})`;
      compare(`${label} generator after`, after, wt.tensor(c.after), problems);
      const sd = m.stateDict();
      assert.deepEqual(Object.keys(sd), Object.keys(c.state), `${label} keys`);
      for (const [key, want] of Object.entries(c.state)) {
        const got = sd[key].data();
        const bad = want.data.findIndex((w, i) => Math.abs(got[i] - w) > 1e-6 * (1 + Math.abs(w)));
        if (bad >= 0) problems.push(`${label}.${key}[${bad}]: ${got[bad]} vs ${want.data[bad]}`);
        sd[key].dispose();
      }
      after.dispose();
      m.dispose();
    }
    assert.deepEqual(problems.slice(0, 8), [], `${problems.length} problems`);
  }
});

test('the stacks hold independent copies of the layer (deep copies, as _get_clones), and reprs print like PyTorch', async () => {
  const wt = await init({ variant: 'simd' });
  const layer = new wt.nn.TransformerEncoderLayer(D, NHEAD, DFF, { activation: 'gelu' });
  const enc = new wt.nn.TransformerEncoder(layer, 2, { norm: new wt.nn.LayerNorm(D) });
  const [a, b] = [enc.layers.at(0), enc.layers.at(1)];
  assert.notEqual(a, layer);
  assert.notEqual(a.linear1.weight, b.linear1.weight);
  assert.deepEqual([...a.linear1.weight.data()], [...layer.linear1.weight.data()]);
  wt.noGrad(() => a.linear1.weight.fill_(3));
  assert.notEqual(b.linear1.weight.data()[0], 3);
  assert.notEqual(layer.linear1.weight.data()[0], 3);
  assert.equal(a.activation, wt.gelu);
  assert.equal(a.training, layer.training);
  assert.equal(a.normFirst, false);
  assert.ok(a.linear1.weight.requiresGrad);
  assert.equal(enc.parameters().length, 2 * layer.parameters().length + 2);
  layer.dispose();
  enc.dispose();
  // an activation module is a child (printed and copied), a function is not
  const withModule = new wt.nn.TransformerDecoderLayer(D, NHEAD, DFF, { activation: new wt.nn.GELU() });
  assert.match(withModule.toString(), /\(activation\): GELU\(approximate='none'\)\n\)$/);
  assert.equal(withModule.activationReluOrGelu, 2);
  withModule.dispose();
});

test('Transformer.generateSquareSubsequentMask: -inf above the diagonal, 0 elsewhere', async () => {
  const wt = await init({ variant: 'simd' });
  const m = wt.nn.Transformer.generateSquareSubsequentMask(3);
  assert.deepEqual([...m.data()], [0, -Infinity, -Infinity, 0, 0, -Infinity, 0, 0, 0]);
  m.dispose();
});

test("wt.nn.functional.multiHeadAttentionForward is the module's computation in sequence-first layout", async () => {
  const wt = await init({ variant: 'simd' });
  const blob = wt.load(PT);
  const spec = FX.mha.find((s) => s.name === 'distinct_bool_masks');
  const c = blob[spec.name];
  const [out, w] = wt.nn.functional.multiHeadAttentionForward(c.query, c.key, c.value, E, H, c.state.in_proj_weight,
    c.state.in_proj_bias, null, null, false, 0.0, c.state['out_proj.weight'], c.state['out_proj.bias'],
    { training: false, keyPaddingMask: c.key_padding_mask, attnMask: c.attn_mask });
  const problems = [];
  compare('out', out, c.out, problems);
  compare('weights', w, c.weights, problems);
  assert.deepEqual(problems, []);
  throwsWeft(() => wt.nn.functional.multiHeadAttentionForward(c.query, c.key, c.value, E, H), 'TypeError',
    /multiHeadAttentionForward\(\) missing required argument 'inProjWeight'/);
});

// ---- bad calls ----

test("bad shapes, dtypes and masks throw PyTorch's messages (in JS spelling)", async () => {
  const wt = await init({ variant: 'simd' });
  for (const c of FX.errors) {
    if (c.construct) {
      const { ctor, args, opts } = c.construct;
      throwsWeft(() => new wt.nn[ctor](...args, camelKeys(opts)), undefined, new RegExp(`^${c.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
      continue;
    }
    await noLeaks(wt, () => {
      const m = new wt.nn.MultiheadAttention(E, H, camelKeys(c.ctor));
      const args = {};
      for (const [name, s] of Object.entries(c.call)) args[name] = Array.isArray(s) ? wt.zeros(s) : wt.zeros(s.shape, { dtype: s.dtype });
      const { query, key, value, ...masks } = args;
      assert.throws(() => m(query, key, value, camelKeys(masks)), (e) => {
        assert.equal(e.name, 'WeftError', `${c.label}: ${e.message}`);
        assert.equal(e.message, c.message, c.label);
        return true;
      });
      for (const t of Object.values(args)) t.dispose();
      m.dispose();
    });
  }
  const m = new wt.nn.MultiheadAttention(E, H);
  const x = wt.zeros([3, 2, E]);
  throwsWeft(() => m(x, x, x, { isCausal: true }), 'InvalidArgument', /^Need attnMask if specifying the isCausal hint/);
  throwsWeft(() => m(x, x, x, { needWeight: false }), 'TypeError', /unexpected option 'needWeight'/);
  throwsWeft(() => new wt.nn.TransformerEncoder(x, 2), 'TypeError', /the layer must be a wt.nn.Module/);
  x.dispose();
  m.dispose();
});

test("the demo's autograd panel draws an attention block's graph (its 'attention' preset)", async () => {
  const wt = await init({ variant: 'simd' });
  const { PRESETS, buildGraph, simulate } = await import('../../demo/engine.js');
  await noLeaks(wt, () => {
    const graph = buildGraph(wt, PRESETS.attention.code);
    const names = [...graph.nodes.values()].map((n) => n.name);
    assert.equal(names.filter((n) => n === 'SoftmaxBackward0').length, 1);
    assert.equal(names.filter((n) => n === 'MmBackward0').length, 5);
    assert.equal(names.filter((n) => n === 'AccumulateGrad').length, 3);
    assert.ok(simulate(graph).length > graph.nodes.size);
    graph.dispose();
  });
});
