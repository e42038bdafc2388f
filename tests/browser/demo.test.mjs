// The demo page in Chromium: served isolated (threaded build) and not (single-threaded).
//   node --test tests/browser/
// Needs `npm run build` (dist/) and /usr/bin/chromium. Screenshots go to tests/browser/output/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT, ROOT, applyOp, launchBrowser, makeTensor, openDemo, startServer, text } from './helpers.mjs';

const TIMEOUT = 90000;
fs.mkdirSync(OUTPUT, { recursive: true });

if (!fs.existsSync(path.join(ROOT, 'dist/browser.js'))) {
  throw new Error('dist/browser.js is missing: run `npm run build` first');
}

async function noHorizontalScroll(page) {
  return page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
}

describe('demo served with COOP/COEP', { timeout: TIMEOUT }, () => {
  let server;
  let browser;
  let page;
  let errors;

  before(async () => {
    server = await startServer({ isolation: true });
    browser = await launchBrowser();
    ({ page, errors } = await openDemo(browser.context, server.url));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the page is cross-origin isolated and runs the threaded build', async () => {
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), true);
    assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true');
    assert.match(await text(page, '#backend-variant'), /simd-threads/);
    assert.equal(await page.locator('#backend').getAttribute('data-threaded'), 'true');
    const threads = await text(page, '#backend-threads');
    assert.match(threads, /^\d+ threads?$/);
    assert.equal(await page.locator('#backend-why').count(), 0);
  });

  test('[1,3,2,2] then contiguous(channels_last) shows strides [12,1,6,3] and a copied storage', async () => {
    await makeTensor(page, '1, 3, 2, 2');
    assert.equal(await text(page, '#meta-stride'), '[12, 4, 2, 1]');
    await applyOp(page, 'contiguous_cl');
    assert.equal(await text(page, '#meta-shape'), '[1, 3, 2, 2]');
    assert.equal(await text(page, '#meta-stride'), '[12, 1, 6, 3]');
    assert.equal(await text(page, '#meta-offset'), '0');
    assert.match(await text(page, '#storage-note'), /copied 12 elements/);
    // NHWC order in memory: channel values interleave.
    const mem = await page.locator('#memory .mem-row:not(.small) .mcell .val').allInnerTexts();
    assert.deepEqual(mem.map(Number), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    assert.equal(await page.locator('.flag[data-flag="channels_last"]').getAttribute('data-on'), 'true');
    assert.equal(await page.locator('.flag[data-flag="contiguous"]').getAttribute('data-on'), 'false');
    await page.screenshot({ path: path.join(OUTPUT, 'demo-1280x800.png') });
  });

  test('a view keeps the storage; hovering shows offset + Σ index·stride', async () => {
    await makeTensor(page, '2, 3, 4');
    await applyOp(page, 'slice', { dim: 2, start: 1, end: 4, step: 2 });
    assert.equal(await text(page, '#meta-stride'), '[12, 4, 2]');
    assert.equal(await text(page, '#meta-offset'), '1');
    assert.match(await text(page, '#storage-note'), /same memory/);
    // x1[1, 2, 1] -> 1 + 1·12 + 2·4 + 1·2 = 23
    await page.hover('#logical .cell[data-lin="11"]');
    const f = await text(page, '#formula');
    assert.match(f.replace(/\s+/g, ' '), /1 \+ 1·12 \+ 2·4 \+ 1·2 = 23/);
    assert.equal(await page.locator('#memory .mcell.hl').getAttribute('data-s'), '23');
  });

  test('the logical view is keyboard reachable', async () => {
    await page.focus('#logical .cell[tabindex="0"]');
    await page.keyboard.press('ArrowRight');
    const lin = await page.evaluate(() => document.activeElement.dataset.lin);
    assert.equal(lin, '1');
    assert.match(await text(page, '#formula'), /=/);
  });

  test('plan and trace panels render (or say they are not available yet)', async () => {
    await makeTensor(page, '1, 3, 2, 2');
    await applyOp(page, 'contiguous_cl');
    // The panel starts on the copy that made x: [1,3,2,2] NCHW -> NHWC, a transpose.
    const plan = await page.locator('#plan').getAttribute('data-state');
    const trace = await page.locator('#trace').getAttribute('data-state');
    assert.ok(['ok', 'unavailable'].includes(plan), `plan state ${plan}: ${await text(page, '#plan')}`);
    assert.ok(['ok', 'unavailable'].includes(trace), `trace state ${trace}: ${await text(page, '#trace')}`);
    if (plan === 'ok') {
      assert.equal(await page.locator('#plan .stage').count(), 4);
      assert.equal(await text(page, '#plan-loop'), 'loop: transpose');
    }
    else assert.match(await text(page, '#plan'), /not available in this build yet/);
    if (trace === 'ok') assert.match(await text(page, '#trace'), /copy_/);
    else assert.match(await text(page, '#trace'), /not available in this build yet/);
  });

  test('the plan and trace drawings render the C side\'s formats', async () => {
    // Independent of whether this build exports explain()/trace(): the drawing code
    // gets the seed's channels_last copy plan as weft_iter_explain_json writes it.
    const got = await page.evaluate(async () => {
      const m = await import('/demo/panels.js');
      const plan = document.createElement('div');
      m.renderPlan(plan, { op: 'copy_', numel: 1280, broadcastShape: [1, 64, 5, 4], permutation: [1, 3, 2, 0],
        shape: [64, 20], strides: [[4, 256], [80, 4]], dtypes: ['float32', 'float32'], commonDtype: null,
        fastSetup: 'none', loop: 'transpose', chunks: 2 }, 2);
      const trace = document.createElement('div');
      m.renderTrace(trace, { trace() {} }, [
        { op: 'aten::contiguous', key: 'CompositeImplicitAutograd', depth: 0 },
        { op: 'aten::clone', key: 'CPU', depth: 1 },
        { op: 'aten::empty_like', key: 'CompositeExplicitAutograd', depth: 2 },
        { op: 'aten::copy_', key: 'CPU', depth: 2 }], 'x1 = x0.contiguous()');
      return {
        stages: plan.querySelectorAll('.stage').length,
        arrows: plan.querySelectorAll('.perm svg path').length,
        coalesced: [...plan.querySelectorAll('.dimboxes.coal .dimbox b')].map((b) => b.textContent),
        loop: plan.querySelector('#plan-loop')?.textContent,
        chunks: plan.querySelectorAll('.chunk').length,
        nested: [...trace.querySelectorAll('.tree li')].map((li) => {
          let d = 0;
          for (let p = li.parentElement; !p.classList.contains('tree'); p = p.parentElement) if (p.tagName === 'UL') d++;
          return `${d}:${li.querySelector('.op').textContent}`;
        }),
      };
    });
    assert.equal(got.stages, 4);
    assert.equal(got.arrows, 4);
    assert.deepEqual(got.coalesced, ['64', '20']);
    assert.equal(got.loop, 'loop: transpose');
    assert.equal(got.chunks, 2);
    assert.deepEqual(got.nested, ['0:aten::contiguous', '1:aten::clone', '2:aten::empty_like', '2:aten::copy_']);
  });

  test('the benchmark runs', async () => {
    await page.selectOption('#bench-shape', '1,64,32,32');
    await page.click('#bench-run');
    await page.waitForFunction(() => !document.querySelector('#bench').hasAttribute('aria-busy') && /ms/.test(document.querySelector('#bench').textContent), null, { timeout: 30000 });
    assert.match(await text(page, '#bench'), /contiguous\(channels_last\)[\s\S]*ms/);
  });

  test('the conv2d panel runs NCHW and channels_last', async () => {
    await page.selectOption('#conv-shape', '1,16,16,16,16,3,1');
    await page.click('#conv-run');
    await page.waitForFunction(() => !document.querySelector('#conv').hasAttribute('aria-busy') && /GFLOP/.test(document.querySelector('#conv').textContent), null, { timeout: 30000 });
    const t = await text(page, '#conv');
    assert.match(t, /NCHW[\s\S]*im2col_gemm_nchw[\s\S]*channels_last[\s\S]*implicit_gemm_nhwc/);
    assert.match(t, /stride \[4096, 256, 16, 1\][\s\S]*stride \[4096, 1, 256, 16\]/);
  });

  test('reads well on a phone-sized viewport', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ reducedMotion: 'reduce' }); // instant scrolling: no race with the clicks
    await makeTensor(page, '1, 3, 2, 2');
    await applyOp(page, 'contiguous_cl');
    assert.ok(await noHorizontalScroll(page), 'the page scrolls sideways at 390 px');
    // After Apply the page brings the result into view.
    await page.waitForFunction(() => {
      const top = document.querySelector('#meta').getBoundingClientRect().top;
      return top >= -1 && top < innerHeight / 2;
    }, null, { timeout: 5000 });
    await page.screenshot({ path: path.join(OUTPUT, 'demo-390x844-result.png') });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(OUTPUT, 'demo-390x844.png') });
    await page.screenshot({ path: path.join(OUTPUT, 'demo-390x844-full.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    assert.ok(await noHorizontalScroll(page), 'the page scrolls sideways at 1280 px');
    await page.screenshot({ path: path.join(OUTPUT, 'demo-1280x800-full.png'), fullPage: true });
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});

describe('demo served without COOP/COEP', { timeout: TIMEOUT }, () => {
  let server;
  let browser;
  let page;
  let errors;

  before(async () => {
    server = await startServer({ isolation: false });
    browser = await launchBrowser();
    ({ page, errors } = await openDemo(browser.context, server.url));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('still works, on the single-threaded build, and says so', async () => {
    assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), false);
    assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true');
    assert.match(await text(page, '#backend-variant'), /^weft-simd$/);
    assert.equal(await page.locator('#backend').getAttribute('data-threaded'), 'false');
    assert.match(await text(page, '#backend-why'), /Single-threaded.*not cross-origin isolated/);
    await makeTensor(page, '1, 3, 2, 2');
    await applyOp(page, 'contiguous_cl');
    assert.equal(await text(page, '#meta-stride'), '[12, 1, 6, 3]');
    await page.screenshot({ path: path.join(OUTPUT, 'demo-not-isolated-1280x800.png') });
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
