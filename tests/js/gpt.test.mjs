// weft/models' GPT (nanoGPT's) and Llama (llama2.c's) (issue 24) against
// PyTorch 1.13 (tests/fixtures/gpt/, made by tests/fixtures/gen_gpt_fixtures.py):
// logits of torch.save'd random-weight models in float32 and float64 on every
// variant at 1 and 2 threads; a GPT-2 (Hugging Face Conv1D layout) state dict
// giving the same logits; greedy generation with the KV cache equal to
// PyTorch's full recompute and to weft's own; chunked forwards through a
// kvCache; seeded sampling; onToken; flat memory; errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { models, gpt, llama } from 'weft/models';
import { init, counts, noLeaks, throwsWeft, VARIANTS } from './helpers.mjs';

const dir = new URL('../fixtures/gpt/', import.meta.url);
const FX = JSON.parse(readFileSync(new URL('gpt.json', dir), 'utf8'));
const bytes = (name) => readFileSync(new URL(`${name}.pt`, dir));
const CASE = Object.fromEntries(FX.cases.map((c) => [c.name, c]));

function build(wt, c) {
  const m = (c.name.startsWith('gpt') ? gpt : llama)(wt, c.config);
  const sd = wt.load(bytes(c.name));
  assert.deepEqual(m.loadStateDict(sd), { missingKeys: [], unexpectedKeys: [] });
  for (const t of Object.values(sd)) t.dispose();
  return m.eval();
}

// largest |got - want| over the largest |want|
function relErr(got, want) {
  assert.equal(got.length, want.length);
  let e = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    e = Math.max(e, Math.abs(got[i] - want[i]));
    scale = Math.max(scale, Math.abs(want[i]));
  }
  return e / scale;
}

const logitsOf = (wt, m, ids, opts) => wt.tidy(() => wt.noGrad(() => Array.from(m.forward(ids, opts).data())));

// the greedy continuation by recomputing every position each step (no cache)
function recomputeGreedy(wt, m, ids, steps) {
  const seq = [...ids];
  for (let s = 0; s < steps; s++) {
    const next = wt.tidy(() => wt.noGrad(() => {
      const lg = m.forward([seq]);
      return lg.select(1, seq.length - 1).argmax(-1).item();
    }));
    seq.push(Number(next));
  }
  return seq.slice(ids.length);
}

for (const c of FX.cases) {
  test(`${c.name}: logits equal PyTorch's (float32, float64) on every variant, 1 and 2 threads`, async () => {
    for (const variant of VARIANTS) {
      const wt = await init({ variant });
      await noLeaks(wt, () => {
        const m = build(wt, c);
        for (const threads of [1, 2]) {
          if (threads > wt.maxThreads()) continue;
          wt.setNumThreads(threads);
          const e32 = relErr(logitsOf(wt, m, c.ids), c.logits32);
          assert.ok(e32 < 2e-6, `${variant}/${threads}T float32 vs float32: ${e32}`);
          assert.ok(relErr(logitsOf(wt, m, c.ids), c.logits64) < 2e-5);
        }
        wt.setNumThreads(1);
        m.to('float64');
        const e64 = relErr(logitsOf(wt, m, c.ids), c.logits64);
        // llama's rotary tables are float32 in model.py (cos/sin rounded there, by an ulp apart here)
        assert.ok(e64 < (c.name.startsWith('gpt') ? 1e-12 : 1e-6), `${variant} float64: ${e64}`);
        const got = m.generate(c.ids[0], { maxNewTokens: c.steps, temperature: 0 });
        assert.deepEqual(got.slice(c.ids[0].length), c.greedy64, `${variant}: greedy tokens`);
        m.dispose();
      });
    }
  });
}

test('a GPT-2 state dict in Conv1D layout loads (transposed) to the same logits', async () => {
  const wt = await init({ variant: 'simd' });
  const c = CASE.gpt_bias;
  await noLeaks(wt, () => {
    const sd = wt.load(bytes('gpt2_conv1d'));
    assert.deepEqual(sd['transformer.h.0.attn.c_attn.weight'].shape, [16, 48]);
    assert.ok('transformer.h.0.attn.bias' in sd && !('lm_head.weight' in sd));
    const m = gpt(wt, c.config).eval();
    assert.deepEqual(m.loadStateDict(sd), { missingKeys: [], unexpectedKeys: [] });
    assert.ok(relErr(logitsOf(wt, m, c.ids), c.logits32) < 2e-6);
    // layout 'nanogpt' takes the weights as they are: PyTorch's size-mismatch message
    throwsWeft(() => m.loadStateDict(sd, { layout: 'nanogpt' }), 'InvalidArgument',
      /size mismatch for transformer\.h\.0\.attn\.c_attn\.weight: copying a param with shape \[16, 48\] from checkpoint, the shape in current model is \[48, 16\]/);
    throwsWeft(() => m.loadStateDict(sd, { layout: 'hf' }), 'InvalidArgument', /layout must be 'auto', 'nanogpt' or 'conv1d'/);
    m.dispose();
    // the model shaped by the state dict (nHead is not in it)
    const { GPT } = models(wt);
    const m2 = GPT.fromStateDict(sd, { nHead: 2 }).eval();
    assert.deepEqual({ ...m2.config }, { ...c.config });
    assert.ok(relErr(logitsOf(wt, m2, c.ids), c.logits32) < 2e-6);
    m2.dispose();
    throwsWeft(() => GPT.fromStateDict(sd), 'InvalidArgument', /give config.nHead \(width 16 is not a GPT-2 size\)/);
    // GPT2Model's keys, as Hugging Face's model.safetensors has them (no 'transformer.' prefix)
    const bare = Object.fromEntries(Object.entries(sd).map(([k, t]) => [k.replace(/^transformer\./, ''), t]));
    const m3 = gpt(wt, c.config).eval();
    assert.deepEqual(m3.loadStateDict(bare), { missingKeys: [], unexpectedKeys: [] });
    assert.ok(relErr(logitsOf(wt, m3, c.ids), c.logits32) < 2e-6);
    m3.dispose();
    for (const t of Object.values(sd)) t.dispose();
  });
});

test('module names, tied weights and init are nanoGPT\'s and llama2.c\'s', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const m = gpt(wt, { blockSize: 8, vocabSize: 10, nLayer: 1, nHead: 2, nEmbd: 8 });
    assert.equal(m.lm_head.weight, m.transformer.wte.weight);
    assert.equal(m.parameters().length, 16); // the tied weight once
    assert.equal(m.getNumParams(), m.getNumParams(false) - 8 * 8);
    assert.match(String(m), /\(c_attn\): Linear\(in_features=8, out_features=24, bias=True\)/);
    const std = wt.tidy(() => m.transformer.h.at(0).mlp.c_proj.weight.std().item());
    assert.ok(std > 0.005 && std < 0.03, `c_proj std ${std}`); // 0.02 / sqrt(2 * nLayer)
    m.dispose();
    const l = llama(wt, { dim: 16, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 12, maxSeqLen: 8, multipleOf: 8 });
    assert.equal(l.output.weight, l.tok_embeddings.weight);
    assert.deepEqual(l.layers.at(0).attention.wk.weight.shape, [8, 16]);
    assert.deepEqual(l.layers.at(1).feed_forward.w1.weight.shape, [48, 16]); // 2/3 of 64, up to a multiple of 8
    assert.deepEqual(l.freqs_cos.shape, [8, 2]);
    const keys = Object.entries(l.stateDict()).map(([k, t]) => { t.dispose(); return k; });
    assert.ok(!keys.includes('freqs_cos') && keys[0] === 'tok_embeddings.weight' && keys.at(-1) === 'output.weight');
    assert.ok(keys.includes('layers.1.attention_norm.weight') && keys.includes('layers.0.feed_forward.w3.weight'));
    l.dispose();
  });
});

for (const name of ['gpt_bias', 'llama_gqa', 'llama_mha']) {
  test(`${name}: greedy with the KV cache equals a full-recompute greedy loop; chunked cached forwards equal one forward`, async () => {
    for (const variant of VARIANTS) {
      const wt = await init({ variant });
      const c = CASE[name];
      await noLeaks(wt, () => {
        const m = build(wt, c);
        const maxLen = c.config.blockSize ?? c.config.maxSeqLen;
        const prompt = c.ids[1].slice(0, 3);
        const steps = maxLen - prompt.length;
        const cached = m.generate(prompt, { maxNewTokens: steps, temperature: 0 });
        assert.deepEqual(cached.slice(3), recomputeGreedy(wt, m, prompt, steps), variant);
        // batch of 2 equals each row alone
        const rows = [c.ids[0].slice(0, 4), c.ids[1].slice(0, 4)];
        const both = m.generate(rows, { maxNewTokens: 5, temperature: 0 });
        assert.deepEqual(both, rows.map((r) => m.generate(r, { maxNewTokens: 5, temperature: 0 })));
        // positions 0..T through a cache in chunks of 5, 3, 1, 1, ... (masked, then one query at a time)
        const ids = [c.ids[0], c.ids[1]];
        const T = ids[0].length;
        const whole = logitsOf(wt, m, ids);
        const cache = m.kvCache(2, T);
        const V = c.vocab;
        const got = new Array(2 * T * V);
        for (let start = 0, len = 5; start < T; start += len, len = len === 5 ? 3 : 1) {
          const n = Math.min(len, T - start);
          const part = logitsOf(wt, m, ids.map((r) => r.slice(start, start + n)), { startPos: start, kvCache: cache });
          for (let b = 0; b < 2; b++) {
            for (let i = 0; i < n * V; i++) got[(b * T + start) * V + i] = part[b * n * V + i];
          }
        }
        cache.dispose();
        assert.ok(relErr(got, whole) < 1e-5, `${variant}: chunked ${relErr(got, whole)}`);
        m.dispose();
      });
    }
  });
}

test('Llama\'s inference path (fused products) equals its graph path, after in-place weight changes too', async () => {
  const wt = await init({ variant: 'simd' });
  const c = CASE.llama_gqa;
  await noLeaks(wt, () => {
    const m = build(wt, c);
    const graph = () => wt.tidy(() => Array.from(m.forward(c.ids).detach().data()));
    const before = logitsOf(wt, m, c.ids);
    assert.ok(relErr(before, graph()) < 1e-6);
    wt.noGrad(() => {
      m.layers.at(0).attention.wk.weight.mul_(1.5);
      m.layers.at(1).feed_forward.w3.weight.add_(0.1);
    });
    const after = logitsOf(wt, m, c.ids);
    assert.ok(relErr(after, before) > 1e-3, 'the change shows');
    assert.ok(relErr(after, graph()) < 1e-6);
    m.dispose();
  });
});

test('sampling: reproducible from a seed or wt.manualSeed, topK 1 is greedy, onToken per token', async () => {
  const wt = await init({ variant: 'simd-threads' });
  const c = CASE.llama_gqa;
  await noLeaks(wt, () => {
    const m = build(wt, c);
    const prompt = [1, 2];
    const a = m.generate(prompt, { maxNewTokens: 10, temperature: 1.5, seed: 42 });
    assert.deepEqual(m.generate(prompt, { maxNewTokens: 10, temperature: 1.5, seed: 42 }), a);
    const others = [1, 2, 3, 4].map((s) => m.generate(prompt, { maxNewTokens: 10, temperature: 1.5, seed: s }));
    assert.ok(others.some((o) => o.join() !== a.join()), 'other seeds give other tokens');
    assert.ok(a.slice(2).every((id) => Number.isInteger(id) && id >= 0 && id < c.config.vocabSize));
    wt.manualSeed(7);
    const b = m.generate(prompt, { maxNewTokens: 8, temperature: 0.8, topK: 5 });
    wt.manualSeed(7);
    assert.deepEqual(m.generate(prompt, { maxNewTokens: 8, temperature: 0.8, topK: 5 }), b);
    assert.deepEqual(m.generate(prompt, { maxNewTokens: 8, topK: 1, seed: 3 }), m.generate(prompt, { maxNewTokens: 8, temperature: 0 }));
    // a tensor in gives a tensor out
    const ids = wt.tensor([prompt, [3, 4]], { dtype: 'int64' });
    const out = m.generate(ids, { maxNewTokens: 3, temperature: 0 });
    assert.deepEqual(out.shape, [2, 5]);
    assert.equal(out.dtype, 'int64');
    assert.deepEqual(out.tolist()[0].map(Number), m.generate(prompt, { maxNewTokens: 3, temperature: 0 }));
    out.dispose();
    ids.dispose();
    // onToken(id, step) per token, the memory flat over the generation; false stops
    const seen = [];
    const mem = [];
    const g = m.generate(prompt, {
      maxNewTokens: 12, seed: 5, onToken: (id, step) => { seen.push([id, step]); mem.push(counts(wt)); },
    });
    assert.deepEqual(seen, g.slice(2).map((id, i) => [id, i]));
    for (const s of mem.slice(2)) assert.deepEqual(s, mem[1]);
    const stopped = m.generate(prompt, { maxNewTokens: 12, seed: 5, onToken: (id, step) => step < 3 });
    assert.deepEqual(stopped, g.slice(0, 6));
    m.dispose();
  });
});

test('training: forward with targets gives nanoGPT\'s [logits, loss], and a few Adam steps lower it', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => wt.tidy(() => {
    wt.manualSeed(1);
    const m = gpt(wt, { blockSize: 8, vocabSize: 7, nLayer: 1, nHead: 2, nEmbd: 8, dropout: 0.1 });
    const x = wt.tensor([[1, 2, 3, 4, 5, 6, 0, 1]], { dtype: 'int64' });
    const y = wt.tensor([[2, 3, 4, 5, 6, 0, 1, -1]], { dtype: 'int64' });
    const opt = new wt.optim.Adam(m.parameters(), { lr: 1e-2 });
    const losses = [];
    for (let i = 0; i < 30; i++) {
      wt.tidy(() => {
        const [logits, loss] = m.forward(x, { targets: y });
        assert.deepEqual(logits.shape, [1, 8, 7]);
        losses.push(loss.item());
        opt.zeroGrad();
        loss.backward();
        opt.step();
      });
    }
    assert.ok(losses.at(-1) < losses[0] * 0.7, `${losses[0]} -> ${losses.at(-1)}`);
    opt.dispose?.();
    m.zeroGrad({ setToNone: true });
    m.dispose();
  }));
});

test('errors: ids past blockSize / maxSeqLen, bad configs, ids and options', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const m = gpt(wt, { blockSize: 8, vocabSize: 10, nLayer: 1, nHead: 2, nEmbd: 8 }).eval();
    const l = llama(wt, { dim: 8, nLayers: 1, nHeads: 2, vocabSize: 10, maxSeqLen: 6, multipleOf: 4 }).eval();
    const nine = [Array.from({ length: 9 }, (_, i) => i)];
    throwsWeft(() => m.forward(nine), 'InvalidArgument', /^Cannot forward sequence of length 9, block size is only 8$/);
    throwsWeft(() => l.forward([[1, 2, 3, 4, 5, 6, 7]]), 'InvalidArgument', /length 7, maxSeqLen is only 6/);
    throwsWeft(() => m.generate([1, 2, 3], { maxNewTokens: 6 }), 'InvalidArgument', /3 prompt ids \+ maxNewTokens 6 = 9 positions, past the block size 8/);
    throwsWeft(() => m.generate([1, 2], { maxNewTokens: 2, temperature: -1 }), 'InvalidArgument', /temperature/);
    throwsWeft(() => m.generate([1, 2], { maxNewTokens: 2, topK: 0 }), 'InvalidArgument', /topK/);
    throwsWeft(() => m.generate([1, 2], { maxNewTokens: 1.5 }), 'TypeError', /maxNewTokens/);
    throwsWeft(() => m.generate([1, 2], { maxNewTokens: 2, topk: 3 }), 'TypeError', /unexpected option 'topk'/);
    throwsWeft(() => m.generate([1.5], { maxNewTokens: 2 }), 'TypeError', /array of integers/);
    throwsWeft(() => m.forward([[1, 10]]), undefined, /index|out of range/i);
    const f = wt.zeros([1, 3]);
    throwsWeft(() => m.forward(f), 'TypeError', /int32 or int64 tensor \(got float32\)/);
    f.dispose();
    throwsWeft(() => m.forward([[1]], { startPos: 2 }), 'InvalidArgument', /startPos needs a kvCache/);
    const cache = m.kvCache(1, 4);
    throwsWeft(() => m.forward([[1, 2]], { startPos: 3, kvCache: cache }), 'InvalidArgument', /cannot take 2 position\(s\) of batch 1 from startPos 3/);
    cache.dispose();
    throwsWeft(() => m.kvCache(1, 9), 'InvalidArgument', /maxLen must be an integer in \[1, 8\]/);
    throwsWeft(() => gpt(wt, { nEmbd: 10, nHead: 3, nLayer: 1, vocabSize: 4, blockSize: 4 }), 'InvalidArgument', /nEmbd \(10\) must be divisible by nHead \(3\)/);
    throwsWeft(() => gpt(wt, { n_embd: 8 }), 'TypeError', /unexpected config key 'n_embd'/);
    throwsWeft(() => gpt(wt, { nLayer: 1.5 }), 'TypeError', /'nLayer' must be a positive integer/);
    throwsWeft(() => gpt(wt, { dropout: 1 }), 'TypeError', /'dropout' must be a number in \[0, 1\)/);
    throwsWeft(() => llama(wt, { dim: 8, nHeads: 4, nKvHeads: 3 }), 'InvalidArgument', /nHeads \(4\) must be a multiple of nKvHeads \(3\)/);
    throwsWeft(() => llama(wt, { dim: 12, nHeads: 4 }), 'InvalidArgument', /head size dim \/ nHeads \(3\) must be even/);
    m.dispose();
    l.dispose();
  });
});
