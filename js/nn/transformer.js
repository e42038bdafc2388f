// torch.nn's Embedding (torch/nn/modules/sparse.py, 1.13) and RMSNorm
// (torch/nn/modules/normalization.py, 2.4) over wt.embedding and wt.rmsNorm:
// their parameter names, shapes, default initialization and extra_repr.
import { REQUIRED as R } from './args.js';
import { pyFloat, pyStr } from './module.js';

export function makeTransformerLayers(api, { Module, Parameter, Tensor, param, parse, checks, init }) {
  const { int, num, bool, fail } = checks;

  const EMBEDDING = [['numEmbeddings', R], ['embeddingDim', R], ['paddingIdx', null], ['maxNorm', null],
    ['normType', 2], ['scaleGradByFreq', false], ['sparse', false], ['_weight', null], ['device', null], ['dtype', null]];

  class Embedding extends Module {
    constructor(...a) {
      super();
      const o = parse('Embedding', EMBEDDING, a);
      const n = int('Embedding', 'numEmbeddings', o.numEmbeddings);
      this.numEmbeddings = n;
      this.embeddingDim = int('Embedding', 'embeddingDim', o.embeddingDim);
      let pad = o.paddingIdx === null ? null : int('Embedding', 'paddingIdx', o.paddingIdx);
      if (pad !== null && (pad >= n || pad < -n)) fail('InvalidArgument', 'Padding_idx must be within num_embeddings');
      if (pad !== null && pad < 0) pad += n;
      this.paddingIdx = pad;
      this.maxNorm = o.maxNorm === null ? null : num('Embedding', 'maxNorm', o.maxNorm);
      this.normType = num('Embedding', 'normType', o.normType);
      this.scaleGradByFreq = bool('Embedding', 'scaleGradByFreq', o.scaleGradByFreq);
      this.sparse = bool('Embedding', 'sparse', o.sparse);
      if (o._weight === null) {
        this.weight = param([n, this.embeddingDim], o);
        this.resetParameters();
        return;
      }
      if (!(o._weight instanceof Tensor)) fail('TypeError', `Embedding(): argument '_weight' must be a Tensor`);
      const s = o._weight.shape;
      if (s.length !== 2 || s[0] !== n || s[1] !== this.embeddingDim) {
        fail('InvalidArgument', 'Shape of weight does not match num_embeddings and embedding_dim');
      }
      // Parameter(_weight): the module's weight shares the given tensor's data
      this.weight = new Parameter(o._weight.detach());
    }

    // init.normal_, then the padding row zeroed
    resetParameters() {
      if (this.weight.device === 'meta') return;
      init.normal_(this.weight);
      this._fillPaddingIdxWithZero();
    }

    _fillPaddingIdxWithZero() {
      if (this.paddingIdx === null) return;
      api.noGrad(() => api.tidy(() => { this.weight.select(0, this.paddingIdx).fill_(0); }));
    }

    forward(input) {
      return api.embedding(input, this.weight, { paddingIdx: this.paddingIdx, maxNorm: this.maxNorm,
        normType: this.normType, scaleGradByFreq: this.scaleGradByFreq, sparse: this.sparse });
    }

    extraRepr() {
      let s = `${this.numEmbeddings}, ${this.embeddingDim}`;
      if (this.paddingIdx !== null) s += `, padding_idx=${this.paddingIdx}`;
      if (this.maxNorm !== null) s += `, max_norm=${pyFloat(this.maxNorm)}`;
      if (this.normType !== 2) s += `, norm_type=${pyFloat(this.normType)}`;
      if (this.scaleGradByFreq) s += ', scale_grad_by_freq=True';
      if (this.sparse) s += ', sparse=True';
      return s;
    }

    // Embedding.from_pretrained: the module's weight shares embeddings' data;
    // freeze (default true) leaves it without requiresGrad
    static fromPretrained(embeddings, ...a) {
      const o = parse('Embedding.fromPretrained', [['freeze', true], ['paddingIdx', null], ['maxNorm', null],
        ['normType', 2], ['scaleGradByFreq', false], ['sparse', false]], a);
      if (!(embeddings instanceof Tensor) || embeddings.ndim !== 2) {
        fail('InvalidArgument', 'Embeddings parameter is expected to be 2-dimensional');
      }
      const [rows, cols] = embeddings.shape;
      const m = new Embedding(rows, cols, { _weight: embeddings, paddingIdx: o.paddingIdx, maxNorm: o.maxNorm,
        normType: o.normType, scaleGradByFreq: o.scaleGradByFreq, sparse: o.sparse });
      m.weight.requiresGrad = !bool('Embedding.fromPretrained', 'freeze', o.freeze);
      return m;
    }
  }

  class RMSNorm extends Module {
    constructor(...a) {
      super();
      const o = parse('RMSNorm', [['normalizedShape', R], ['eps', null], ['elementwiseAffine', true], ['device', null],
        ['dtype', null]], a);
      const shape = Array.isArray(o.normalizedShape) ? o.normalizedShape : [o.normalizedShape];
      this.normalizedShape = shape.map((v) => int('RMSNorm', 'normalizedShape', v));
      this.eps = o.eps === null ? null : num('RMSNorm', 'eps', o.eps);
      this.elementwiseAffine = bool('RMSNorm', 'elementwiseAffine', o.elementwiseAffine);
      if (this.elementwiseAffine) this.weight = param(this.normalizedShape, o, 1);
      else this.registerParameter('weight', null);
    }
    resetParameters() { if (this.weight) init.ones_(this.weight); }
    forward(x) { return api.rmsNorm(x, this.normalizedShape, this.weight, { eps: this.eps }); }
    extraRepr() {
      const eps = this.eps === null ? 'None' : pyFloat(this.eps);
      return `${pyStr(this.normalizedShape)}, eps=${eps}, elementwise_affine=${pyStr(this.elementwiseAffine)}`;
    }
  }

  return { Embedding, RMSNorm };
}
