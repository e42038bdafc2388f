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
  const { configOf, rmsNorm, embed, attend, maskFor, generative, Embedding, cleanStateDict, dropoutOf, derived, initWeights } = gen;

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

  // The rotation of positions [startPos, startPos + T) as matrices R [T, hd, hd]
  // acting on the right of a row x [.., hd]: (x R)[2i] = x[2i] c - x[2i+1] s,
  // (x R)[2i+1] = x[2i] s + x[2i+1] c (model.py's apply_rotary_emb), so one
  // matmul rotates the queries and keys of every head at once.
  function rotations(cos, sin) {
    const [T, half] = cos.shape;
    const blocks = api.stack([cos, sin, sin.neg(), cos], -1).view([T, half, 2, 1, 2]); // [[c, s], [-s, c]] per pair
    const eye = api.eye(half, { dtype: cos.dtype }).view([1, half, 1, half, 1]);
    return eye.mul(blocks).view([T, 2 * half, 2 * half]);
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

    // x [B, T, dim] at positions [startPos, startPos + T); rope: that span's rotations()
    forward(x, { rope = null, startPos = 0, cache = null, layer = 0, mask = null } = {}) {
      const [B, T] = x.shape;
      if (!rope) fail('InvalidArgument', 'Attention.forward(x, ctx): ctx.rope must be the rotations of the positions (model._rope(startPos, T))');
      const [H, Hkv, hd] = [this.n_local_heads, this.n_local_kv_heads, this.head_dim];
      let q;
      let k;
      let v;
      if (api.isGradEnabled()) {
        const proj = (lin, heads) => api.linear(x, lin.weight).view([B, T, heads, hd]);
        q = api.matmul(proj(this.wq, H), rope);
        k = api.matmul(proj(this.wk, Hkv), rope);
        v = proj(this.wv, Hkv);
      } else {
        // inference: one product with [wq; wk; wv], one rotation of the q and k heads
        const w = derived(this, 'wqkv', [this.wq.weight, this.wk.weight, this.wv.weight], () => api.cat([this.wq.weight, this.wk.weight, this.wv.weight]));
        const qkv = api.linear(x, w).view([B, T, H + 2 * Hkv, hd]);
        const qk = api.matmul(qkv.narrow(2, 0, H + Hkv), rope);
        q = qk.narrow(2, 0, H);
        k = qk.narrow(2, H, Hkv);
        v = qkv.narrow(2, H + Hkv, Hkv);
      }
      [q, k, v] = [q, k, v].map((t) => t.transpose(1, 2));
      const [keys, values] = cache ? cache.update(layer, startPos, k, v) : [k, v];
      const y = attend(q, keys, values, { mask, isCausal: T > 1 && mask === null, dropoutP: this.training ? this.dropout : 0 });
      const out = api.linear(y.transpose(1, 2).reshape([B, T, H * hd]), this.wo.weight);
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
    // w2(silu(w1(x)) * w3(x)); for inference one product with [w1; w3], in place
    forward(x) {
      let h;
      if (api.isGradEnabled()) {
        h = api.silu(api.linear(x, this.w1.weight)).mul(api.linear(x, this.w3.weight));
      } else {
        const w = derived(this, 'w13', [this.w1.weight, this.w3.weight], () => api.cat([this.w1.weight, this.w3.weight]));
        const n = this.w1.weight.shape[0];
        const ab = api.linear(x, w);
        h = ab.narrow(-1, 0, n).silu_().mul_(ab.narrow(-1, n, n));
      }
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
    // x (left as it is) + attention, then + feed-forward in place when nothing records a graph
    forward(x, ctx) {
      const h = x.add(this.attention.forward(this.attention_norm.forward(x), ctx));
      const f = this.feed_forward.forward(this.ffn_norm.forward(h));
      return api.isGradEnabled() ? h.add(f) : h.add_(f);
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
      // model.py's _init_weights, then its scaled init of w3 and wo
      initWeights(this, ['w3.weight', 'wo.weight'], p.nLayers);
    }

    get _maxLen() { return this.params.maxSeqLen; }
    get _lenName() { return 'maxSeqLen'; }
    _cacheShape() { const p = this.params; return [p.nLayers, p.nKvHeads ?? p.nHeads, p.dim / p.nHeads]; }
    _dtype() { return this.output.weight.dtype; }

    // the rotations of positions [startPos, startPos + T), [T, hd, hd]: x [B, T, heads, hd] @ them
    _rope(startPos, T) {
      return rotations(this.freqs_cos.narrow(0, startPos, T), this.freqs_sin.narrow(0, startPos, T));
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
