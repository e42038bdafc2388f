// The character-level GPT PyTorch trained (demo/gpt/train_char_gpt.py), loaded
// from its committed torch.save file into weft/models' gpt through
// demo/gpt/model.mjs, against PyTorch's outputs (tests/fixtures/char_gpt.json,
// gen_char_gpt_fixtures.py) on every variant: the logits of a prompt, the
// attention probabilities of its last query (attentionProbe), greedy
// generation within the block (model.generate, Writer) and across cache
// refills (the Node example, through Writer); sampling is seeded;
// fine-tuning lowers the loss; the example prints a tokens/s line. Nothing leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { models } from 'weft/models';
import { VARIANTS, init, noLeaks } from './helpers.mjs';
import { FineTuner, Vocab, Writer, attentionProbe, loadCharGPT } from '../../demo/gpt/model.mjs';

const file = (f) => new URL(`../../demo/gpt/${f}`, import.meta.url);
const meta = JSON.parse(readFileSync(file('char_gpt.json'), 'utf8'));
const pt = readFileSync(file('char_gpt.pt'));
const ref = JSON.parse(readFileSync(new URL('../fixtures/char_gpt.json', import.meta.url), 'utf8'));

const maxAbsDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

test('the checkpoint: float32, at most 5 MB, the config and vocabulary the page reads', () => {
  assert.ok(pt.length <= 5 * 2 ** 20, `${pt.length} bytes`);
  assert.deepEqual(Object.keys(meta.config).sort(), ['bias', 'blockSize', 'dropout', 'nEmbd', 'nHead', 'nLayer', 'vocabSize']);
  assert.equal(meta.vocab.length, meta.config.vocabSize);
  const v = new Vocab(meta.vocab);
  assert.equal(v.normalize('\u201CCaf\u00E9\u201D \u2014 it\u2019s\r\nfine\u2026\tok \u2603'), '"Cafe" -- it\'s\nfine... ok ');
  assert.equal(v.decode(v.encode(ref.prompt)), ref.prompt);
  assert.deepEqual(v.encode(ref.prompt), ref.ids);
});

for (const variant of VARIANTS) {
  test(`${variant}: PyTorch's logits, attention and greedy text`, async () => {
    const wt = await init({ variant });
    await noLeaks(wt, () => {
      const { model, vocab } = loadCharGPT(wt, models, pt, meta);
      const logits = wt.tidy(() => Array.from(model.forward([ref.ids]).data()));
      const diff = maxAbsDiff(logits, ref.logits.flat());
      assert.ok(diff < 2e-4, `max |weft - PyTorch| logit = ${diff}`);

      const probe = attentionProbe(wt, model);
      const cache = model.kvCache(1, ref.ids.length);
      wt.tidy(() => { model.forward([ref.ids], { kvCache: cache }); });
      cache.dispose();
      assert.equal(probe.length, ref.ids.length);
      probe.rows.forEach((row, layer) => {
        const d = maxAbsDiff(Array.from(row), ref.attention[layer].flat());
        assert.ok(d < 1e-5, `layer ${layer}: max |weft - PyTorch| attention probability = ${d}`);
      });
      probe.detach();

      const window = model.generate(ref.ids, { maxNewTokens: ref.greedyWindow.tokens, temperature: 0 });
      assert.equal(vocab.decode(window), ref.greedyWindow.text);
      // the page's writer, through its cache (the whole prompt prefilled, no refill): the same tokens
      const writer = new Writer(wt, model, vocab, ref.prompt, { maxNewTokens: ref.greedyWindow.tokens, temperature: 0, context: 100 });
      writer.run();
      assert.equal(writer.text, ref.greedyWindow.text);
      assert.ok(writer.tokensPerSecond > 0);
      writer.dispose();
      model.dispose();
    });
  });
}

test('sampling: the same seed writes the same text, another seed another', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const { model, vocab } = loadCharGPT(wt, models, pt, meta);
    const write = (seed) => {
      wt.manualSeed(seed);
      const w = new Writer(wt, model, vocab, 'It is', { maxNewTokens: 40, temperature: 0.9, topK: 10 });
      w.run();
      w.dispose();
      return w.text;
    };
    const a = write(1);
    assert.equal(write(1), a);
    assert.notEqual(write(2), a);
    model.dispose();
  });
});

test('fine-tuning on a text lowers its loss', async () => {
  const wt = await init({ variant: 'simd-threads' });
  await noLeaks(wt, () => {
    const { model, vocab } = loadCharGPT(wt, models, pt, meta);
    const text = 'Beware the Jabberwock, my son! The jaws that bite, the claws that catch! '.repeat(6);
    wt.manualSeed(1);
    const tuner = new FineTuner(wt, model, vocab.encode(text), { batch: 4, block: 48, lr: 2e-3 });
    for (let i = 0; i < 8; i++) tuner.step();
    const [first, last] = [tuner.losses[0], tuner.losses.at(-1)];
    assert.ok(last < first * 0.8, `loss ${first} -> ${last}`);
    assert.ok(!model.training);
    assert.throws(() => new FineTuner(wt, model, vocab.encode('too short'), { block: 48 }), /at least 50 characters/);
    tuner.dispose();
    model.dispose();
  });
});

test('demo/node/char_gpt.mjs writes PyTorch\'s greedy text and a tokens/s line', async () => {
  const script = fileURLToPath(new URL('../../demo/node/char_gpt.mjs', import.meta.url));
  const args = ['--prompt', ref.prompt, '--tokens', String(ref.greedyWriter.tokens), '--temperature', '0'];
  const { out, err } = await new Promise((resolve, reject) => {
    execFile(process.execPath, [script, ...args], { timeout: 30000 }, (e, o, er) =>
      (e ? reject(new Error(`${e.message}\n${er}`)) : resolve({ out: o, err: er })));
  });
  assert.equal(out, `${ref.greedyWriter.text}\n`);
  assert.match(err, new RegExp(`^${ref.greedyWriter.tokens}/${ref.greedyWriter.tokens} tokens, \\d+\\.\\d tokens/s \\(simd-threads, 1 thread\\)\\n$`));
  await assert.rejects(new Promise((resolve, reject) => {
    execFile(process.execPath, [script, '--top-k', '0'], { timeout: 30000 }, (e, o, er) => (e ? reject(new Error(er)) : resolve(o)));
  }), /--top-k must be a positive integer/);
});
