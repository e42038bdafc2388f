// weft/models (issue 23) against torchvision 0.14 (tests/fixtures/models.json,
// made by tests/fixtures/gen_models_fixtures.py): printed form and state-dict
// keys / shapes / dtypes of resnet18/34/50 and mobilenet_v2; outputs of
// resnet18(numClasses 10) and mobilenet_v2(widthMult 0.25) on weights from the
// generator's formula, gone through wt.save / wt.load / strict loadStateDict:
// eval (the fused path, NCHW and channels_last, 1 and 2 threads, and the plain
// modules), train mode (batch statistics, running-stat update; gradients in float64);
// the folded weights follow in-place changes; fine-tuning a head on a frozen
// backbone lowers the loss; strict loading names what is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { models } from 'weft/models';
import { init, counts, VARIANTS } from './helpers.mjs';

const FX = JSON.parse(readFileSync(new URL('../fixtures/models.json', import.meta.url), 'utf8'));
const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const optionsOf = (kwargs) => Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [camel(k), v]));
const BUILDER = { resnet18: 'resnet18', resnet34: 'resnet34', resnet50: 'resnet50', mobilenet_v2: 'mobilenetV2' };
const build = (wt, name, kwargs) => models(wt)[BUILDER[name]](optionsOf(kwargs));

// ---- the generator's formula (gen_models_fixtures.py: unit, kind, formula, formula_input) ----
const unit = (i, k) => ((i * 69069 + k * 1013 + 12345) % 65521) / 65521 - 0.5;
const numel = (shape) => shape.reduce((a, b) => a * b, 1);

function kind(key, shape, keys) {
  const dot = key.lastIndexOf('.');
  const owner = key.slice(0, dot);
  const leaf = key.slice(dot + 1);
  if (leaf === 'num_batches_tracked') return 'count';
  if (leaf === 'running_mean' || leaf === 'running_var') return leaf;
  if (shape.length === 4) return 'conv';
  if (shape.length === 2) return 'linear';
  return (keys.has(`${owner}.running_mean`) ? 'bn_' : 'linear_') + leaf;
}

const SCALE = { running_mean: 0.2, running_var: 0.5, bn_weight: 0.5, bn_bias: 0.2, linear_bias: 0.2 };

function formulaTensor(wt, k, key, shape, keys) {
  const what = kind(key, shape, keys);
  if (what === 'count') return wt.full(shape, k % 5, { dtype: 'int64' });
  const fanIn = shape.length > 1 ? numel(shape.slice(1)) : 1;
  const scale = what === 'conv' ? 2 * Math.sqrt(6 / fanIn) : what === 'linear' ? 2 * Math.sqrt(3 / fanIn) : SCALE[what];
  const offset = what === 'running_var' || what === 'bn_weight' ? 1.0 : 0.0;
  const n = numel(shape);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = offset + unit(i, k) * scale;
  return shaped(wt, data, shape);
}

// a tensor of shape from flat data (the flat one released: the view keeps the storage)
function shaped(wt, data, shape) {
  const flat = wt.tensor(data);
  const t = flat.reshape(shape);
  flat.dispose();
  return t;
}

function formulaStateDict(wt, model) {
  const shapes = Object.entries(model.stateDict()).map(([key, t]) => {
    const s = t.shape;
    t.dispose();
    return [key, s];
  });
  const keys = new Set(shapes.map(([key]) => key));
  return Object.fromEntries(shapes.map(([key, s], k) => [key, formulaTensor(wt, k, key, s, keys)]));
}

function formulaInput(wt) {
  const n = numel(FX.input_shape);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * 7919 + 17) % 10007) / 10007 * 4 - 2;
  return shaped(wt, data, FX.input_shape);
}

const disposeAll = (obj) => { for (const t of Object.values(obj)) t.dispose(); };

// |got - want| within rel of the largest |want|
function assertClose(got, want, rel, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  const scale = Math.max(1e-6, ...want.map(Math.abs));
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= rel * scale, `${what}: worst difference ${worst} (largest value ${scale})`);
}
const values = (t) => Array.from(t.toArray().flat(Infinity));

test('printed form and state-dict keys, shapes and dtypes are torchvision 0.14\'s', async () => {
  const wt = await init({ variant: 'simd' });
  for (const spec of FX.specs) {
    const what = `${spec.name}(${JSON.stringify(spec.kwargs)})`;
    const before = counts(wt);
    const model = build(wt, spec.name, spec.kwargs);
    assert.equal(String(model), spec.repr, what);
    const sd = model.stateDict();
    assert.deepEqual(Object.entries(sd).map(([key, t]) => [key, t.shape, t.dtype]), spec.keys, what);
    disposeAll(sd);
    model.dispose();
    assert.deepEqual(counts(wt), before, `${what}: nothing left after dispose`);
  }
});

// the model of fixture `o`, its weights through wt.save / wt.load and a strict load
function loaded(wt, o) {
  const model = build(wt, o.name, o.kwargs);
  const sd = formulaStateDict(wt, model);
  const back = wt.load(wt.save(sd));
  disposeAll(sd);
  assert.deepEqual(model.loadStateDict(back), { missingKeys: [], unexpectedKeys: [] });
  disposeAll(back);
  return model;
}

for (const o of FX.outputs) {
  test(`${o.name}: eval and train outputs equal PyTorch's on every variant`, async (t) => {
    for (const variant of VARIANTS) {
      const wt = await init({ variant });
      const before = counts(wt);
      const model = loaded(wt, o).eval();
      const x = formulaInput(wt);
      const threads = wt.maxThreads() >= 2 ? [1, 2] : [1];
      const evalOut = (input) => wt.noGrad(() => {
        const y = model(input);
        const v = values(y);
        y.dispose();
        return v;
      });
      for (const n of threads) {
        wt.setNumThreads(n);
        assertClose(evalOut(x), o.eval, 2e-5, `${variant} ${n}T NCHW eval (fused)`);
      }
      // grad mode on and parameters that require grad: the plain modules
      const plain = model(x);
      assert.ok(plain.requiresGrad, 'the plain path records a graph');
      assertClose(values(plain), o.eval, 2e-5, `${variant} eval (plain modules)`);
      plain.dispose();
      model.to({ memoryFormat: 'channels_last' });
      const xl = x.contiguous({ memoryFormat: 'channels_last' });
      for (const n of threads) {
        wt.setNumThreads(n);
        assertClose(evalOut(xl), o.eval, 2e-5, `${variant} ${n}T channels_last eval (fused)`);
      }
      xl.dispose();
      wt.setNumThreads(1);
      model.to({ memoryFormat: 'contiguous_format' });
      const trainable = typeof wt.relu6 === 'function' || o.name.startsWith('resnet');
      if (trainable) {
        model.train();
        const out = model(x);
        assertClose(values(out), o.train, 2e-4, `${variant} train`);
        const bn = o.name === 'resnet18' ? model.bn1 : model.features.at(0).at(1);
        assertClose(values(bn.running_mean), o.running_mean, 1e-5, `${variant} running_mean after a train step`);
        assertClose(values(bn.running_var), o.running_var, 1e-5, `${variant} running_var after a train step`);
        const target = wt.tensor(FX.target, { dtype: 'int64' });
        const loss = wt.crossEntropy(out, target);
        assert.ok(Math.abs(loss.item() - o.loss) <= 1e-4 * Math.abs(o.loss), `${variant} loss ${loss.item()} vs ${o.loss}`);
        // gradients in float64, as the fixture's (float32 ones of these deep
        // small batches are ill-conditioned: a few % apart between correct
        // implementations)
        model.double();
        const x64 = x.double();
        const out64 = model(x64);
        const loss64 = wt.crossEntropy(out64, target);
        loss64.backward();
        const params = Object.fromEntries(model.namedParameters());
        for (const [key, want] of Object.entries(o.grad_norms)) {
          const got = wt.tidy(() => wt.noGrad(() => params[key].grad.norm().item()));
          assert.ok(Math.abs(got - want) <= 1e-6 * want, `${variant} |grad ${key}| ${got} vs ${want}`);
        }
        model.zeroGrad({ setToNone: true });
        for (const r of [x64, out64, loss64]) r.dispose();
        for (const r of [out, target, loss]) r.dispose();
      }
      x.dispose();
      model.dispose();
      assert.deepEqual(counts(wt), before, `${variant}: nothing left`);
      if (!trainable) t.diagnostic(`${variant}: ${o.name}'s train mode not checked: ReLU6 needs wt.relu6 (branch s8-act)`);
    }
  });
}

test('the folded weights follow in-place changes, loadStateDict and train()', async () => {
  const wt = await init({ variant: 'simd' });
  const o = FX.outputs.find((f) => f.name === 'resnet18');
  const model = loaded(wt, o).eval();
  const x = formulaInput(wt);
  const fused = () => wt.noGrad(() => values(model(x)));
  const plain = () => {
    const y = model(x);
    const v = values(y);
    y.dispose();
    return v;
  };
  const first = fused();
  assertClose(first, o.eval, 2e-5, 'before');
  wt.noGrad(() => model.layer2.at(0).bn1.weight.mul_(2));            // an optimizer-like write
  const changed = fused();
  assert.ok(changed.some((v, i) => Math.abs(v - first[i]) > 1e-3), 'the change reaches the fused output');
  assertClose(changed, plain(), 2e-5, 'fused = plain after an in-place change');
  const sd = model.stateDict();
  const doubled = sd['layer3.1.bn2.running_var'].mul(4);
  model.loadStateDict({ 'layer3.1.bn2.running_var': doubled }, { strict: false });
  assertClose(fused(), plain(), 2e-5, 'fused = plain after loadStateDict');
  model.train();
  wt.noGrad(() => model(x).dispose());                               // running statistics move
  model.eval();
  assertClose(fused(), plain(), 2e-5, 'fused = plain after a train step');
  for (const t of [doubled, x]) t.dispose();
  disposeAll(sd);
  model.dispose();
});

test('fine-tuning a new head on a frozen resnet18 lowers the loss', async () => {
  const wt = await init({ variant: 'simd' });
  wt.manualSeed(0);
  const model = models(wt).resnet18({ numClasses: 10 });
  model.requiresGrad_(false);
  model.fc.requiresGrad_(true);
  const frozen = model.layer1.at(0).conv1.weight.clone();
  const x = wt.randn([4, 3, 32, 32]);
  const y = wt.tensor([1, 3, 5, 7], { dtype: 'int64' });
  const opt = new wt.optim.SGD(model.fc.parameters(), { lr: 0.05, momentum: 0.9 });
  const losses = [];
  for (let step = 0; step < 6; step++) {
    opt.zeroGrad();
    const loss = wt.crossEntropy(model(x), y);
    loss.backward();
    opt.step();
    losses.push(loss.item());
  }
  assert.ok(losses[5] < losses[0] * 0.8, `loss ${losses.map((l) => l.toFixed(3)).join(' -> ')}`);
  assert.equal(model.layer1.at(0).conv1.weight.grad, null, 'a frozen weight gets no gradient');
  assert.equal(wt.tidy(() => wt.noGrad(() => model.layer1.at(0).conv1.weight.sub(frozen).abs().max().item())), 0,
    'the backbone is unchanged');
  for (const t of [frozen, x, y]) t.dispose();
  model.dispose();
});

test('strict loading names missing, unexpected and mismatched keys; weights are refused', async () => {
  const wt = await init({ variant: 'simd' });
  const m = models(wt);
  const model = m.mobilenetV2({ widthMult: 0.25, numClasses: 10 });
  const sd = model.stateDict();
  const { 'classifier.1.bias': bias, ...rest } = sd;
  const wrong = wt.zeros([5, 1280]);
  assert.throws(() => model.loadStateDict({ ...rest, 'classifier.1.weight': wrong, extra: bias }), {
    message: 'Error(s) in loading state_dict for MobileNetV2:\n\tMissing key(s) in state_dict: "classifier.1.bias". ' +
      '\n\tUnexpected key(s) in state_dict: "extra". \n\tsize mismatch for classifier.1.weight: copying a param with ' +
      'shape [5, 1280] from checkpoint, the shape in current model is [10, 1280].',
  });
  wrong.dispose();
  disposeAll(sd);
  model.dispose();
  assert.throws(() => m.resnet18({ weights: 'IMAGENET1K_V1' }), /downloads no weights/);
  assert.throws(() => m.resnet18({ numClasse: 10 }), /unexpected option 'numClasse'/);
  assert.throws(() => new m.InvertedResidual(8, 8, 3, 6), /stride should be 1 or 2 instead of 3/);
  assert.throws(() => new m.BasicBlock(64, 64, { groups: 2 }), /BasicBlock only supports groups=1 and base_width=64/);
  assert.throws(() => models({}), /weft API object/);
});
