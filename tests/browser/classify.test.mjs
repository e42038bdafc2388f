// The checkpoint page's image classifier (demo/checkpoint.html, issue 23) in
// Chromium: a resnet18 state dict (10 classes, .pt) and a mobilenet_v2 one
// (width 0.5, 3 classes, .safetensors) made here with weft/models are opened
// as files; the page tells the model from the keys, builds and loads it, and
// a PNG made here (with node:zlib) is dropped / chosen: the page's top-k
// class indices and probabilities are those Node's weft computes with the
// same pipeline (demo/classify/pipeline.mjs) on the same pixels. A file that
// is no classifier hides the panel; nothing but the model stays allocated.
//   node --test tests/browser/classify.test.mjs   (needs dist/ and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { init } from 'weft';
import { mobilenetV2, models, resnet18 } from 'weft/models';
import { buildModel, classify, preprocess } from '../../demo/classify/pipeline.mjs';
import { OUTPUT, ROOT, servedPage, text } from './helpers.mjs';

fs.mkdirSync(OUTPUT, { recursive: true });
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'weft-classify-'));

// An 8-bit RGB PNG (filter 0 on every row) of pixels (HWC).
function encodePng(width, height, pixels) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc(height * (width * 3 + 1));
  for (let y = 0; y < height; y++) raw.set(pixels.subarray(y * width * 3, (y + 1) * width * 3), y * (width * 3 + 1) + 1);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

// a wide image (the crop drops columns) with smooth gradients and some texture
function makeImage(width, height) {
  const px = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      px[i] = (x * 255) / (width - 1);
      px[i + 1] = (y * 255) / (height - 1);
      px[i + 2] = ((x * 7 + y * 13) % 32) * 8;
    }
  }
  return { width, height, pixels: px };
}

// A state dict of model with its batch norms' running statistics taken from
// one batch of noise (a fresh model's activations shrink layer by layer to
// nothing, so its answer would not depend on the image) and a random
// classifier head, as a file's bytes.
function stateDictBytes(wt, model, head, scale, save) {
  wt.noGrad(() => wt.tidy(() => {
    for (const m of model.modules()) if (m instanceof wt.nn.BatchNorm2d) m.momentum = 1;
    model.train()(wt.randn([2, 3, 64, 64]));
    model.eval();
    const { weight, bias } = model.getSubmodule(head);
    weight.copy_(wt.randn(weight.shape).mul(scale / Math.sqrt(weight.shape[1])));
    bias.copy_(wt.randn(bias.shape).mul(0.5));
  }));
  const sd = model.stateDict();
  try {
    return save(sd);
  } finally {
    for (const t of Object.values(sd)) t.dispose();
    model.dispose();
  }
}

// Node's answer: the file loaded, the image preprocessed and classified with the shared pipeline.
function expected(wt, bytes, image) {
  const sd = bytes[0] === 0x50 ? wt.load(bytes) : wt.loadSafetensors(bytes);
  const { model } = buildModel(wt, sd, models);
  for (const t of Object.values(sd)) t.dispose();
  const x = preprocess(wt, image);
  try {
    return classify(wt, model, x).top;
  } finally {
    x.dispose();
    model.dispose();
  }
}

describe('checkpoint page: a torchvision classifier classifies a dropped image', { timeout: 120000 }, () => {
  const s = servedPage({ before, after }, { file: 'checkpoint.html' });
  const image = makeImage(48, 36);
  const png = encodePng(image.width, image.height, image.pixels);
  let wt;
  const cases = {};

  before(async () => {
    wt = await init();
    wt.manualSeed(23);
    const res = stateDictBytes(wt, resnet18(wt, { numClasses: 10 }), 'fc', 0.5, (sd) => wt.save(sd));
    const mob = stateDictBytes(wt, mobilenetV2(wt, { numClasses: 3, widthMult: 0.5 }), 'classifier.1', 0.5, (sd) => wt.saveSafetensors(sd));
    for (const [file, bytes] of [['resnet18_10.pt', res], ['mobilenet_v2_3.safetensors', mob]]) {
      fs.writeFileSync(path.join(TMP, file), bytes);
      cases[file] = expected(wt, bytes, image);
    }
  });
  after(() => fs.rmSync(TMP, { recursive: true, force: true }));

  const loaded = (name) => s.page.waitForFunction((n) => document.body.dataset.loaded === n, name);
  const classified = (n) => s.page.waitForFunction((k) => document.body.dataset.classified === k, String(n), { timeout: 30000 });
  const shown = () => s.page.$$eval('#top5 li', (lis) => lis.map((li) => [Number(li.dataset.class), Number(li.dataset.p), li.textContent]));

  function assertSame(got, want) {
    assert.equal(got.length, want.length);
    got.forEach(([i, p, label], k) => {
      assert.equal(i, want[k][0], `rank ${k}: class ${i}, Node says ${want[k][0]} (${JSON.stringify(got)} vs ${JSON.stringify(want)})`);
      assert.ok(Math.abs(p - want[k][1]) <= 1e-6 + 1e-4 * want[k][1], `class ${i}: page ${p}, Node ${want[k][1]}`);
      assert.equal(label, `class ${i}: ${(p * 100).toFixed(2)}%`);
    });
    const sum = got.reduce((a, [, p]) => a + p, 0);
    assert.ok(sum <= 1 + 1e-6, `the top-${got.length} probabilities sum to ${sum}`);
    for (let k = 1; k < got.length; k++) assert.ok(got[k][1] <= got[k - 1][1], 'most probable first');
  }

  test('a resnet18 .pt (10 classes): the model is built, a chosen PNG gives Node\'s top-5', async () => {
    const { page } = s;
    await page.setInputFiles('#file', path.join(TMP, 'resnet18_10.pt'));
    await loaded('resnet18_10.pt');
    assert.equal(await page.evaluate(() => document.body.dataset.model), 'resnet18');
    assert.equal(await page.locator('#classify').isVisible(), true);
    assert.equal(await text(page, '#classify-model'), 'resnet18, 10 classes');
    await page.setInputFiles('#image', { name: 'picture.png', mimeType: 'image/png', buffer: png });
    await classified(1);
    assertSame(await shown(), cases['resnet18_10.pt']);
    assert.equal(await page.locator('#top5 li.best').getAttribute('data-class'), String(cases['resnet18_10.pt'][0][0]));
    assert.match(await text(page, '#classify-ms'), /^top 5 of 10 classes; the forward took \d+\.\d ms \(\d+ threads?\)$/);
    await page.screenshot({ path: path.join(OUTPUT, 'checkpoint-classify-1280x800.png') });
  });

  test('a mobilenet_v2 .safetensors (width 0.5, 3 classes): a dropped PNG gives Node\'s top-3', async () => {
    const { page } = s;
    await page.setInputFiles('#file', path.join(TMP, 'mobilenet_v2_3.safetensors'));
    await loaded('mobilenet_v2_3.safetensors');
    assert.equal(await text(page, '#classify-model'), 'mobilenet_v2 (widthMult 0.5), 3 classes');
    assert.equal(await page.locator('#top5 li').count(), 0, 'the previous model\'s answer is gone');
    await page.evaluate((b) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], 'dropped.png', { type: 'image/png' }));
      document.getElementById('image-drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, [...png]);
    await classified(2);
    assertSame(await shown(), cases['mobilenet_v2_3.safetensors']);
  });

  test('an image the browser cannot decode says so; a file that is no classifier hides the panel and frees the model', async () => {
    const { page } = s;
    await page.setInputFiles('#image', { name: 'broken.png', mimeType: 'image/png', buffer: png.subarray(0, 40) });
    await page.waitForFunction(() => document.body.dataset.classified === 'error');
    assert.match(await text(page, '#status'), /^broken\.png: /);
    const withModel = await page.evaluate(() => window.checkpointDemo.memory().tensors);
    await page.setInputFiles('#file', path.join(ROOT, 'tests/fixtures/pt/views.pt'));
    await loaded('views.pt');
    assert.equal(await page.evaluate(() => document.body.dataset.model), 'none');
    assert.equal(await page.locator('#classify').isVisible(), false);
    const without = await page.evaluate(() => window.checkpointDemo.memory().tensors);
    assert.ok(without < withModel, `the model's tensors are freed (${withModel} -> ${without})`);
  });

  test('no console errors', () => {
    assert.deepEqual(s.errors, []);
  });
});
