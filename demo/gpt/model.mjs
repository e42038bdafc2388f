// The character-level GPT of demo/gpt/train_char_gpt.py in weft/models' gpt,
// shared by the generation page (demo/gpt.html), the Node example
// (demo/node/char_gpt.mjs) and tests/js/char-gpt.test.mjs. Nothing here knows
// about Node or the DOM.
//
//   loadCharGPT(wt, models, ptBytes, meta)   the model (eval mode) and its vocabulary
//   Writer                                    token-by-token generation with a KV cache, tokens/s
//   attentionProbe(wt, model)                 the newest query's attention probabilities
//   FineTuner                                 AdamW on a text, one minibatch per step()
//
// The vocabulary (char_gpt.json's "vocab") is newline plus printable ASCII;
// encode() folds other text onto it (curly quotes, dashes, accents) and drops
// what it cannot fold.

/** The model with char_gpt.pt's weights (ptBytes: anything wt.load takes synchronously), in eval mode. */
export function loadCharGPT(wt, models, ptBytes, meta) {
  const model = models(wt).gpt(meta.config);
  loadWeights(wt, model, ptBytes);
  return { model: model.eval(), vocab: new Vocab(meta.vocab) };
}

/** Puts the checkpoint's weights back into model (strict: every key and shape). */
export function loadWeights(wt, model, ptBytes) {
  const sd = wt.load(ptBytes);
  try {
    model.loadStateDict(sd);
  } finally {
    for (const t of new Set(Object.values(sd))) t.dispose();
  }
}

const FOLD = new Map([
  ['\u2018', "'"], ['\u2019', "'"], ['\u201A', "'"], ['\u2032', "'"], ['\u201C', '"'], ['\u201D', '"'], ['\u201E', '"'],
  ['\u2033', '"'], ['\u2013', '-'], ['\u2014', '--'], ['\u2212', '-'], ['\u2026', '...'], ['\u00A0', ' '], ['\t', ' '],
]);

export class Vocab {
  constructor(chars) {
    this.chars = [...chars];
    this.index = new Map(this.chars.map((ch, i) => [ch, i]));
  }

  get size() { return this.chars.length; }

  /** text on this vocabulary: line ends made \n, typographic marks and accents folded, the rest dropped. */
  normalize(text) {
    let out = '';
    for (const ch of String(text).replace(/\r\n?/g, '\n').normalize('NFKD')) {
      const folded = FOLD.get(ch) ?? ch;
      for (const c of folded) if (this.index.has(c)) out += c;
    }
    return out;
  }

  /** ids of normalize(text) */
  encode(text) { return [...this.normalize(text)].map((ch) => this.index.get(ch)); }

  decode(ids) { return Array.from(ids, (id) => this.chars[id] ?? '').join(''); }
}

// ---- generation ----------------------------------------------------------------

/**
 * Writes text after a prompt one token per step(), so a page can draw between
 * tokens: one KV cache (model.kvCache()) kept across steps, each step a
 * forward of the newest id at its position; when the cache's blockSize
 * positions are used up, it starts again from a prefill of the last `context`
 * ids (the model's position embeddings are absolute, so the window cannot
 * slide). The next id is the argmax (temperature 0) or drawn with
 * wt.multinomial (wt.manualSeed's generator) from softmax(logits /
 * temperature) over the topK largest, nanoGPT's rule. tokensPerSecond counts
 * the time spent in step() (prefills included), not the pauses between.
 */
export class Writer {
  constructor(wt, model, vocab, prompt, { maxNewTokens = 500, temperature = 0.8, topK = 20, context = 64, onToken = null } = {}) {
    const bs = model.config.blockSize;
    if (!(Number.isInteger(context) && context >= 1 && context < bs)) throw new RangeError(`context must be an integer in [1, ${bs - 1}], got ${context}`);
    Object.assign(this, { wt, model, vocab, maxNewTokens, temperature, topK, context, onToken });
    this.ids = vocab.encode(prompt);
    if (!this.ids.length) this.ids = vocab.encode('\n');
    this.promptLength = this.ids.length;
    this.cache = model.kvCache(1, bs);
    this.pos = 0; // positions held by the cache
    this.written = 0;
    this.ms = 0;
  }

  get done() { return this.written >= this.maxNewTokens; }
  get text() { return this.vocab.decode(this.ids); }
  get tokensPerSecond() { return this.ms > 0 ? (1000 * this.written) / this.ms : 0; }

  /** One new token: its id. */
  step() {
    const { wt, model } = this;
    const t0 = performance.now();
    const id = wt.tidy(() => wt.noGrad(() => {
      let logits;
      if (this.pos === 0 || this.pos === model.config.blockSize) {
        const ctx = this.ids.slice(-this.context);
        logits = model.forward([ctx], { kvCache: this.cache });
        this.pos = ctx.length;
      } else {
        logits = model.forward([[this.ids.at(-1)]], { startPos: this.pos, kvCache: this.cache });
        this.pos++;
      }
      return this.pick(logits.select(0, 0).select(0, -1));
    }));
    this.ms += performance.now() - t0;
    this.ids.push(id);
    this.written++;
    this.onToken?.(id, this);
    return id;
  }

  // the next id from one position's logits [V]
  pick(logits) {
    const { wt, temperature, topK } = this;
    if (temperature === 0) return logits.argmax().item();
    const scaled = logits.div(temperature);
    if (topK === null || topK >= logits.shape[0]) return wt.multinomial(wt.softmax(scaled, -1), 1).item();
    const { values, indices } = scaled.topk(topK);
    return indices.gather(0, wt.multinomial(wt.softmax(values, -1), 1)).item();
  }

  /** Writes tokens for about budgetMs (at least one, unless done); returns their text. */
  run(budgetMs = Infinity) {
    const t0 = performance.now();
    const before = this.ids.length;
    while (!this.done) {
      this.step();
      if (performance.now() - t0 >= budgetMs) break;
    }
    return this.vocab.decode(this.ids.slice(before));
  }

  dispose() { this.cache.dispose(); }
}

// ---- attention -----------------------------------------------------------------

/**
 * Records, per layer, the attention probabilities of the newest query of every
 * forward the model runs with a KV cache (as generate() does): softmax(q kᵀ /
 * sqrt(headDim)) of the last position against every cached key, [nHead, S],
 * computed from the block's own c_attn weights and the cache's keys. The
 * newest query sees every key, so no mask enters. probe.rows[layer] is a
 * Float32Array [nHead * S] (S = probe.length); detach() restores the model.
 */
export function attentionProbe(wt, model) {
  const { nHead, nEmbd } = model.config;
  const hd = nEmbd / nHead;
  const blocks = [...model.transformer.h];
  const probe = { rows: blocks.map(() => null), length: 0, nHead, nLayer: blocks.length, detach };
  const originals = blocks.map((block, layer) => {
    const attn = block.attn;
    const forward = attn.forward;
    attn.forward = function probed(x, ctx = {}) {
      const out = forward.call(this, x, ctx);
      if (ctx.cache) record(attn, layer, x, ctx.cache.k[layer].narrow(2, 0, (ctx.startPos ?? 0) + x.shape[1]));
      return out;
    };
    return forward;
  });

  function record(attn, layer, x, keys) {
    wt.tidy(() => wt.noGrad(() => {
      const T = x.shape[1];
      const w = attn.c_attn.weight.narrow(0, 0, nEmbd); // q's rows of the fused qkv weight
      const b = attn.c_attn.bias ? attn.c_attn.bias.narrow(0, 0, nEmbd) : null;
      const q = wt.linear(x.narrow(1, T - 1, 1), w, b).view([x.shape[0], 1, nHead, hd]).transpose(1, 2); // [B, H, 1, hd]
      const p = wt.softmax(wt.matmul(q, keys.transpose(-2, -1)).mul(1 / Math.sqrt(hd)), -1); // [B, H, 1, S]
      probe.rows[layer] = p.select(0, 0).contiguous().data().slice();
      probe.length = keys.shape[2];
    }));
  }

  function detach() {
    blocks.forEach((block, layer) => { block.attn.forward = originals[layer]; });
  }
  return probe;
}

// ---- fine-tuning -----------------------------------------------------------------

/**
 * AdamW on one text: step() takes `batch` random windows of `block` + 1 ids
 * (offsets from wt.randint, so wt.manualSeed makes a run repeat),
 * trains the model on predicting each next character (nanoGPT's loss from
 * forward(ids, { targets })), and returns the loss. The model is in train mode
 * during a step and back in eval mode after it (dropout is 0 in this
 * checkpoint: only the flag changes); dispose() frees the optimizer's state.
 */
export class FineTuner {
  constructor(wt, model, ids, { batch = 8, block = 64, lr = 1e-3, weightDecay = 0.01 } = {}) {
    if (ids.length < block + 2) {
      throw new RangeError(`the text needs at least ${block + 2} characters the model knows (it has ${ids.length})`);
    }
    Object.assign(this, { wt, model, ids, batch, block, steps: 0, losses: [] });
    this.optimizer = new wt.optim.AdamW(model.parameters(), { lr, weightDecay, betas: [0.9, 0.99] });
  }

  // [batch, block] inputs and their next-character targets
  sample() {
    const { wt, ids, block } = this;
    const starts = wt.tidy(() => Array.from(wt.randint(ids.length - block, [this.batch]).data(), Number));
    return [starts.map((at) => ids.slice(at, at + block)), starts.map((at) => ids.slice(at + 1, at + block + 1))];
  }

  step() {
    const { wt, model } = this;
    const [xs, ys] = this.sample();
    model.train();
    const loss = wt.tidy(() => {
      const [, l] = model.forward(xs, { targets: wt.tensor(ys, { dtype: 'int64' }) });
      this.optimizer.zeroGrad({ setToNone: true });
      l.backward();
      this.optimizer.step();
      return l.item();
    });
    model.zeroGrad({ setToNone: true });
    model.eval();
    this.steps++;
    this.losses.push(loss);
    return loss;
  }

  dispose() {
    this.optimizer.dispose();
    this.model.zeroGrad({ setToNone: true });
  }
}
