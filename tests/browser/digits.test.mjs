// The drawing page (demo/digits.html) in Chromium, threaded (cross-origin
// isolated) and single-threaded: the PyTorch checkpoint loaded into the page's
// wt.nn model gives PyTorch's logits on the test images; a stroke drawn with
// Playwright's mouse is classified while it is drawn, one drawn by touch
// events (CDP) too; "Clear" empties the pad; the model's repr and state dict
// are shown; nothing leaks.
//   node --test tests/browser/digits.test.mjs   (needs dist/ and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT, ROOT, servedPage, text } from './helpers.mjs';

fs.mkdirSync(OUTPUT, { recursive: true });
const ref = JSON.parse(fs.readFileSync(path.join(ROOT, 'demo/data/digits_cnn_logits.json'), 'utf8'));

// Draws a polyline (points in the pad's 280x280 units) with the mouse, in small moves.
async function stroke(page, points, { steps = 6 } = {}) {
  const box = await page.locator('#pad').boundingBox();
  const at = (p) => [box.x + (p[0] * box.width) / 280, box.y + (p[1] * box.height) / 280];
  await page.mouse.move(...at(points[0]));
  await page.mouse.down();
  for (const p of points.slice(1)) await page.mouse.move(...at(p), { steps });
  return () => page.mouse.up();
}

for (const isolation of [true, false]) {
  describe(`digits page, ${isolation ? 'threaded' : 'single-threaded'}`, { timeout: 120000 }, () => {
    const s = servedPage({ before, after }, { isolation, file: 'digits.html' });
    const predictions = () => s.page.evaluate(() => Number(document.body.dataset.predictions ?? 0));

    test('the build the page runs, the model and its state dict', async () => {
      const { page } = s;
      assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), isolation);
      const threads = await page.evaluate(() => window.digitsDemo.state.wt.backend.numThreads);
      assert.ok(isolation ? threads >= 1 : threads === 1, `numThreads ${threads}`);
      assert.equal(await text(page, '#model-repr'), ref.repr);
      assert.equal(await page.locator('#state tbody tr').count(), Object.keys(ref.stateDict).length);
      assert.equal(await text(page, '#state tr[data-name="features.0.weight"] td.shape'), '[16, 1, 3, 3]');
      await page.waitForFunction(() => document.getElementById('test-acc').textContent !== '—');
      assert.equal(await text(page, '#test-acc'), `${ref.correct}/299 = ${((100 * ref.correct) / 299).toFixed(1)}%`);
    });

    test('the page\'s model gives PyTorch\'s logits on the test images', async () => {
      const { logits, correct } = await s.page.evaluate(() => window.digitsDemo.testLogits());
      const want = ref.logits.flat();
      assert.equal(logits.length, want.length);
      const diff = logits.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i])), 0);
      assert.ok(diff < 2e-5, `max |weft - PyTorch| = ${diff}`);
      assert.equal(correct, ref.correct);
    });

    test('a digit drawn with the mouse is classified while it is drawn; Clear empties the pad', async () => {
      const { page } = s;
      const baseline = await page.evaluate(() => window.digitsDemo.memory().tensors);
      const n0 = await predictions();
      // a "7": the top bar, then the long diagonal
      const up = await stroke(page, [[70, 60], [210, 60], [120, 240]]);
      await page.waitForFunction((n) => Number(document.body.dataset.predictions) > n, n0);
      const whileDrawing = await predictions();
      assert.ok(whileDrawing > n0, 'a prediction before the mouse is released');
      await up();
      // the last move's prediction runs in the next animation frame
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      assert.ok(await predictions() >= whileDrawing);
      const pred = await text(page, '#pred');
      assert.match(pred, /^[0-9]$/);
      const probs = await page.locator('#bars .p').allInnerTexts();
      assert.equal(probs.length, 10);
      const sum = probs.map(Number).reduce((a, b) => a + b);
      assert.ok(Math.abs(sum - 1) < 0.01, `probabilities sum to ${sum}`);
      assert.equal(Math.max(...probs.map(Number)), Number(probs[Number(pred)]));
      assert.equal(await page.locator('#bars li.best').getAttribute('data-digit'), pred);
      assert.equal(pred, '7', `a drawn 7 read as ${pred} (${probs.join(' ')})`);
      const seenInk = await page.evaluate(() => {
        const d = document.getElementById('seen').getContext('2d').getImageData(0, 0, 8, 8).data;
        return d.filter((v, i) => i % 4 === 0 && v < 255).length;
      });
      assert.ok(seenInk > 5, `the 8x8 preview shows the digit (${seenInk} inked pixels)`);
      if (isolation) await page.screenshot({ path: path.join(OUTPUT, 'digits-1280x800.png'), fullPage: true });
      await page.click('#clear');
      assert.equal(await text(page, '#pred'), '–');
      assert.equal(await page.evaluate(() => window.digitsDemo.state.strokes.length), 0);
      assert.equal(await page.evaluate(() => window.digitsDemo.memory().tensors), baseline);
    });

    test('a finger draws too (touch events, as a phone sends them)', async () => {
      const { page } = s;
      await page.click('#clear');
      const box = await page.locator('#pad').boundingBox();
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
      const touch = (type, x, y) => cdp.send('Input.dispatchTouchEvent', {
        type, touchPoints: type === 'touchEnd' ? [] : [{ x: box.x + x, y: box.y + y }] });
      const n0 = await predictions();
      // a "1": one vertical stroke
      await touch('touchStart', 140, 40);
      for (let y = 50; y <= 240; y += 10) await touch('touchMove', 140, y);
      await touch('touchEnd');
      await page.waitForFunction((n) => Number(document.body.dataset.predictions) > n, n0);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      assert.equal(await page.evaluate(() => window.digitsDemo.state.strokes.length), 1);
      assert.equal(await text(page, '#pred'), '1');
      await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: false });
      await cdp.detach();
      await page.click('#clear');
    });

    test('no console errors', () => {
      assert.deepEqual(s.errors, []);
    });
  });
}
