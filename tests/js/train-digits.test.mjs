// The Node training example (demo/node/train_digits.mjs, issue 15): the
// digits MLP reaches 95% test accuracy in a fixed-seed run, prints one
// progress line per epoch, and leaves no tensor behind. Not a timing test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks } from './helpers.mjs';
import { trainDigits } from '../../demo/node/train_digits.mjs';

test('the digits MLP reaches >= 95% test accuracy (seed 0, the example\'s defaults)', async () => {
  const wt = await init();
  const lines = [];
  let last;
  await noLeaks(wt, async () => {
    last = await trainDigits({ wt, log: (l) => lines.push(l) });
  });
  assert.match(lines[0], /^MLP 64 → 64 → 10 .*seed 0: 1498 training \/ 299 test images$/);
  assert.equal(lines.length, 1 + 10);
  assert.match(lines[10], /^epoch  10\/10  loss \d\.\d{4}  train acc +\d+\.\d%  test acc +\d+\.\d%  \d+\.\d s$/);
  assert.ok(last.testAccuracy >= 0.95, `test accuracy ${last.testAccuracy}`);
  assert.ok(last.loss < 0.2, `final training loss ${last.loss}`);
});

test('the digits CNN trains through conv2d and maxPool2d backward (seed 0, 3 epochs)', async () => {
  const wt = await init();
  const lines = [];
  let last;
  await noLeaks(wt, async () => {
    last = await trainDigits({ wt, model: 'cnn', epochs: 3, log: (l) => lines.push(l) });
  });
  assert.match(lines[0], /^CNN conv 1 → 16 3×3 → ReLU → maxPool 2 → linear 256 → 10/);
  assert.ok(last.testAccuracy >= 0.9, `test accuracy ${last.testAccuracy}`);
});

test('a fixed seed gives the same run twice', async () => {
  const wt = await init();
  const quiet = { wt, epochs: 2, log: () => {} };
  const a = await trainDigits(quiet);
  const b = await trainDigits(quiet);
  assert.deepEqual(a, b);
});

test('an unknown model is refused before training', async () => {
  const wt = await init();
  await noLeaks(wt, async () => {
    await assert.rejects(trainDigits({ wt, model: 'rnn', log: () => {} }), /unknown model 'rnn' \(expected mlp or cnn\)/);
  });
});
