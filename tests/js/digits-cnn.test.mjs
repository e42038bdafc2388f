// The digits CNN PyTorch trained (demo/data/train_digits_cnn.py) loaded from
// its torch.save file into the wt.nn module of demo/digits/model.mjs, on every
// variant: PyTorch's repr, state-dict keys, dtypes and shapes; PyTorch's eval
// logits on the 299 test images and the script's accuracy; strict loading's
// refusals; fine-tuning in weft (a new head on the frozen features, SGD); the
// Node example's output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VARIANTS, counts, init } from './helpers.mjs';
import { digitsCNN, loadDigitsCNN, strokesToPixels, testSet } from '../../demo/digits/model.mjs';

const data = (f) => new URL(`../../demo/data/${f}`, import.meta.url);
const ref = JSON.parse(readFileSync(data('digits_cnn_logits.json'), 'utf8'));
const pt = readFileSync(data('digits_cnn.pt'));
const npy = () => [readFileSync(data('digits-images.npy')), readFileSync(data('digits-labels.npy'))];
const TOL = 2e-5; // float32 sums in another order: logits are O(10)

const maxAbsDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

for (const variant of VARIANTS) {
  test(`${variant}: digits_cnn.pt in wt.nn gives PyTorch's module, logits and accuracy`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const model = loadDigitsCNN(wt, pt);
    assert.equal(String(model), ref.repr);
    const sd = model.stateDict();
    assert.deepEqual(Object.keys(sd), Object.keys(ref.stateDict));
    for (const [k, t] of Object.entries(sd)) assert.deepEqual({ dtype: t.dtype, shape: t.shape }, ref.stateDict[k], k);
    assert.equal(sd['features.1.num_batches_tracked'].item(), sd['features.5.num_batches_tracked'].item());
    for (const t of Object.values(sd)) t.dispose();
    const { x, y, indices } = testSet(wt, ...npy());
    assert.deepEqual(indices, ref.testIndices);
    assert.deepEqual(Array.from(y.data(), Number), ref.labels);
    const { logits, pred } = wt.tidy(() => wt.noGrad(() => {
      const out = model(x);
      return { logits: Array.from(out.data()), pred: Array.from(out.argmax(1).data(), Number) };
    }));
    const diff = maxAbsDiff(logits, ref.logits.flat());
    assert.ok(diff < TOL, `max |weft - PyTorch| = ${diff}`);
    assert.deepEqual(pred, ref.predictions);
    assert.equal(pred.filter((p, i) => p === ref.labels[i]).length, ref.correct);
    assert.ok(ref.correct / ref.labels.length > 0.95, `the script's accuracy ${ref.accuracy}`);
    x.dispose(); y.dispose(); model.dispose();
    assert.deepEqual(counts(wt), before);
  });
}

test('strict loading: a missing, an extra and a misshapen key are PyTorch\'s errors', async () => {
  const wt = await init();
  const model = digitsCNN(wt);
  const sd = wt.load(pt);
  const missing = { ...sd };
  delete missing['features.1.running_var'];
  assert.throws(() => model.loadStateDict(missing),
    /Error\(s\) in loading state_dict for DigitsCNN:\s+Missing key\(s\) in state_dict: "features\.1\.running_var"\./);
  assert.throws(() => model.loadStateDict({ ...sd, 'classifier.4.weight': sd['classifier.3.weight'] }),
    /Unexpected key\(s\) in state_dict: "classifier\.4\.weight"\./);
  assert.throws(() => model.loadStateDict({ ...sd, 'classifier.1.weight': sd['classifier.3.weight'] }),
    /size mismatch for classifier\.1\.weight: copying a param with shape \[10, 64\] from checkpoint, the shape in current model is \[64, 128\]\./);
  assert.deepEqual(model.loadStateDict(sd), { missingKeys: [], unexpectedKeys: [] });
  for (const t of Object.values(sd)) t.dispose();
  model.dispose();
});

test('fine-tuning in weft: a fresh head on the frozen PyTorch features learns with SGD, loss goes down', async () => {
  const wt = await init();
  wt.manualSeed(0);
  const model = loadDigitsCNN(wt, pt);
  const { x, y } = testSet(wt, ...npy());
  const head = model.classifier[3];
  head.resetParameters(); // forget the last layer: chance level
  model.features.requiresGrad_(false);
  model.train();
  model.features.eval(); // frozen features keep their running statistics
  const bnBefore = Array.from(model.features[1].running_mean.data());
  const opt = new wt.optim.SGD(model.classifier.parameters(), { lr: 0.05, momentum: 0.9 });
  const lossFn = new wt.nn.CrossEntropyLoss();
  const losses = [];
  const live = [];
  for (let step = 0; step < 30; step++) {
    live.push(wt.memory().tensors);
    const i = (step * 64) % 256;
    const loss = lossFn(model(x.narrow(0, i, 64)), y.narrow(0, i, 64));
    opt.zeroGrad();
    loss.backward();
    opt.step();
    losses.push(loss.item());
  }
  assert.ok(losses[0] > 1.5, `a fresh head starts near chance: ${losses[0]}`);
  const tail = losses.slice(-4).reduce((a, b) => a + b) / 4;
  assert.ok(tail < losses[0] / 3, `loss ${losses[0]} -> ${tail}`);
  assert.equal(model.features[0].weight.grad, null, 'frozen features get no gradient');
  assert.deepEqual(Array.from(model.features[1].running_mean.data()), bnBefore);
  model.eval();
  const correct = wt.tidy(() => wt.noGrad(() => model(x).argmax(1).eq(y).sum().item()));
  assert.ok(correct / 299 > 0.9, `accuracy after fine-tuning ${correct}/299`);
  assert.equal(live[29], live[5], 'a PyTorch-style loop without tidy or dispose keeps memory flat (wt.nn\'s step rule)');
  model.dispose();
  x.dispose(); y.dispose();
});

test('strokesToPixels: what a drawn digit becomes is optdigits\' 0..16 block counts, centred', () => {
  assert.deepEqual(strokesToPixels([], 280), new Array(64).fill(0));
  // a vertical bar drawn anywhere on the canvas: a thin centred "1"
  const one = strokesToPixels([[{ x: 40, y: 30 }, { x: 40, y: 250 }]], 280);
  assert.equal(one.length, 64);
  assert.ok(one.every((v) => Number.isInteger(v) && v >= 0 && v <= 16));
  const cols = Array.from({ length: 8 }, (_, c) => one.filter((_, i) => i % 8 === c).reduce((a, b) => a + b));
  assert.ok(cols[3] + cols[4] > 0.9 * cols.reduce((a, b) => a + b), `ink in the middle columns: ${cols}`);
  assert.ok(one.slice(0, 8).some((v) => v > 0) && one.slice(56).some((v) => v > 0), 'spans the height');
  assert.deepEqual(strokesToPixels([[{ x: 140, y: 30 }, { x: 140, y: 250 }]], 280), one, 'position does not matter');
});

test('the Node example prints the script\'s accuracy and predictions', () => {
  const script = fileURLToPath(new URL('../../demo/node/digits_cnn.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [script, '--show', '2'], { encoding: 'utf8' });
  assert.match(out, /^DigitsCNN\(\n {2}\(features\): Sequential\(/);
  assert.match(out, /features\.1\.num_batches_tracked: int64 \[\]/);
  assert.ok(out.includes(`test accuracy: ${ref.correct}/299 = ${(ref.correct / 299).toFixed(4)}`), out);
  assert.match(out, new RegExp(`image 5: label ${ref.labels[0]}, predicted ${ref.predictions[0]} \\(p = 0\\.\\d{3}\\)`));
  assert.equal((out.match(/^image \d+:/gm) ?? []).length, 2);
});
