// wt.nn against PyTorch 1.13 (tests/fixtures/nn.json, made by
// tests/fixtures/gen_nn_fixtures.py): default initialization after
// manualSeed within 1 float32 ulp, nn.init's functions, calculateGain, every
// layer's repr, module outputs and gradients (and BatchNorm's running
// statistics after the call), and a nested module's repr, state-dict keys in
// order, names, strict-loading messages and output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VARIANTS, init, close, throwsWeft } from './helpers.mjs';

const FX = JSON.parse(readFileSync(new URL('../fixtures/nn.json', import.meta.url), 'utf8'));
const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const camelKeys = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [camel(k), v]));

function make(wt, { ctor, args, opts }) {
  return new wt.nn[ctor](...args, camelKeys(opts));
}

// a message as a literal regular expression
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const toTensor = (wt, { size, dtype, data }) => wt.tensor(data, { dtype }).reshape(size);

// float32 values apart, in units in the last place
const bits = new Int32Array(1);
const f32 = new Float32Array(bits.buffer);
function ordered(v) {
  f32[0] = v;
  return bits[0] < 0 ? -(bits[0] & 0x7fffffff) : bits[0];
}
const ulps = (a, b) => Math.abs(ordered(a) - ordered(b));

function compare(label, got, want, tol, problems) {
  if (JSON.stringify(got.shape) !== JSON.stringify(want.size)) {
    problems.push(`${label}: shape [${got.shape}] vs [${want.size}]`);
    return;
  }
  const g = got.data();
  for (let i = 0; i < want.data.length; i++) {
    const w = want.data[i];
    const v = Number(g[i]);
    if (!close(v, w, tol)) {
      problems.push(`${label}[${i}]: ${v} vs ${w}`);
      return;
    }
  }
}

test('default initialization: after manualSeed(s) each layer holds what PyTorch holds after manual_seed(s)', async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    const problems = [];
    let worst = 0;
    for (const c of FX.init) {
      wt.manualSeed(c.seed);
      const m = make(wt, c.layer);
      const sd = m.stateDict();
      assert.deepEqual(Object.keys(sd), Object.keys(c.state), `${c.layer.ctor} keys`);
      for (const [key, want] of Object.entries(c.state)) {
        const got = sd[key].data();
        assert.deepEqual(sd[key].shape, want.size, `${c.layer.ctor}.${key} shape`);
        want.data.forEach((w, i) => {
          const d = want.dtype === 'float32' ? ulps(Number(got[i]), w) : Math.abs(Number(got[i]) - w);
          worst = Math.max(worst, d);
          if (d > 1) problems.push(`${variant} seed ${c.seed} ${c.layer.ctor}(${c.layer.args}).${key}[${i}]: ${got[i]} vs ${w}`);
        });
        sd[key].dispose();
      }
      m.dispose();
    }
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} values more than 1 ulp from PyTorch's`);
    test.diagnostic?.(`${variant}: worst ${worst} ulp`);
  }
});

test("nn.init's functions and calculateGain against PyTorch", async () => {
  const wt = await init({ variant: 'simd' });
  const problems = [];
  for (const c of FX.initFns) {
    wt.manualSeed(c.seed);
    const t = wt.empty(c.size, { dtype: c.dtype });
    const args = Object.keys(c.opts).length ? [...c.args, camelKeys(c.opts)] : c.args;
    const r = wt.nn.init[camel(c.fn)](t, ...args);
    assert.equal(r, t, `${c.fn} returns its tensor`);
    // uniform draws are PyTorch's to 1 ulp; normal draws to the few ulps
    // wt.randn is from the AVX2 kernel; trunc_normal_ adds erfinv's
    const tol = /normal/.test(c.fn) ? 4 : 1;
    const got = t.data();
    c.out.data.forEach((w, i) => {
      const d = c.dtype === 'float32' ? ulps(got[i], w) : Math.abs(got[i] - w) / (1 + Math.abs(w)) / 2 ** -52;
      if (d > tol) problems.push(`seed ${c.seed} ${c.fn}(${c.size}, ${c.dtype}, ${JSON.stringify(c.args)})[${i}]: ${got[i]} vs ${w} (${d} ulp)`);
    });
    t.dispose();
  }
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} values off`);
  for (const [name, param, gain] of FX.gains) assert.equal(wt.nn.init.calculateGain(name, param), gain, name);
  throwsWeft(() => wt.nn.init.calculateGain('cosine'), 'InvalidArgument', /^Unsupported nonlinearity cosine$/);
  throwsWeft(() => wt.nn.init.xavierUniform_(wt.empty(3)), 'InvalidArgument',
    /^Fan in and fan out can not be computed for tensor with fewer than 2 dimensions$/);
  throwsWeft(() => wt.nn.init.kaimingNormal_(wt.empty(3, 3), { mode: 'fan_avg' }), 'InvalidArgument',
    /^Mode fan_avg not supported, please use one of fan_in, fan_out$/);
});

test("every layer's repr is PyTorch's", async () => {
  const wt = await init({ variant: 'simd' });
  for (const c of FX.reprs) {
    const m = make(wt, c.layer);
    assert.equal(String(m), c.repr, `${c.layer.ctor}(${JSON.stringify(c.layer.args)}, ${JSON.stringify(c.layer.opts)})`);
    m.dispose();
  }
});

for (const variant of VARIANTS) {
  test(`${variant}: module outputs, gradients and running statistics`, async (t) => {
    const wt = await init({ variant });
    const problems = [];
    for (const c of FX.modules) {
      const label = `${c.layer.ctor}(${JSON.stringify(c.layer.args)}, ${JSON.stringify(c.layer.opts)})${c.train ? '' : ' eval'}`;
      wt.tidy(() => {
        const m = make(wt, c.layer);
        m.train(c.train);
        m.loadStateDict(Object.fromEntries(Object.entries(c.state).map(([k, v]) => [k, toTensor(wt, v)])));
        const inputs = c.inputs.map((v, i) => {
          const x = toTensor(wt, v);
          return i === 0 && v.dtype === 'float32' ? x.requiresGrad_() : x;
        });
        wt.manualSeed(c.seed);
        const out = m(...inputs);
        compare(`${label} out`, out, c.out, 2e-5, problems);
        if (Object.keys(c.grads).length) {
          out.sum().backward();
          const named = Object.fromEntries(m.namedParameters());
          for (const [name, want] of Object.entries(c.grads)) {
            const p = name === 'input' ? inputs[0] : named[name];
            if (!p.grad) problems.push(`${label}: no grad for ${name}`);
            else compare(`${label} grad ${name}`, p.grad, want, 1e-4, problems);
          }
        }
        const bufs = Object.fromEntries(m.namedBuffers());
        for (const [name, want] of Object.entries(c.after)) compare(`${label} buffer ${name}`, bufs[name], want, 2e-5, problems);
        m.dispose();
      });
    }
    assert.deepEqual(problems, []);
  });
}

test("ConvTranspose2d's outputSize: the output padding it picks, or PyTorch's error", async () => {
  const wt = await init({ variant: 'simd' });
  for (const c of FX.outputPadding) {
    const m = make(wt, c.layer);
    const x = wt.zeros(c.inputSize);
    if (c.error) throwsWeft(() => m._outputPadding(x, c.outputSize), 'InvalidArgument', new RegExp(`^${escape(c.error)}$`));
    else assert.deepEqual(m._outputPadding(x, c.outputSize), c.outputPadding);
    x.dispose();
    m.dispose();
  }
});

// the nested module of gen_nn_fixtures.py's net_case, built with wt.nn
function makeNet(wt) {
  const nn = wt.nn;
  class Block extends nn.Module {
    constructor() {
      super();
      this.conv = new nn.Conv2d(1, 4, 3, { padding: 1 });
      this.bn = new nn.BatchNorm2d(4);
      this.registerBuffer('scale', wt.ones(1));
      this.registerBuffer('cache', wt.zeros(2), { persistent: false });
    }
  }
  class Net extends nn.Module {
    constructor() {
      super();
      this.block = new Block();
      this.features = new nn.Sequential(new nn.ReLU(), new nn.MaxPool2d(2), new nn.Flatten());
      this.heads = new nn.ModuleList([new nn.Linear(16, 5), new nn.Linear(5, 3)]);
      this.extra = new nn.ModuleDict({ act: new nn.Tanh(), proj: new nn.Linear(3, 3, { bias: false }) });
      this.tied = new nn.Linear(3, 3, { bias: false });
      this.tied.weight = this.extra.get('proj').weight;
      this.temperature = new nn.Parameter(wt.ones(1));
    }
    forward(x) {
      const h = this.features(this.block.bn(this.block.conv(x)));
      return this.tied(this.extra.get('act')(this.heads.at(1)(this.heads.at(0)(h)))).mul(this.temperature);
    }
  }
  return new Net();
}

test('a nested module: repr, state-dict keys in order, names, strict loading, output', async () => {
  const wt = await init({ variant: 'simd' });
  const N = FX.net;
  const net = makeNet(wt);
  assert.equal(String(net), N.repr);
  const sd = net.stateDict();
  assert.deepEqual(Object.keys(sd), N.keys);
  for (const v of Object.values(sd)) v.dispose();
  const names = (pairs) => pairs.map(([n]) => n);
  assert.deepEqual(names(net.namedParameters()), N.namedParameters);
  assert.deepEqual(names(net.namedBuffers()), N.namedBuffers);
  assert.deepEqual(names(net.namedModules()), N.namedModules);
  assert.deepEqual(names(net.namedChildren()), N.namedChildren);
  assert.equal(net.parameters().length, N.namedParameters.length, 'the tied weight once');

  const load = (keys) => Object.fromEntries(keys.map((k) => [k, toTensor(wt, N.state[k])]));
  for (const e of N.errors) {
    const bad = load(N.keys);
    for (const k of e.drop) delete bad[k];
    for (const [k, size] of Object.entries(e.shapes)) bad[k] = wt.zeros(size);
    for (const k of e.extra) bad[k] = wt.zeros(1);
    throwsWeft(() => net.loadStateDict(bad), 'InvalidArgument', new RegExp(`^${escape(e.message)}$`));
    assert.equal(Object.keys(bad).length > 0, true);
  }
  const partial = new Map(Object.entries(load(N.keys.filter((k) => k !== 'temperature'))));
  assert.deepEqual(net.loadStateDict(partial, { strict: false }), N.nonStrict);
  const full = load(N.keys);
  const weight = net.heads.at(0).weight;
  assert.deepEqual(net.loadStateDict(full), { missingKeys: [], unexpectedKeys: [] });
  assert.equal(net.heads.at(0).weight, weight, 'copied in place: the same Parameter');
  compare('heads.0.weight', weight, N.state['heads.0.weight'], 0, []);
  const problems = [];
  net.eval();
  compare('net out', wt.noGrad(() => net(toTensor(wt, N.input))), N.out, 2e-5, problems);
  assert.deepEqual(problems, []);
  net.dispose();
});
