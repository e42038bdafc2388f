// The GPT page (demo/gpt.html) in Chromium, threaded (cross-origin isolated):
// the committed checkpoint loads into weft/models' gpt; "Write" streams text
// after the prompt with tokens/s shown, greedy at temperature 0 as PyTorch
// (tests/fixtures/char_gpt.json); the attention panel shows the newest
// token's probabilities, a distribution per head; a few fine-tuning steps on
// pasted text lower its loss and add samples; going back to the checkpoint
// restores PyTorch's text; nothing leaks and nothing logs an error.
//   node --test tests/browser/gpt.test.mjs   (needs dist/ and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT, ROOT, servedPage, text } from './helpers.mjs';

fs.mkdirSync(OUTPUT, { recursive: true });
const ref = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/char_gpt.json'), 'utf8'));
const GREEDY = 60;

async function write(page, { prompt, tokens, temperature }) {
  await page.fill('#prompt', prompt);
  await page.fill('#tokens', String(tokens));
  await page.locator('#temperature').fill(String(temperature));
  await page.click('#gen-start');
  await page.waitForFunction((n) => Number(document.body.dataset.generated) >= n && !document.body.dataset.busy, tokens);
  return page.locator('#output').innerText();
}

describe('gpt page', { timeout: 120000 }, () => {
  const s = servedPage({ before, after }, { file: 'gpt.html' });

  test('greedy writing gives PyTorch\'s text, with tokens/s and the attention of the newest token', async () => {
    const { page, errors } = s;
    const baseline = await page.evaluate(() => window.gptDemo.memory().tensors);
    assert.match(await text(page, '#model-info'), /4 × 4, width 128, 128 positions/);
    const out = await write(page, { prompt: ref.prompt, tokens: GREEDY, temperature: 0 });
    assert.equal(out, ref.greedyWriter.text.slice(0, ref.prompt.length + GREEDY));
    const tps = Number(await text(page, '#tps'));
    assert.ok(tps > 0, `tokens/s ${tps}`);
    assert.equal(await text(page, '#gen-count'), `${GREEDY} tokens`);

    // the newest token's attention: per head a distribution over the cached positions
    const { sums, length, spans } = await page.evaluate(() => {
      const p = window.gptDemo.state.probe;
      const sums = p.rows.map((r) => Array.from({ length: p.nHead }, (_, h) => r.subarray(h * p.length, (h + 1) * p.length).reduce((a, b) => a + b, 0)));
      return { sums: sums.flat(), length: p.length, spans: document.querySelectorAll('#attn-text span').length };
    });
    assert.equal(sums.length, 16);
    for (const v of sums) assert.ok(Math.abs(v - 1) < 1e-4, `a head's probabilities sum to ${v}`);
    assert.equal(spans, length);
    assert.equal(await page.locator('#attn-grid canvas').count(), 4);
    await page.locator('#attn-grid canvas').nth(2).click({ position: { x: 5, y: 20 } });
    assert.equal(await page.inputValue('#attn-layer'), '2');
    assert.equal(await page.inputValue('#attn-head'), '2');

    // sampled: text after the prompt, and the temperature shown
    await page.locator('#topk').fill('5');
    assert.equal(await text(page, '#topk-out'), '5');
    const sampled = await write(page, { prompt: 'It is', tokens: 40, temperature: 1 });
    assert.ok(sampled.startsWith('It is') && sampled.length === 45, JSON.stringify(sampled));
    await page.screenshot({ path: path.join(OUTPUT, 'gpt-write.png'), fullPage: true });
    assert.equal(await page.evaluate(() => window.gptDemo.memory().tensors), baseline);
    assert.deepEqual(errors, []);
  });

  test('fine-tuning on pasted text lowers the loss, adds samples, and the checkpoint comes back', async () => {
    const { page, errors } = s;
    const baseline = await page.evaluate(() => window.gptDemo.memory().tensors);
    await page.fill('#tune-text', 'Beware the Jabberwock, my son! The jaws that bite, the claws that catch! '.repeat(8));
    await page.fill('#tune-steps', '8');
    await page.fill('#tune-batch', '4');
    await page.fill('#tune-lr', '0.002');
    await page.click('#tune-start');
    await page.waitForFunction(() => document.body.dataset.tuned === '8', null, { timeout: 60000 });
    const losses = await page.evaluate(() => window.gptDemo.state.tuner.losses);
    assert.equal(losses.length, 8);
    assert.ok(losses.at(-1) < losses[0] * 0.8, `loss ${losses[0]} -> ${losses.at(-1)}`);
    assert.equal(await text(page, '#tune-step'), '8 / 8');
    assert.equal(await page.locator('#tune-samples li').count(), 2); // before training and after the last step
    assert.match(await text(page, '#tune-samples li[data-step="8"]'), /^step 8\nBeware the Jabbe/);
    await page.screenshot({ path: path.join(OUTPUT, 'gpt-tune.png'), fullPage: true });

    await page.click('#tune-reset');
    const out = await write(page, { prompt: ref.prompt, tokens: 20, temperature: 0 });
    assert.equal(out, ref.greedyWriter.text.slice(0, ref.prompt.length + 20));
    assert.equal(await page.evaluate(() => window.gptDemo.memory().tensors), baseline);
    assert.deepEqual(errors, []);
  });
});
