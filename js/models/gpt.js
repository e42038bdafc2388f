// nanoGPT's GPT (karpathy/nanoGPT model.py) over wt.nn: the same classes
// (LayerNorm with an optional bias, CausalSelfAttention, MLP, Block, GPT),
// children, state-dict keys and initialization, lm_head tied to
// transformer.wte. loadStateDict also takes GPT-2 checkpoints in Hugging
// Face's layout (Conv1D weights stored [in, out]; attn.bias / attn.masked_bias
// buffers), transposing them as nanoGPT's from_pretrained does.
// forward / kvCache / generate come from generate.js.

export function makeGpt(api, common, gen) {
  const nn = api.nn;
  const { fail } = common;
  const { configOf, embed, attend, maskFor, generative, Embedding, cleanStateDict, dropoutOf, initWeights } = gen;

  const CONFIG = {
    blockSize: [1024, 'posInt'], vocabSize: [50304, 'posInt'], nLayer: [12, 'posInt'], nHead: [12, 'posInt'],
    nEmbd: [768, 'posInt'], dropout: [0, 'prob'], bias: [true, 'bool'],
  };

  function checkHeads(c) {
    if (c.nEmbd % c.nHead !== 0) fail('InvalidArgument', `gpt(): nEmbd (${c.nEmbd}) must be divisible by nHead (${c.nHead})`);
  }

  // nanoGPT's LayerNorm: torch's, with the bias optional
  class LayerNorm extends nn.Module {
    constructor(ndim, bias) {
      super();
      this.weight = new nn.Parameter(api.ones(ndim));
      if (bias) this.bias = new nn.Parameter(api.zeros(ndim));
      else this.registerParameter('bias', null);
    }
    forward(x) { return api.layerNorm(x, this.weight.shape, this.weight, this.bias, { eps: 1e-5 }); }
  }

  class CausalSelfAttention extends nn.Module {
    constructor(config) {
      super();
      checkHeads(config);
      this.c_attn = new nn.Linear(config.nEmbd, 3 * config.nEmbd, { bias: config.bias });
      this.c_proj = new nn.Linear(config.nEmbd, config.nEmbd, { bias: config.bias });
      this.attn_dropout = new nn.Dropout(config.dropout);
      this.resid_dropout = new nn.Dropout(config.dropout);
      this.n_head = config.nHead;
      this.n_embd = config.nEmbd;
      this.dropout = config.dropout;
    }

    // x [B, T, C] at positions [startPos, startPos + T); keys and values of
    // earlier positions from cache (layer's slot), when given
    forward(x, { startPos = 0, cache = null, layer = 0, mask = null } = {}) {
      const [B, T, C] = x.shape;
      const H = this.n_head;
      const heads = (t) => t.view([B, T, H, C / H]).transpose(1, 2);
      const [q, k, v] = api.linear(x, this.c_attn.weight, this.c_attn.bias).split(C, 2).map(heads);
      const [keys, values] = cache ? cache.update(layer, startPos, k, v) : [k, v];
      const y = attend(q, keys, values, {
        mask, isCausal: T > 1 && mask === null, dropoutP: this.training ? this.dropout : 0,
      });
      const out = api.linear(y.transpose(1, 2).reshape([B, T, C]), this.c_proj.weight, this.c_proj.bias);
      return dropoutOf(this.resid_dropout, out);
    }
  }

  class MLP extends nn.Module {
    constructor(config) {
      super();
      this.c_fc = new nn.Linear(config.nEmbd, 4 * config.nEmbd, { bias: config.bias });
      this.gelu = new nn.GELU();
      this.c_proj = new nn.Linear(4 * config.nEmbd, config.nEmbd, { bias: config.bias });
      this.dropout = new nn.Dropout(config.dropout);
    }
    forward(x) {
      const h = api.gelu(api.linear(x, this.c_fc.weight, this.c_fc.bias));
      return dropoutOf(this.dropout, api.linear(h, this.c_proj.weight, this.c_proj.bias));
    }
  }

  class Block extends nn.Module {
    constructor(config) {
      super();
      this.ln_1 = new LayerNorm(config.nEmbd, config.bias);
      this.attn = new CausalSelfAttention(config);
      this.ln_2 = new LayerNorm(config.nEmbd, config.bias);
      this.mlp = new MLP(config);
    }
    // x (left as it is) + attention, then + mlp in place when nothing records a graph
    forward(x, ctx) {
      const h = x.add(this.attn.forward(this.ln_1.forward(x), ctx));
      const m = this.mlp.forward(this.ln_2.forward(h));
      return api.isGradEnabled() ? h.add(m) : h.add_(m);
    }
  }

  const GPT2_HEADS = { 768: 12, 1024: 16, 1280: 20, 1600: 25 }; // nanoGPT's from_pretrained config_args
  const CONV1D = ['attn.c_attn.weight', 'attn.c_proj.weight', 'mlp.c_fc.weight', 'mlp.c_proj.weight'];
  const IGNORED = ['.attn.bias', '.attn.masked_bias']; // causal-mask buffers of HF's GPT-2 and of nanoGPT without flash

  // GPT2Model's keys (wte.weight, h.0...., as Hugging Face's model.safetensors
  // has them) under GPT2LMHeadModel's / nanoGPT's 'transformer.'
  function gpt2Keys(sd) {
    if (!sd.has('wte.weight') || [...sd.keys()].some((key) => key.startsWith('transformer.'))) return sd;
    return new Map([...sd].map(([key, t]) => [key === 'lm_head.weight' ? key : `transformer.${key}`, t]));
  }

  class GPT extends nn.Module {
    constructor(config = {}) {
      super();
      const c = configOf('gpt', CONFIG, config);
      checkHeads(c); // before any tensor is made
      this.config = Object.freeze(c);
      this.transformer = new nn.ModuleDict({
        wte: new Embedding(c.vocabSize, c.nEmbd),
        wpe: new Embedding(c.blockSize, c.nEmbd),
        drop: new nn.Dropout(c.dropout),
        h: new nn.ModuleList(Array.from({ length: c.nLayer }, () => new Block(c))),
        ln_f: new LayerNorm(c.nEmbd, c.bias),
      });
      this.lm_head = new nn.Linear(c.nEmbd, c.vocabSize, { bias: false });
      const untied = this.transformer.wte.weight;
      this.transformer.wte.weight = this.lm_head.weight; // weight tying
      untied.dispose();
      // nanoGPT's _init_weights, then its scaled init of the residual projections
      initWeights(this, ['c_proj.weight'], c.nLayer);
    }

    get _maxLen() { return this.config.blockSize; }
    get _lenName() { return 'block size'; }
    _cacheShape() { const c = this.config; return [c.nLayer, c.nHead, c.nEmbd / c.nHead]; }
    _dtype() { return this.lm_head.weight.dtype; }

    // nanoGPT's get_num_params: position embeddings left out unless nonEmbedding is false
    getNumParams(nonEmbedding = true) {
      const n = this.parameters().reduce((s, p) => s + p.numel(), 0);
      return nonEmbedding ? n - this.transformer.wpe.weight.numel() : n;
    }

    _run(ids, startPos, cache, lastOnly) {
      const [, T] = ids.shape;
      const { wte, wpe, drop, h, ln_f } = this.transformer;
      const pos = wpe.weight.narrow(0, startPos, T); // rows of positions [startPos, startPos + T)
      let x = dropoutOf(drop, embed(ids, wte.weight).add(pos));
      const mask = cache ? maskFor(startPos, T) : null;
      let layer = 0;
      for (const block of h) x = block.forward(x, { startPos, cache, layer: layer++, mask });
      if (lastOnly) x = x.narrow(1, T - 1, 1);
      const logits = api.linear(ln_f.forward(x), this.lm_head.weight);
      return lastOnly ? logits.view([ids.shape[0], -1]) : logits;
    }

    // A state dict in nanoGPT's layout, or GPT-2's from Hugging Face (Conv1D
    // weights [in, out], found by c_attn.weight's shape [C, 3C]; lm_head.weight
    // may be absent: it is transformer.wte.weight; keys may lack 'transformer.').
    // Options: strict, and layout 'auto' | 'nanogpt' | 'conv1d'.
    loadStateDict(stateDict, opts = {}) {
      const { layout = 'auto', ...rest } = opts ?? {};
      const sd = cleanStateDict(stateDict, IGNORED);
      if (!sd) return super.loadStateDict(stateDict, rest);
      if (!['auto', 'nanogpt', 'conv1d'].includes(layout)) {
        fail('InvalidArgument', `loadStateDict(): layout must be 'auto', 'nanogpt' or 'conv1d', got ${String(layout)}`);
      }
      return api.tidy(() => super.loadStateDict(this._fromPretrained(gpt2Keys(sd), layout), rest));
    }

    _fromPretrained(sd, layout) {
      const cAttn = sd.get('transformer.h.0.attn.c_attn.weight');
      const C = this.config.nEmbd;
      const conv1d = layout === 'conv1d' || (layout === 'auto' && cAttn instanceof api.Tensor && cAttn.dim() === 2 &&
        cAttn.shape[0] === C && cAttn.shape[1] === 3 * C);
      if (conv1d) {
        for (const [key, t] of sd) {
          if (CONV1D.some((s) => key.endsWith(s)) && t instanceof api.Tensor && t.dim() === 2) sd.set(key, t.t());
        }
      }
      if (!sd.has('lm_head.weight') && sd.has('transformer.wte.weight')) sd.set('lm_head.weight', sd.get('transformer.wte.weight'));
      return sd;
    }

    // a GPT shaped by a state dict's tensors (nanoGPT or GPT-2 layout), loaded
    // from it; nHead from config, else GPT-2's for its width
    static fromStateDict(stateDict, config = {}) {
      const sd = gpt2Keys(cleanStateDict(stateDict, IGNORED) ?? fail('TypeError', 'GPT.fromStateDict(): expected a state dict (an object or a Map)'));
      const shape = (key) => {
        const t = sd.get(key);
        return t instanceof api.Tensor ? t.shape : fail('InvalidArgument', `GPT.fromStateDict(): the state dict has no tensor '${key}'`);
      };
      const [vocabSize, nEmbd] = shape('transformer.wte.weight');
      const [blockSize] = shape('transformer.wpe.weight');
      let nLayer = 0;
      while (sd.has(`transformer.h.${nLayer}.ln_1.weight`)) nLayer++;
      const nHead = config.nHead ?? GPT2_HEADS[nEmbd];
      if (nHead === undefined) fail('InvalidArgument', `GPT.fromStateDict(): give config.nHead (width ${nEmbd} is not a GPT-2 size)`);
      const bias = sd.has('transformer.h.0.ln_1.bias');
      const model = new GPT({ vocabSize, nEmbd, blockSize, nLayer, bias, ...config, nHead });
      try {
        model.loadStateDict(sd);
      } catch (e) {
        model.dispose();
        throw e;
      }
      return model;
    }
  }

  generative(GPT);
  return { GPT, Block, CausalSelfAttention, MLP, LayerNorm, gpt: (config) => new GPT(config) };
}
