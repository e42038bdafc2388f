// Training in worker mode in Chromium (issue 15): a few SGD steps of a small
// MLP in a module Worker started by initWorker() give direct mode's losses,
// and the page stays free to run while the worker trains.
//   node --test tests/browser/worker-train.test.mjs
// Needs `npm run build` (dist/) and /usr/bin/chromium.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, servedPage } from './helpers.mjs';

if (!fs.existsSync(path.join(ROOT, 'dist/browser.js'))) {
  throw new Error('dist/browser.js is missing: run `npm run build` first');
}

describe('worker mode in the browser', { timeout: 120000 }, () => {
  let page, errors;
  const served = servedPage({ before, after });
  before(() => ({ page, errors } = served));

  test('an MLP trains in a Worker with the losses of direct mode', async () => {
    const r = await page.evaluate(async () => {
      const { init, initWorker } = await import('/dist/browser.js');
      // one program for both modes (awaiting a direct-mode value is a no-op)
      async function train(w) {
        await w.manualSeed(3);
        const params = [w.randn([4, 8], { requiresGrad: true }), w.zeros([8], { requiresGrad: true }),
          w.randn([8, 3], { requiresGrad: true })];
        const [w1, b1, w2] = params;
        const x = w.randn([12, 4]);
        const y = w.tensor([0, 1, 2, 0, 1, 2, 2, 1, 0, 0, 2, 1], { dtype: 'int64' });
        const opt = new w.optim.SGD(params, { lr: 0.2, momentum: 0.9 });
        const losses = [];
        for (let i = 0; i < 6; i++) {
          const [loss, done] = w.tidy(() => {
            const l = w.crossEntropy(x.mm(w1).add(b1).relu().mm(w2), y);
            return [l, l.backward()];
          });
          await Promise.all([done, opt.step(), opt.zeroGrad()]);
          losses.push(await loss.item());
          loss.dispose();
        }
        opt.dispose();
        for (const t of [...params, x, y]) t.dispose();
        return losses;
      }
      let ticks = 0;
      const timer = setInterval(() => { ticks++; }, 0);
      const ww = await initWorker({ variant: 'simd' });
      const before = (await ww.memory()).tensors;
      const worker = await train(ww);
      const tensorsLeft = (await ww.memory()).tensors - before;
      await ww.terminate();
      clearInterval(timer);
      const direct = await train(await init({ variant: 'simd' }));
      return { worker, direct, ticks, tensorsLeft };
    });
    assert.deepEqual(r.worker, r.direct);
    assert.ok(r.worker[5] < r.worker[0], `it learns: ${r.worker}`);
    assert.ok(r.ticks > 0, 'the page ran timers while the worker trained');
    assert.equal(r.tensorsLeft, 0);
    assert.deepEqual(errors, []);
  });
});
