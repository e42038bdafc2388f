// What weft/models' decoder-only transformers (gpt.js, llama.js) share: config
// checks, the attention and embedding calls, a preallocated KV cache, and
// generate() (prefill in one forward, then one token per step).
//
// A model class plugs in with:
//   _maxLen                      the longest sequence it takes (blockSize / maxSeqLen)
//   _cacheShape()                [layers, kvHeads, headDim]
//   _run(ids, startPos, cache, lastOnly)   logits [B, T, V] (or [B, V] when lastOnly)
// and gains forward(ids, { startPos, kvCache, targets }), kvCache(), generate().

export function makeGeneration(api, common) {
  const { fail } = common;
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

  // ---- config objects: camelCase keys, PyTorch-style checks ----

  // spec: { key: [default, kind] }, kind 'int' | 'posInt' | 'prob' | 'bool' | 'num' | 'intOrNull'
  function configOf(fn, spec, config) {
    if (config === undefined || config === null) config = {};
    if (typeof config !== 'object' || Array.isArray(config)) fail('TypeError', `${fn}(): config must be an object, not ${typeOf(config)}`);
    for (const key of Object.keys(config)) {
      if (!(key in spec)) fail('TypeError', `${fn}() got an unexpected config key '${key}' (expected one of ${Object.keys(spec).join(', ')})`);
    }
    const out = {};
    for (const [key, [dflt, kind]] of Object.entries(spec)) {
      const v = config[key] === undefined ? dflt : config[key];
      out[key] = checkValue(fn, key, v, kind);
    }
    return out;
  }

  function checkValue(fn, key, v, kind) {
    const bad = (want) => fail('TypeError', `${fn}(): config '${key}' must be ${want}, not ${typeOf(v)}${typeof v === 'number' ? ` ${v}` : ''}`);
    switch (kind) {
      case 'posInt': return Number.isInteger(v) && v > 0 ? v : bad('a positive integer');
      case 'intOrNull': return v === null || (Number.isInteger(v) && v > 0) ? v : bad('a positive integer or null');
      case 'prob': return typeof v === 'number' && v >= 0 && v < 1 ? v : bad('a number in [0, 1)');
      case 'bool': return typeof v === 'boolean' ? v : bad('a boolean');
      case 'num': return typeof v === 'number' && v > 0 ? v : bad('a positive number');
      default: throw new Error(`unknown config kind ${kind}`);
    }
  }

  // ---- the ops a block calls (fused ones when this build has them) ----

  // weight's rows at ids: [...ids.shape, dim]
  function embed(ids, weight) {
    if (typeof api.embedding === 'function') return api.embedding(ids, weight);
    return api.indexSelect(weight, 0, ids.flatten()).view([...ids.shape, weight.shape[1]]);
  }

  function rmsNorm(x, weight, eps) {
    if (typeof api.rmsNorm === 'function') return api.rmsNorm(x, [weight.shape[0]], weight, { eps });
    return x.mul(x.pow(2).mean(-1, true).add_(eps).rsqrt_()).mul_(weight);
  }

  // q [B, H, T, hd], k/v [B, Hkv, S, hd] (H a multiple of Hkv: grouped-query
  // attention, each kv head serving H / Hkv consecutive query heads); mask a
  // bool [T, S] (true: attend) or null; causal when isCausal (T === S)
  function attend(q, k, v, { mask = null, isCausal = false, dropoutP = 0 } = {}) {
    const rep = q.shape[1] / k.shape[1];
    if (typeof api.scaledDotProductAttention === 'function') {
      return api.scaledDotProductAttention(q, k, v, { attnMask: mask, isCausal, dropoutP, enableGqa: rep > 1 });
    }
    if (rep > 1) {
      k = k.repeatInterleave(rep, 1);
      v = v.repeatInterleave(rep, 1);
    }
    const [T, S] = [q.shape[2], k.shape[2]];
    const att = api.matmul(q, k.transpose(-2, -1)).mul_(1 / Math.sqrt(q.shape[3]));
    const keep = mask ?? (isCausal ? api.ones([T, S], { dtype: 'bool' }).tril() : null);
    const masked = keep ? att.maskedFill(keep.logicalNot(), -Infinity) : att;
    let p = api.softmax(masked, -1);
    if (dropoutP > 0) p = api.dropout(p, dropoutP, true);
    return api.matmul(p, v);
  }

  // The mask of T new queries at startPos against S = startPos + T keys:
  // null when one query (it sees every key) or none is needed (causal, startPos 0)
  function maskFor(startPos, T) {
    if (T === 1 || startPos === 0) return null;
    const rows = api.arange(startPos, startPos + T).unsqueeze(1);
    return api.arange(startPos + T).unsqueeze(0).le(rows);
  }

  // wt.nn.Embedding where this build has it; else the same module (a weight
  // [num, dim] drawn from N(0, 1)) over embed()
  const Embedding = api.nn.Embedding ?? class Embedding extends api.nn.Module {
    constructor(numEmbeddings, embeddingDim) {
      super();
      this.numEmbeddings = numEmbeddings;
      this.embeddingDim = embeddingDim;
      this.weight = new api.nn.Parameter(api.randn([numEmbeddings, embeddingDim]));
    }
    forward(ids) { return embed(ids, this.weight); }
    extraRepr() { return `${this.numEmbeddings}, ${this.embeddingDim}`; }
  };

  // nanoGPT's and llama2.c's init: Linear and Embedding weights N(0, 0.02),
  // biases 0, then the residual projections (names ending in one of scaled)
  // N(0, 0.02 / sqrt(2 * nLayers))
  function initWeights(model, scaled, nLayers) {
    const { init } = api.nn;
    api.noGrad(() => {
      for (const m of model.modules()) {
        if (m instanceof api.nn.Linear) {
          init.normal_(m.weight, 0, 0.02);
          if (m.bias) init.zeros_(m.bias);
        } else if (m instanceof Embedding) init.normal_(m.weight, 0, 0.02);
      }
      for (const [name, p] of model.namedParameters()) {
        if (scaled.some((s) => name.endsWith(s))) init.normal_(p, 0, 0.02 / Math.sqrt(2 * nLayers));
      }
    });
  }

  // A state dict (object or Map) as a new Map without torch.compile's
  // '_orig_mod.' prefix and without keys ending in one of ignored (buffers
  // some checkpoints carry and the module computes); null when not a dict.
  function cleanStateDict(stateDict, ignored) {
    const proto = stateDict !== null && typeof stateDict === 'object' ? Object.getPrototypeOf(stateDict) : undefined;
    const plain = proto === Object.prototype || proto === null; // wt.load gives null-prototype objects
    if (!(stateDict instanceof Map) && !plain) return null;
    const out = new Map();
    for (const [key, t] of stateDict instanceof Map ? stateDict : Object.entries(stateDict)) {
      if (!ignored.some((s) => key.endsWith(s))) out.set(key.startsWith('_orig_mod.') ? key.slice(10) : key, t);
    }
    return out;
  }

  // ---- tensors derived from parameters, for inference ----

  // A tensor made from sources by make() (a concatenated weight), kept on
  // owner under slot and made again when a source changes: a new handle
  // (Module.to swaps them) or a new version (copy_, loadStateDict, an
  // optimizer step). dropDerived(model) frees them (model.dispose()).
  const DERIVED = Symbol('weft.models.derived');
  function derived(owner, slot, sources, make) {
    const key = sources.map((t) => `${t.handle('derived')}:${t._version}`).join(',');
    const cache = owner[DERIVED] ?? (owner[DERIVED] = new Map());
    const hit = cache.get(slot);
    if (hit && hit.key === key) return hit.t;
    hit?.t.dispose();
    const t = api.keep(api.noGrad(() => api.tidy(make)));
    cache.set(slot, { key, t });
    return t;
  }

  function dropDerived(model) {
    for (const m of model.modules()) {
      for (const { t } of m[DERIVED]?.values() ?? []) t.dispose();
      m[DERIVED]?.clear();
    }
  }

  // ---- ids ----

  // a Tensor [B, T] or [T] of integers, or an array of ids / of equal-length id arrays
  function idsOf(fn, ids) {
    if (ids instanceof api.Tensor) {
      if (!['int32', 'int64'].includes(ids.dtype)) {
        fail('TypeError', `${fn}(): ids must be an int32 or int64 tensor (got ${ids.dtype})`);
      }
      if (ids.dim() !== 1 && ids.dim() !== 2) fail('InvalidArgument', `${fn}(): ids must be [T] or [B, T] (got ${ids.dim()}-D)`);
      return { t: ids.dim() === 1 ? ids.unsqueeze(0) : ids, made: ids.dim() === 1, kind: ids.dim() === 1 ? 'tensor1' : 'tensor2' };
    }
    if (Array.isArray(ids)) {
      const nested = ids.length > 0 && Array.isArray(ids[0]);
      const rows = nested ? ids : [ids];
      const T = rows[0].length;
      for (const r of rows) {
        if (!Array.isArray(r) || r.length !== T || !r.every(Number.isInteger)) {
          fail('TypeError', `${fn}(): ids must be an array of integers or of equal-length integer arrays`);
        }
      }
      if (T === 0) fail('InvalidArgument', `${fn}(): ids must not be empty`);
      return { t: api.tensor(rows, { dtype: 'int64' }), made: true, kind: nested ? 'array2' : 'array1' };
    }
    return fail('TypeError', `${fn}(): ids must be a Tensor or an array of integers, not ${typeOf(ids)}`);
  }

  // ---- the KV cache ----

  // Per layer a key and a value tensor [B, kvHeads, maxLen, headDim], made once
  // and written in place (positions [startPos, startPos + T) per forward).
  class KVCache {
    constructor(model, batchSize, maxLen, dtype) {
      const [layers, heads, hd] = model._cacheShape();
      this.batchSize = batchSize;
      this.maxLen = maxLen;
      this.k = [];
      this.v = [];
      for (let l = 0; l < layers; l++) {
        // uninitialized: a position is read only after a forward wrote it
        this.k.push(api.keep(api.empty([batchSize, heads, maxLen, hd], { dtype })));
        this.v.push(api.keep(api.empty([batchSize, heads, maxLen, hd], { dtype })));
      }
    }

    // layer's keys and values for positions [0, startPos + T), after writing k, v [B, Hkv, T, hd] at startPos
    update(layer, startPos, k, v) {
      const T = k.shape[2];
      const end = startPos + T;
      this.k[layer].narrow(2, startPos, T).copy_(k);
      this.v[layer].narrow(2, startPos, T).copy_(v);
      return [this.k[layer].narrow(2, 0, end), this.v[layer].narrow(2, 0, end)];
    }

    dispose() {
      for (const t of [...this.k, ...this.v]) t.dispose();
      this.k = [];
      this.v = [];
    }
  }

  // ---- sampling ----

  // A seeded uniform [0, 1) source of its own (mulberry32, 53-bit doubles), so
  // sampling neither reads nor moves wt.manualSeed's generator when seeded
  function uniformSource(seed) {
    let a = seed >>> 0;
    const u32 = () => {
      a = (a + 0x6D2B79F5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (t ^ (t >>> 14)) >>> 0;
    };
    return () => (u32() * 2 ** 21 + (u32() >>> 11)) / 2 ** 53;
  }

  function seedOf(seed) {
    if (seed === undefined || seed === null) {
      // from the global generator, so wt.manualSeed makes an unseeded call reproducible
      const r = api.rand([2], { dtype: 'float64' });
      const [x, y] = r.data();
      r.dispose();
      return (Math.floor(x * 2 ** 32) ^ Math.floor(y * 2 ** 16)) >>> 0;
    }
    if (typeof seed === 'bigint') return Number(BigInt.asUintN(32, seed ^ (seed >> 32n)));
    if (!Number.isInteger(seed)) fail('TypeError', `generate(): option 'seed' must be an integer, not ${typeOf(seed)}`);
    return (seed % 2 ** 32) >>> 0;
  }

  // one row's index from probabilities p (summing to ~1) over ids
  function draw(p, ids, u) {
    let total = 0;
    for (let i = 0; i < p.length; i++) total += p[i];
    let target = u * total;
    for (let i = 0; i < p.length; i++) {
      target -= p[i];
      if (target < 0) return ids ? Number(ids[i]) : i;
    }
    for (let i = p.length - 1; i >= 0; i--) if (p[i] > 0) return ids ? Number(ids[i]) : i; // rounding left a sliver
    return 0;
  }

  // the next id of each row of logits [B, V]: argmax (temperature 0), or a draw
  // from softmax(logits / temperature) over the topK largest (nanoGPT's rule)
  function pick(logits, { temperature, topK }, uniform) {
    return api.tidy(() => {
      const [B, V] = logits.shape;
      if (temperature === 0) return Array.from(logits.argmax(-1).data(), Number);
      const scaled = temperature === 1 ? logits : logits.div(temperature);
      let probs;
      let ids = null;
      if (topK !== null && topK < V) {
        const { values, indices } = scaled.topk(topK, -1);
        probs = api.softmax(values, -1).data();
        ids = indices.data();
      } else {
        probs = api.softmax(scaled, -1).data();
      }
      const n = probs.length / B;
      const out = [];
      for (let b = 0; b < B; b++) {
        out.push(draw(probs.subarray(b * n, (b + 1) * n), ids && ids.subarray(b * n, (b + 1) * n), uniform()));
      }
      return out;
    });
  }

  const GEN_OPTIONS = ['maxNewTokens', 'temperature', 'topK', 'seed', 'onToken'];

  function generationOptions(o) {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) fail('TypeError', `generate(): options must be an object, not ${typeOf(o)}`);
    for (const key of Object.keys(o)) {
      if (!GEN_OPTIONS.includes(key)) fail('TypeError', `generate() got an unexpected option '${key}'`);
    }
    const { maxNewTokens, temperature = 1, topK = null, seed, onToken = null } = o;
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 0) {
      fail('TypeError', `generate(): option 'maxNewTokens' must be a non-negative integer, not ${typeOf(maxNewTokens)}`);
    }
    if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature)) {
      fail('InvalidArgument', `generate(): option 'temperature' must be a finite number >= 0, got ${temperature}`);
    }
    if (topK !== null && (!Number.isInteger(topK) || topK < 1)) {
      fail('InvalidArgument', `generate(): option 'topK' must be a positive integer or null, got ${topK}`);
    }
    if (onToken !== null && typeof onToken !== 'function') fail('TypeError', `generate(): option 'onToken' must be a function, not ${typeOf(onToken)}`);
    return { maxNewTokens, temperature, topK, seed, onToken };
  }

  // x through a Dropout module's p, when training
  const dropoutOf = (m, x) => (m.training && m.p > 0 ? api.dropout(x, m.p, true) : x);

  // ---- what a model class gains ----

  function checkSpan(model, fn, startPos, T) {
    if (!Number.isInteger(startPos) || startPos < 0) fail('InvalidArgument', `${fn}(): startPos must be a non-negative integer, got ${startPos}`);
    if (startPos + T > model._maxLen) {
      fail('InvalidArgument', startPos === 0
        ? `Cannot forward sequence of length ${T}, ${model._lenName} is only ${model._maxLen}`
        : `Cannot forward ${T} position(s) from startPos ${startPos}: past the ${model._lenName} ${model._maxLen}`);
    }
  }

  const methods = {
    // logits [B, T, vocab] for every position (ids [B, T] or [T]); with a
    // kvCache, ids are positions [startPos, startPos + T) and the cache holds
    // the keys and values of [0, startPos) (written by earlier calls);
    // with targets ([B, T] ids, -1 ignored) [logits, loss] as nanoGPT returns
    forward(ids, opts = {}) {
      if (opts === null || typeof opts !== 'object') fail('TypeError', `forward(): options must be an object, not ${typeOf(opts)}`);
      for (const key of Object.keys(opts)) {
        if (!['startPos', 'kvCache', 'targets'].includes(key)) fail('TypeError', `forward() got an unexpected option '${key}'`);
      }
      const { startPos = 0, kvCache = null, targets = null } = opts;
      const { t, made } = idsOf('forward', ids);
      try {
        const [B, T] = t.shape;
        checkSpan(this, 'forward', startPos, T);
        if (kvCache !== null) {
          if (!(kvCache instanceof KVCache)) fail('TypeError', 'forward(): kvCache must come from model.kvCache()');
          if (kvCache.batchSize !== B || startPos + T > kvCache.maxLen) {
            fail('InvalidArgument', `forward(): a kvCache of batch ${kvCache.batchSize} and length ${kvCache.maxLen} cannot take ` +
              `${T} position(s) of batch ${B} from startPos ${startPos}`);
          }
        } else if (startPos !== 0) fail('InvalidArgument', 'forward(): startPos needs a kvCache holding the earlier positions');
        return api.tidy(() => {
          const logits = this._run(t, startPos, kvCache, false);
          if (targets === null) return logits;
          return [logits, api.crossEntropy(logits.flatten(0, 1), targets.flatten(), null, 'mean', -1)];
        });
      } finally {
        if (made) t.dispose();
      }
    },

    // an empty cache for batchSize rows of up to maxLen positions (the caller disposes it)
    kvCache(batchSize = 1, maxLen = this._maxLen) {
      if (!Number.isInteger(batchSize) || batchSize < 1) fail('InvalidArgument', `kvCache(): batchSize must be a positive integer, got ${batchSize}`);
      if (!Number.isInteger(maxLen) || maxLen < 1 || maxLen > this._maxLen) {
        fail('InvalidArgument', `kvCache(): maxLen must be an integer in [1, ${this._maxLen}], got ${maxLen}`);
      }
      return new KVCache(this, batchSize, maxLen, this._dtype());
    },

    // ids [B, T] / [T] (Tensor or arrays) followed by maxNewTokens generated
    // ones, in the form given; onToken(id, step) per token (id a number for
    // one row, an array for several; returning false stops early)
    generate(ids, options = {}) {
      const o = generationOptions(options);
      return api.tidy(() => api.noGrad(() => {
        const { t, kind } = idsOf('generate', ids);
        const [B, T] = t.shape;
        if (T === 0) fail('InvalidArgument', 'generate(): ids must not be empty');
        const total = T + o.maxNewTokens;
        if (total > this._maxLen) {
          fail('InvalidArgument', `generate(): ${T} prompt ids + maxNewTokens ${o.maxNewTokens} = ${total} positions, ` +
            `past the ${this._lenName} ${this._maxLen}`);
        }
        const rows = t.tolist().map((r) => r.map(Number));
        const uniform = o.temperature === 0 ? null : uniformSource(seedOf(o.seed));
        const cache = o.maxNewTokens > 0 ? this.kvCache(B, total) : null;
        let next = null;
        try {
          let pos = 0;
          let input = t;
          for (let step = 0; step < o.maxNewTokens; step++) {
            const logits = api.tidy(() => this._run(input, pos, cache, true));
            const tok = pick(logits, o, uniform);
            logits.dispose();
            pos += input.shape[1];
            tok.forEach((id, b) => rows[b].push(id));
            if (o.onToken && o.onToken(B === 1 ? tok[0] : tok, step) === false) break;
            if (step + 1 === o.maxNewTokens) break;
            if (!next) next = api.empty([B, 1], { dtype: 'int64' });
            if (B === 1) next.fill_(tok[0]);
            else api.tidy(() => next.copy_(api.tensor(tok.map((id) => [id]), { dtype: 'int64' })));
            input = next;
          }
        } finally {
          cache?.dispose();
          next?.dispose();
        }
        if (kind === 'array1') return rows[0];
        if (kind === 'array2') return rows;
        const out = api.tensor(rows, { dtype: 'int64' });
        return kind === 'tensor1' ? out.view([-1]) : out;
      }));
    },
  };

  // adds forward / kvCache / generate to a model class, and dispose() freeing its derived tensors
  function generative(C) {
    const dispose = C.prototype.dispose;
    const all = {
      ...methods,
      dispose() {
        dropDerived(this);
        return dispose.call(this);
      },
    };
    for (const [name, fn] of Object.entries(all)) {
      Object.defineProperty(C.prototype, name, { value: fn, writable: true, configurable: true });
    }
    return C;
  }

  return { configOf, embed, rmsNorm, attend, maskFor, KVCache, Embedding, cleanStateDict, generative, dropoutOf, derived, initWeights };
}
