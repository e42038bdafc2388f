// The autograd panel (demo/index.html) and the training page (demo/train.html)
// in Chromium, served with COOP/COEP (issue 15).
//   node --test tests/browser/
// Needs `npm run build` (dist/) and /usr/bin/chromium. Screenshots go to tests/browser/output/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT, ROOT, servedPage, text } from './helpers.mjs';

const TIMEOUT = 120000;
fs.mkdirSync(OUTPUT, { recursive: true });
if (!fs.existsSync(path.join(ROOT, 'dist/browser.js'))) {
  throw new Error('dist/browser.js is missing: run `npm run build` first');
}

// Clicks Step until the panel's step text is in `phase`; returns every step text seen.
async function stepUntil(page, phase, limit = 100) {
  const seen = [];
  for (let i = 0; i < limit; i++) {
    if (await page.locator('#ag-text').getAttribute('data-phase') === phase) return seen;
    await page.click('#ag-step');
    seen.push(await text(page, '#ag-text'));
  }
  throw new Error(`no ${phase} step after ${limit} clicks: ${seen.slice(-3).join(' | ')}`);
}

const listRows = (page, sel) => page.$$eval(`${sel} > li:not(.hint)`, (lis) => lis.map((li) =>
  `${li.querySelector('span').textContent}=${li.querySelector('b')?.textContent ?? ''}`));

describe('autograd panel, seed 004\'s program', { timeout: TIMEOUT }, () => {
  let page, errors;
  const served = servedPage({ before, after });
  before(() => ({ page, errors } = served));

  test('draws the graph: grad_fn names, the tensors they belong to, next edges', async () => {
    assert.equal(await page.locator('#ag-graph').getAttribute('data-state'), 'ok', await text(page, '#ag-status'));
    const nodes = await page.$$eval('#ag-graph .ag-node', (gs) => gs.map((g) => `${g.dataset.name}:${g.dataset.tensor ?? ''}`));
    assert.deepEqual(nodes.sort(), ['AccumulateGrad:t0', 'AccumulateGrad:t1', 'AddBackward0:b', 'AddBackward0:c',
      'GraphRoot:', 'MeanBackward0:e', 'MmBackward0:a', 'SinBackward0:d']);
    // GraphRoot→e, e→d, d→c, c→b, c→t0, b→a, b→t1, a→t0, a→t1
    assert.equal(await page.locator('#ag-graph .ag-edge').count(), 9);
    assert.match(await page.locator('#ag-graph .ag-node[data-tensor="a"]').innerHTML(), /saves self = t0, mat2 = t1/);
    assert.match(await page.locator('#ag-graph .ag-node[data-tensor="t0"]').innerHTML(), /leaf t0 \[2,2\]/);
  });

  test('the walk over next edges counts dependencies: t0 and t1 are reached twice', async () => {
    await page.click('#ag-reset');
    await stepUntil(page, 'queue');
    assert.deepEqual((await listRows(page, '#ag-deps')).sort(), ['AccumulateGrad (t0)=2', 'AccumulateGrad (t1)=2',
      'AddBackward0 (b)=1', 'AddBackward0 (c)=1', 'MeanBackward0 (e)=1', 'MmBackward0 (a)=1', 'SinBackward0 (d)=1']);
    assert.deepEqual(await listRows(page, '#ag-queue'), ['GraphRoot=']);
  });

  test('stepping runs nodes in sequence order, sums the leaves\' two gradients and ends with the real grads', async () => {
    const seen = await stepUntil(page, 'done');
    const runs = seen.filter((s) => s.startsWith('run ')).map((s) => s.match(/^run (GraphRoot|\S+ \(\w+\))/)[1]);
    assert.deepEqual(runs.slice(0, 6), ['GraphRoot', 'MeanBackward0 (e)', 'SinBackward0 (d)', 'AddBackward0 (c)',
      'AddBackward0 (b)', 'MmBackward0 (a)']);
    assert.deepEqual(runs.slice(6).sort(), ['AccumulateGrad (t0)', 'AccumulateGrad (t1)']);
    assert.ok(seen.some((s) => /AccumulateGrad \(t0\): count 1: not ready, a new InputBuffer in not_ready/.test(s)));
    assert.ok(seen.some((s) => /run AccumulateGrad \(t0\): its InputBuffer \(2 gradients summed\) is added into t0\.grad/.test(s)));
    assert.equal(await page.locator('#ag-result').getAttribute('data-match'), 'true');
    for (const leaf of ['t0', 't1']) {
      const row = page.locator(`#ag-result tr[data-leaf="${leaf}"]`);
      const replay = await row.locator('.ag-replay').innerText();
      assert.match(replay, /^\[\[-?\d\.\d{4}, -?\d\.\d{4}\], \[-?\d\.\d{4}, -?\d\.\d{4}\]\]$/);
      assert.equal(await row.locator('.ag-real').innerText(), replay);
    }
    assert.match(await text(page, '#ag-text'), /GraphTask is complete/);
    await page.locator('#autograd-panel').screenshot({ path: path.join(OUTPUT, 'autograd-panel-done.png') });
  });

  test('Play animates the steps to the end', async () => {
    await page.click('#ag-reset');
    await page.click('#ag-play');
    assert.equal(await text(page, '#ag-play'), 'Pause');
    await page.waitForFunction(() => document.querySelector('#ag-text').dataset.phase === 'done', null, { timeout: 60000 });
    assert.equal(await text(page, '#ag-play'), 'Play');
    assert.equal(await page.locator('#ag-result').getAttribute('data-match'), 'true');
  });

  test('another program: the diamond orders the ready queue by sequence number', async () => {
    await page.selectOption('#ag-preset', 'diamond');
    assert.equal(await page.locator('#ag-graph').getAttribute('data-state'), 'ok', await text(page, '#ag-status'));
    const seen = await stepUntil(page, 'done');
    const runs = seen.filter((s) => s.startsWith('run ')).map((s) => s.match(/^run (GraphRoot|\S+ \(\w+\))/)[1]);
    // z = x.cos() was created after y = x.sin(): the larger sequence number runs first
    assert.deepEqual(runs, ['GraphRoot', 'SumBackward0 (s)', 'MulBackward0 (w)', 'CosBackward0 (z)', 'SinBackward0 (y)', 'AccumulateGrad (x)']);
    assert.equal(await page.locator('#ag-result').getAttribute('data-match'), 'true');
  });

  test('a bad program says what is wrong', async () => {
    await page.fill('#ag-program', 'x = wt.rand([2, 2], { requiresGrad: true })\ny = x.sin()');
    await page.click('#ag-build');
    assert.equal(await page.locator('#ag-graph').getAttribute('data-state'), 'error');
    assert.match(await text(page, '#ag-status'), /y has shape \[2,2\]: backward without a gradient needs a scalar/);
    await page.selectOption('#ag-preset', 'seed004');
    assert.equal(await page.locator('#ag-graph').getAttribute('data-state'), 'ok');
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});

describe('training page', { timeout: TIMEOUT }, () => {
  let page, errors;
  const served = servedPage({ before, after }, { file: 'train.html' });
  before(() => ({ page, errors } = served));

  test('runs the threaded build and shows the test digits', async () => {
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), true);
    assert.match(await text(page, '#backend-variant'), /simd-threads/);
    assert.equal(await page.locator('#train-grid .digit').count(), 48);
  });

  test('the MLP trains one epoch: the loss decreases, then a test accuracy and predictions', async () => {
    await page.fill('#train-epochs', '1');
    await page.click('#train-start');
    await page.waitForFunction(() => document.body.dataset.training === 'finished', null, { timeout: 60000 });
    const { losses, step } = await page.evaluate(() => ({ losses: window.trainDemo.state.losses, step: window.trainDemo.state.trainer.step }));
    assert.equal(step, 47); // ceil(1498 / 32)
    assert.equal(losses.length, 47);
    const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
    assert.ok(mean(losses.slice(-10)) < mean(losses.slice(0, 10)) / 2, `loss ${mean(losses.slice(0, 10))} -> ${mean(losses.slice(-10))}`);
    assert.equal(await text(page, '#train-step-count'), '47');
    assert.equal(await text(page, '#train-epoch'), '1 / 1');
    const acc = parseFloat(await text(page, '#test-acc'));
    assert.ok(acc > 80, `test accuracy after one epoch ${acc}%`);
    const right = await page.locator('#train-grid .digit[data-right="true"]').count();
    assert.ok(right > 38, `${right} of 48 test digits right`);
    assert.equal(await page.locator('#train-grid .digit figcaption', { hasText: '?' }).count(), 0);
    await page.screenshot({ path: path.join(OUTPUT, 'train-1280x800.png') });
  });

  test('Stop stops between steps; Start goes on from there', async () => {
    await page.fill('#train-epochs', '200');
    await page.click('#train-reset');
    await page.click('#train-start');
    await page.waitForFunction(() => window.trainDemo.state.losses.length > 0, null, { timeout: 30000 });
    await page.click('#train-stop');
    assert.equal(await page.evaluate(() => document.body.dataset.training), 'stopped');
    const at = await page.evaluate(() => window.trainDemo.state.trainer.step);
    assert.ok(at > 0 && at < 200 * 47, `stopped at step ${at}`);
    assert.equal(Number(await text(page, '#train-step-count')), at);
    await page.click('#train-start');
    await page.waitForFunction((n) => window.trainDemo.state.trainer.step > n, at, { timeout: 30000 });
    await page.click('#train-stop');
    assert.equal(await page.evaluate(() => window.trainDemo.state.losses.length), await page.evaluate(() => window.trainDemo.state.trainer.step));
  });

  test('the CNN trains (conv2d and maxPool2d backward)', async () => {
    await page.selectOption('#train-model', 'cnn');
    await page.click('#train-start');
    await page.waitForFunction(() => document.body.dataset.training === 'failed' || window.trainDemo.state.losses.length >= 20,
      null, { timeout: 60000 });
    assert.notEqual(await page.evaluate(() => document.body.dataset.training), 'failed', await text(page, '#status'));
    await page.click('#train-stop');
    const losses = await page.evaluate(() => window.trainDemo.state.losses);
    const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
    assert.ok(mean(losses.slice(-5)) < mean(losses.slice(0, 5)), 'the CNN loss decreases');
  });

  test('reads on a phone-sized viewport without scrolling sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth));
    await page.screenshot({ path: path.join(OUTPUT, 'train-390x844-full.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});

describe('training page without COOP/COEP', { timeout: TIMEOUT }, () => {
  let page, errors;
  const served = servedPage({ before, after }, { isolation: false, file: 'train.html' });
  before(() => ({ page, errors } = served));

  test('trains on the single-threaded build', async () => {
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), false);
    assert.match(await text(page, '#backend-variant'), /^weft-simd$/);
    await page.fill('#train-epochs', '1');
    await page.click('#train-start');
    await page.waitForFunction(() => document.body.dataset.training === 'finished', null, { timeout: 60000 });
    assert.equal(await text(page, '#train-step-count'), '47');
    assert.ok(parseFloat(await text(page, '#test-acc')) > 80);
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
