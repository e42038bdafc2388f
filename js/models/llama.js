// llama2.c's Transformer (karpathy/llama2.c model.py) over wt.nn, as class
// Llama: the same children and state-dict keys (tok_embeddings,
// layers.N.attention.wq/wk/wv/wo, layers.N.feed_forward.w1/w2/w3,
// layers.N.attention_norm / ffn_norm, norm, output, output tied to
// tok_embeddings), RMSNorm, SwiGLU, rotary embeddings from the
// non-persistent freqs_cos / freqs_sin buffers, grouped-query attention
// when nKvHeads < nHeads. forward / kvCache / generate come from generate.js.

export function makeLlama(api, common, gen) {
  const nn = api.nn;
  const { fail } = common;
  const { configOf, rmsNorm, embed, attend, maskFor, generative, Embedding, cleanStateDict, dropoutOf } = gen;

  // model.py's ModelArgs, camelCase
  const CONFIG = {
    dim: [4096, 'posInt'], nLayers: [32, 'posInt'], nHeads: [32, 'posInt'], nKvHeads: [null, 'intOrNull'],
    vocabSize: [32000, 'posInt'], hiddenDim: [null, 'intOrNull'], multipleOf: [256, 'posInt'], normEps: [1e-5, 'num'],
    maxSeqLen: [2048, 'posInt'], dropout: [0, 'prob'],
  };

  class RMSNorm extends nn.Module {
    constructor(dim, eps) {
      super();
      this.eps = eps;
      this.weight = new nn.Parameter(api.ones(dim));
    }
    forward(x) { return rmsNorm(x, this.weight, this.eps); }
  }

  // model.py's precompute_freqs_cis: cos and sin of t * theta^(-2i / dim), [end, dim / 2]
  function precomputeFreqs(dim, end, theta = 10000.0) {
    return api.noGrad(() => api.tidy(() => {
      const freqs = api.arange(0, dim, 2).narrow(0, 0, dim >> 1).float().div(dim);
      const inv = api.full([dim >> 1], theta).pow(freqs).reciprocal();
      const angles = api.outer(api.arange(end).float(), inv);
      return [angles.cos(), angles.sin()];
    }));
  }

  // x [B, T, heads, hd] rotated in pairs (x[2i], x[2i+1]) by the angles of its
  // positions: cos [T, 1, hd] as (c, c) per pair, sin [T, 1, hd] as (-s, s)
  function rotate(x, cos, sin) {
    const [B, T, H, hd] = x.shape;
    const swapped = x.view([B, T, H, hd >> 1, 2]).flip(-1).view([B, T, H, hd]); // (x[2i+1], x[2i])
    return x.mul(cos).add_(swapped.mul_(sin));
  }

  function checkHeads(a) {
    const kv = a.nKvHeads ?? a.nHeads;
    if (a.dim % a.nHeads !== 0) fail('InvalidArgument', `llama(): dim (${a.dim}) must be divisible by nHeads (${a.nHeads})`);
    if ((a.dim / a.nHeads) % 2 !== 0) {
      fail('InvalidArgument', `llama(): the head size dim / nHeads (${a.dim / a.nHeads}) must be even (rotary embeddings rotate pairs)`);
    }
    if (a.nHeads % kv !== 0) fail('InvalidArgument', `llama(): nHeads (${a.nHeads}) must be a multiple of nKvHeads (${kv})`);
  }

  class Attention extends nn.Module {
    constructor(args) {
      super();
      checkHeads(args);
      this.n_kv_heads = args.nKvHeads ?? args.nHeads;
      this.n_local_heads = args.nHeads;
      this.n_local_kv_heads = this.n_kv_heads;
      this.n_rep = args.nHeads / this.n_kv_heads;
      this.head_dim = args.dim / args.nHeads;
      this.wq = new nn.Linear(args.dim, args.nHeads * this.head_dim, { bias: false });
      this.wk = new nn.Linear(args.dim, this.n_kv_heads * this.head_dim, { bias: false });
      this.wv = new nn.Linear(args.dim, this.n_kv_heads * this.head_dim, { bias: false });
      this.wo = new nn.Linear(args.nHeads * this.head_dim, args.dim, { bias: false });
      this.attn_dropout = new nn.Dropout(args.dropout);
      this.resid_dropout = new nn.Dropout(args.dropout);
      this.dropout = args.dropout;
    }

    // x [B, T, dim] at positions [startPos, startPos + T); rope: that span's [cos, sin]
    forward(x, { rope, startPos = 0, cache = null, layer = 0, mask = null }) {
      const [B, T] = x.shape;
      const hd = this.head_dim;
      const proj = (lin, heads) => api.linear(x, lin.weight).view([B, T, heads, hd]);
      const q = rotate(proj(this.wq, this.n_local_heads), ...rope).transpose(1, 2);
      const k = rotate(proj(this.wk, this.n_local_kv_heads), ...rope).transpose(1, 2);
      const v = proj(this.wv, this.n_local_kv_heads).transpose(1, 2);
      const [keys, values] = cache ? cache.update(layer, startPos, k, v) : [k, v];
      const y = attend(q, keys, values, { mask, isCausal: T > 1 && mask === null, dropoutP: this.training ? this.dropout : 0 });
      const out = api.linear(y.transpose(1, 2).reshape([B, T, this.n_local_heads * hd]), this.wo.weight);
      return dropoutOf(this.resid_dropout, out);
    }
  }

  // model.py's hidden size: 2/3 of 4 * dim, rounded up to a multiple of multipleOf
  function hiddenOf(dim, hiddenDim, multipleOf) {
    if (hiddenDim !== null) return hiddenDim;
    const h = Math.trunc((2 * 4 * dim) / 3);
    return multipleOf * Math.floor((h + multipleOf - 1) / multipleOf);
  }

  class FeedForward extends nn.Module {
    constructor(dim, hiddenDim, multipleOf, dropout) {
      super();
      const hidden = hiddenOf(dim, hiddenDim, multipleOf);
      this.w1 = new nn.Linear(dim, hidden, { bias: false });
      this.w2 = new nn.Linear(hidden, dim, { bias: false });
      this.w3 = new nn.Linear(dim, hidden, { bias: false });
      this.dropout = new nn.Dropout(dropout);
    }
    // w2(silu(w1(x)) * w3(x)), in place when nothing records a graph
    forward(x) {
      const a = api.linear(x, this.w1.weight);
      const b = api.linear(x, this.w3.weight);
      const h = api.isGradEnabled() ? api.silu(a).mul(b) : a.silu_().mul_(b);
      return dropoutOf(this.dropout, api.linear(h, this.w2.weight));
    }
  }

  class TransformerBlock extends nn.Module {
    constructor(layerId, args) {
      super();
      this.n_heads = args.nHeads;
      this.dim = args.dim;
      this.head_dim = args.dim / args.nHeads;
      this.attention = new Attention(args);
      this.feed_forward = new FeedForward(args.dim, args.hiddenDim, args.multipleOf, args.dropout);
      this.layer_id = layerId;
      this.attention_norm = new RMSNorm(args.dim, args.normEps);
      this.ffn_norm = new RMSNorm(args.dim, args.normEps);
    }
    forward(x, ctx) {
      const inPlace = !api.isGradEnabled();
      const a = this.attention.forward(this.attention_norm.forward(x), ctx);
      const h = inPlace ? x.add_(a) : x.add(a);
      const f = this.feed_forward.forward(this.ffn_norm.forward(h));
      return inPlace ? h.add_(f) : h.add(f);
    }
  }

  const IGNORED = ['.attention.mask']; // the causal mask model.py registers without flash attention

  class Llama extends nn.Module {
    constructor(config = {}) {
      super();
      const p = configOf('llama', CONFIG, config);
      checkHeads(p); // before any tensor is made
      this.params = Object.freeze(p);
      this.vocab_size = p.vocabSize;
      this.n_layers = p.nLayers;
      this.tok_embeddings = new Embedding(p.vocabSize, p.dim);
      this.dropout = new nn.Dropout(p.dropout);
      this.layers = new nn.ModuleList(Array.from({ length: p.nLayers }, (_, i) => new TransformerBlock(i, p)));
      this.norm = new RMSNorm(p.dim, p.normEps);
      this.output = new nn.Linear(p.dim, p.vocabSize, { bias: false });
      const untied = this.tok_embeddings.weight;
      this.tok_embeddings.weight = this.output.weight; // weight tying
      untied.dispose();
      const [cos, sin] = precomputeFreqs(p.dim / p.nHeads, p.maxSeqLen);
      this.registerBuffer('freqs_cos', cos, { persistent: false });
      this.registerBuffer('freqs_sin', sin, { persistent: false });
      this._initWeights();
    }

    // model.py's _init_weights, then its scaled init of w3 and wo
    _initWeights() {
      const { init } = nn;
      api.noGrad(() => {
        for (const m of this.modules()) {
          if (m instanceof nn.Linear) {
            init.normal_(m.weight, 0, 0.02);
            if (m.bias) init.zeros_(m.bias);
          } else if (m instanceof Embedding) init.normal_(m.weight, 0, 0.02);
        }
        for (const [name, p] of this.namedParameters()) {
          if (name.endsWith('w3.weight') || name.endsWith('wo.weight')) init.normal_(p, 0, 0.02 / Math.sqrt(2 * this.params.nLayers));
        }
      });
    }

    get _maxLen() { return this.params.maxSeqLen; }
    get _lenName() { return 'maxSeqLen'; }
    _cacheShape() { const p = this.params; return [p.nLayers, p.nKvHeads ?? p.nHeads, p.dim / p.nHeads]; }
    _dtype() { return this.output.weight.dtype; }

    // the rotation of positions [startPos, startPos + T): [cos, sin] [T, 1, hd]
    // with each angle's value twice (sin as -s, s), as rotate() takes them
    _rope(startPos, T) {
      const pairs = (a, b) => api.stack([a, b], -1).view([T, 1, -1]);
      const cos = this.freqs_cos.narrow(0, startPos, T);
      const sin = this.freqs_sin.narrow(0, startPos, T);
      return [pairs(cos, cos), pairs(sin.neg(), sin)];
    }

    _run(ids, startPos, cache, lastOnly) {
      const T = ids.shape[1];
      let h = dropoutOf(this.dropout, embed(ids, this.tok_embeddings.weight));
      const ctx = { rope: this._rope(startPos, T), startPos, cache, layer: 0, mask: cache ? maskFor(startPos, T) : null };
      for (const layer of this.layers) {
        h = layer.forward(h, ctx);
        ctx.layer++;
      }
      if (lastOnly) h = h.narrow(1, T - 1, 1);
      const logits = api.linear(this.norm.forward(h), this.output.weight);
      return lastOnly ? logits.view([ids.shape[0], -1]) : logits;
    }

    // also takes train.py's checkpoints' keys ('_orig_mod.' prefixed) and ignores attention.mask buffers
    loadStateDict(stateDict, opts) {
      const sd = cleanStateDict(stateDict, IGNORED);
      if (sd && !sd.has('output.weight') && sd.has('tok_embeddings.weight')) sd.set('output.weight', sd.get('tok_embeddings.weight'));
      return super.loadStateDict(sd ?? stateDict, opts);
    }
  }

  generative(Llama);
  return { Llama, Attention, FeedForward, TransformerBlock, RMSNorm, llama: (config) => new Llama(config) };
}
