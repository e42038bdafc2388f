// The checkpoint page (demo/checkpoint.html) in Chromium: a .pt chosen with
// the file input, one dropped on the drop zone, the examples (safetensors,
// and a file calling os.system that must be refused), nothing left allocated.
//   node --test tests/browser/checkpoint.test.mjs   (needs dist/ and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OUTPUT, ROOT, servedPage, text } from './helpers.mjs';

fs.mkdirSync(OUTPUT, { recursive: true });
const fixture = (rel) => path.join(ROOT, 'tests/fixtures', rel);

describe('checkpoint page', { timeout: 90000 }, () => {
  const s = servedPage({ before, after }, { file: 'checkpoint.html' });
  const tensorsLive = () => s.page.evaluate(() => window.checkpointDemo.memory().tensors);
  const loaded = (name) => s.page.waitForFunction((n) => document.body.dataset.loaded === n, name);
  const cell = (name, cls) => text(s.page, `#tensors tr[data-name="${name}"] td.${cls}`);
  let baseline;

  test('a chosen .pt: every tensor with its strides, offset and storage; views share one', async () => {
    const { page } = s;
    baseline = await tensorsLive();
    await page.setInputFiles('#file', fixture('pt/views.pt'));
    await loaded('views.pt');
    assert.equal(await text(page, '#summary-tensors'), '12');
    assert.equal(await text(page, '#summary-format'), 'torch.save');
    assert.equal(await cell('t', 'shape'), '[6, 4]');
    assert.equal(await cell('t', 'stride'), '[1, 6]');
    assert.equal(await cell('t', 'storage'), 'S0');
    assert.equal(await cell('row', 'offset'), '6');
    assert.equal(await cell('row', 'values'), '6, 7, 8, 9, 10, 11');
    assert.equal(await cell('channels_last', 'layout'), 'channels_last');
    assert.equal(await cell('expanded', 'stride'), '[0, 1]');
    assert.match(await text(page, '#storages li[data-storage="S0"]'), /S0 float32, 24 elements: base, t, row, col, strided, offset/);
    assert.equal(await tensorsLive(), baseline);
    await page.screenshot({ path: path.join(OUTPUT, 'checkpoint-1280x800.png'), fullPage: true });
  });

  test('a dropped file, the safetensors example, and a refused file', async () => {
    const { page } = s;
    const bytes = [...fs.readFileSync(fixture('pt/checkpoint.pt'))];
    await page.evaluate((b) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], 'dropped.pt'));
      document.getElementById('drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, bytes);
    await loaded('dropped.pt');
    assert.equal(await cell('model.bn.num_batches_tracked', 'shape'), '[]');
    assert.equal(await text(page, '#tensors tr[data-name="model.bn.num_batches_tracked"] td:nth-child(2)'), 'int64');
    assert.match(await text(page, '#values'), /epoch = 2/);
    await page.selectOption('#example', '../tests/fixtures/safetensors/all_dtypes.safetensors');
    await page.click('#example-open');
    await loaded('all_dtypes.safetensors');
    assert.equal(await text(page, '#summary-format'), 'safetensors');
    assert.equal(await text(page, '#summary-size'), `${fs.statSync(fixture('safetensors/all_dtypes.safetensors')).size} B`);
    assert.equal(await cell('bf16', 'shape'), '[6]');
    await page.selectOption('#example', '../tests/fixtures/pt/bad/os_system.pt');
    await page.click('#example-open');
    await loaded('error');
    assert.match(await text(page, '#status'), /os_system\.pt: load: the file names os\.system, which weft refuses to load/);
    assert.equal(await page.locator('#tensors tbody tr').count(), 0);
    // a Response that is not ok: weft says so
    await page.evaluate(() => window.checkpointDemo.open(new Response('gone', { status: 404, statusText: 'Not Found' }), 'missing.pt', 'torch.save', 0));
    assert.match(await text(page, '#status'), /missing\.pt: load: the response is 404 Not Found/);
    assert.equal(await tensorsLive(), baseline);
  });

  test('no console errors', () => {
    assert.deepEqual(s.errors, []);
  });
});
