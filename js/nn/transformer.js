// torch.nn's attention and transformer modules (torch/nn/modules/activation.py's
// MultiheadAttention and torch/nn/modules/transformer.py, 1.13) and
// F.multi_head_attention_forward as wt.nn.functional.multiHeadAttentionForward.
// Parameter and child names are PyTorch's (in_proj_weight, out_proj.weight,
// self_attn, linear1, norm1, ...) so a torch.save'd state dict loads unchanged;
// camelCase getters read them too. The is_causal hints follow PyTorch 2.x.
// With needWeights the attention probabilities are computed explicitly (they
// are returned); without, attention goes through wt.scaledDotProductAttention.
import { REQUIRED as R } from './args.js';

const shp = (s) => `[${s.join(', ')}]`;
const sameShape = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
const FLOATING = ['float16', 'bfloat16', 'float32', 'float64'];
const CAUSAL_HINT = 'Need attnMask if specifying the isCausal hint. You may use ' +
  'wt.nn.Transformer.generateSquareSubsequentMask(size) to create this mask.';

export function makeTransformer(api, { Module, Parameter, STATE, param, parse, checks, init, Tensor, nn }) {
  const { int, num, bool, fail } = checks;
  const check = (cond, code, msg) => { if (!cond) fail(code, msg); };
  const isFloat = (t) => FLOATING.includes(t.dtype);
  const optTensor = (fn, name, t) => {
    if (t !== null && t !== undefined && !(t instanceof Tensor)) fail('TypeError', `${fn}(): argument '${name}' must be a Tensor or null, not ${typeof t}`);
    return t ?? null;
  };

  // ---- F.multi_head_attention_forward ----

  function checkPaddingMaskDtype(t) {
    if (t !== null && t !== undefined && t.dtype !== 'bool' && !isFloat(t)) {
      fail('TypeError', 'only bool and floating types of keyPaddingMask are supported');
    }
  }

  // _mha_shape_check: whether the call is batched (3-D query) or not (2-D)
  function mhaShapeCheck(query, key, value, kpm, attnMask, numHeads) {
    if (query.dim() === 3) {
      check(key.dim() === 3 && value.dim() === 3, 'ShapeError', 'For batched (3-D) `query`, expected `key` and `value` to be 3-D ' +
        `but found ${key.dim()}-D and ${value.dim()}-D tensors respectively`);
      check(kpm === null || kpm.dim() === 2, 'ShapeError', 'For batched (3-D) `query`, expected `keyPaddingMask` to be `null` or 2-D ' +
        `but found ${kpm?.dim()}-D tensor instead`);
      check(attnMask === null || [2, 3].includes(attnMask.dim()), 'ShapeError', 'For batched (3-D) `query`, expected `attnMask` to be ' +
        `\`null\`, 2-D or 3-D but found ${attnMask?.dim()}-D tensor instead`);
      return true;
    }
    if (query.dim() === 2) {
      check(key.dim() === 2 && value.dim() === 2, 'ShapeError', 'For unbatched (2-D) `query`, expected `key` and `value` to be 2-D ' +
        `but found ${key.dim()}-D and ${value.dim()}-D tensors respectively`);
      check(kpm === null || kpm.dim() === 1, 'ShapeError', 'For unbatched (2-D) `query`, expected `keyPaddingMask` to be `null` or 1-D ' +
        `but found ${kpm?.dim()}-D tensor instead`);
      if (attnMask !== null) {
        check([2, 3].includes(attnMask.dim()), 'ShapeError', 'For unbatched (2-D) `query`, expected `attnMask` to be `null`, 2-D or 3-D ' +
          `but found ${attnMask.dim()}-D tensor instead`);
        const want = [numHeads, query.shape[0], key.shape[0]];
        check(attnMask.dim() === 2 || sameShape(attnMask.shape, want), 'ShapeError',
          `Expected \`attnMask\` shape to be ${shp(want)} but got ${shp(attnMask.shape)}`);
      }
      return false;
    }
    return fail('ShapeError', `query should be unbatched 2D or batched 3D tensor but received ${query.dim()}-D query tensor`);
  }


  // _in_projection_packed: one weight [3E, E]; self-attention in one linear
  function inProjectionPacked(q, k, v, w, b) {
    const E = q.size(-1);
    if (k === v) {
      if (q === k) return api.linear(q, w, b).chunk(3, -1);
      const [wq, wkv] = w.split([E, 2 * E]);
      const [bq, bkv] = b ? b.split([E, 2 * E]) : [null, null];
      return [api.linear(q, wq, bq), ...api.linear(k, wkv, bkv).chunk(2, -1)];
    }
    const [wq, wk, wv] = w.chunk(3);
    const [bq, bk, bv] = b ? b.chunk(3) : [null, null, null];
    return [api.linear(q, wq, bq), api.linear(k, wk, bk), api.linear(v, wv, bv)];
  }

  // _in_projection: separate weights (kdim or vdim other than embedDim)
  function inProjection(q, k, v, wq, wk, wv, bq, bk, bv) {
    const [Eq, Ek, Ev] = [q.size(-1), k.size(-1), v.size(-1)];
    const expect = (t, shape, what) => check(t === null || sameShape(t.shape, shape), 'ShapeError',
      `expecting ${what} shape of ${shp(shape)}, but got ${shp(t?.shape ?? [])}`);
    expect(wq, [Eq, Eq], 'query weights');
    expect(wk, [Eq, Ek], 'key weights');
    expect(wv, [Eq, Ev], 'value weights');
    expect(bq, [Eq], 'query bias');
    expect(bk, [Eq], 'key bias');
    expect(bv, [Eq], 'value bias');
    return [api.linear(q, wq, bq), api.linear(k, wk, bk), api.linear(v, wv, bv)];
  }

  // attnMask as [1 or B*H, L, S] (uint8 read as bool), checked against L and S
  function prepAttnMask(mask, tgtLen, srcLen, bsz, numHeads) {
    let m = mask;
    if (m.dtype === 'uint8') m = m.to('bool');
    else check(isFloat(m) || m.dtype === 'bool', 'TypeError', `Only float, byte, and bool types are supported for attnMask, not ${m.dtype}`);
    if (m.dim() === 2) {
      check(sameShape(m.shape, [tgtLen, srcLen]), 'ShapeError',
        `The shape of the 2D attnMask is ${shp(m.shape)}, but should be ${shp([tgtLen, srcLen])}.`);
      return m.unsqueeze(0);
    }
    if (m.dim() === 3) {
      const want = [bsz * numHeads, tgtLen, srcLen];
      check(sameShape(m.shape, want), 'ShapeError', `The shape of the 3D attnMask is ${shp(m.shape)}, but should be ${shp(want)}.`);
      return m;
    }
    return fail('ShapeError', `attnMask's dimension ${m.dim()} is not supported`);
  }

  // one more key column (bias_k or the zero key): masks gain a column that masks nothing
  const padKey = (m) => (m === null ? null : api.pad(m, [0, 1]));

  // a bool mask as a float one: -inf where true, 0 elsewhere
  const toFloatMask = (m, dtype) => (m.dtype === 'bool' ? api.zeros(m.shape, { dtype }).maskedFill(m, -Infinity) : m);

  // the key padding mask [bsz, S] merged into attnMask [1 or B*H, L, S]
  function mergeKeyPadding(attnMask, kpm, bsz, numHeads, srcLen, dtype) {
    check(sameShape(kpm.shape, [bsz, srcLen]), 'ShapeError',
      `expecting keyPaddingMask shape of ${shp([bsz, srcLen])}, but got ${shp(kpm.shape)}`);
    const k = kpm.view([bsz, 1, 1, srcLen]).expand([-1, numHeads, -1, -1]).reshape([bsz * numHeads, 1, srcLen]);
    if (attnMask === null) return k;
    if (attnMask.dtype === 'bool' && k.dtype === 'bool') return attnMask.logicalOr(k);
    if (k.dtype === 'bool') return attnMask.maskedFill(k, -Infinity);
    return api.add(toFloatMask(attnMask, dtype), k); // a float key padding mask is added (PyTorch 2.x's merge)
  }

  const MHA_OPTIONS = [['training', true], ['keyPaddingMask', null], ['needWeights', true], ['attnMask', null],
    ['useSeparateProjWeight', false], ['qProjWeight', null], ['kProjWeight', null], ['vProjWeight', null], ['staticK', null],
    ['staticV', null], ['averageAttnWeights', true], ['isCausal', false]];
  const MHA_ARGS = [['query', R], ['key', R], ['value', R], ['embedDimToCheck', R], ['numHeads', R], ['inProjWeight', R],
    ['inProjBias', R], ['biasK', R], ['biasV', R], ['addZeroAttn', R], ['dropoutP', R], ['outProjWeight', R], ['outProjBias', R],
    ...MHA_OPTIONS];

  // F.multi_head_attention_forward(query, key, value, embedDimToCheck, numHeads, inProjWeight, inProjBias,
  //   biasK, biasV, addZeroAttn, dropoutP, outProjWeight, outProjBias, { training, keyPaddingMask, ... })
  // → [output, weights | null], in sequence-first layout ([L, N, E] or unbatched [L, E])
  function multiHeadAttentionForward(...a) {
    const o = parse('multiHeadAttentionForward', MHA_ARGS, a);
    const fn = 'multiHeadAttentionForward';
    for (const name of ['inProjWeight', 'inProjBias', 'biasK', 'biasV', 'outProjBias', 'keyPaddingMask', 'attnMask', 'qProjWeight',
      'kProjWeight', 'vProjWeight', 'staticK', 'staticV']) o[name] = optTensor(fn, name, o[name]);
    for (const name of ['query', 'key', 'value', 'outProjWeight']) {
      if (!(o[name] instanceof Tensor)) fail('TypeError', `${fn}(): argument '${name}' must be a Tensor, not ${typeof o[name]}`);
    }
    int(fn, 'embedDimToCheck', o.embedDimToCheck);
    int(fn, 'numHeads', o.numHeads);
    num(fn, 'dropoutP', o.dropoutP);
    for (const name of ['addZeroAttn', 'training', 'needWeights', 'useSeparateProjWeight', 'averageAttnWeights', 'isCausal']) bool(fn, name, o[name]);
    return api.tidy(() => mhaForward(o));
  }

  function mhaForward(o) {
    const { numHeads, isCausal, needWeights } = o;
    let { query, key, value, keyPaddingMask: kpm } = o;
    const batched = mhaShapeCheck(query, key, value, kpm, o.attnMask, numHeads);
    checkPaddingMaskDtype(kpm);
    if (!batched) {
      // keeps key === value (and query === key) so the packed projection sees self-attention
      const q = query.unsqueeze(1);
      const k = key === query ? q : key.unsqueeze(1);
      [query, key, value] = [q, k, value === key ? k : value === query ? q : value.unsqueeze(1)];
      if (kpm !== null) kpm = kpm.unsqueeze(0);
    }
    const [tgtLen, bsz, embedDim] = query.shape;
    check(embedDim === o.embedDimToCheck, 'ShapeError', `was expecting embedding dimension of ${o.embedDimToCheck}, but got ${embedDim}`);
    const headDim = Math.floor(embedDim / numHeads);
    check(headDim * numHeads === embedDim, 'InvalidArgument', `embedDim ${embedDim} not divisible by numHeads ${numHeads}`);
    if (o.useSeparateProjWeight) {
      check(sameShape(key.shape.slice(0, 2), value.shape.slice(0, 2)), 'ShapeError',
        `key's sequence and batch dims ${shp(key.shape.slice(0, 2))} do not match value's ${shp(value.shape.slice(0, 2))}`);
    } else {
      check(sameShape(key.shape, value.shape), 'ShapeError', `key shape ${shp(key.shape)} does not match value shape ${shp(value.shape)}`);
    }
    if (isCausal && o.attnMask === null) fail('InvalidArgument', CAUSAL_HINT);

    let [q, k, v] = project(o, query, key, value);
    let srcLen = key.shape[0];
    // a causal hint with nothing else to merge lets the fused kernel build the mask itself
    const causalKernel = isCausal && kpm === null && !needWeights;
    let attnMask = o.attnMask === null || causalKernel ? null : prepAttnMask(o.attnMask, tgtLen, srcLen, bsz, numHeads);
    if (kpm !== null && kpm.dtype === 'uint8') kpm = kpm.to('bool');

    if (o.biasK !== null && o.biasV !== null) {
      check(o.staticK === null, 'InvalidArgument', 'bias cannot be added to static key.');
      check(o.staticV === null, 'InvalidArgument', 'bias cannot be added to static value.');
      k = api.cat([k, o.biasK.repeat([1, bsz, 1])]);
      v = api.cat([v, o.biasV.repeat([1, bsz, 1])]);
      [attnMask, kpm] = [padKey(attnMask), padKey(kpm)];
    } else {
      check(o.biasK === null && o.biasV === null, 'InvalidArgument', 'biasK and biasV must both be given or both be null');
    }

    // [L, N, E] → [N * H, L, headDim]
    q = q.reshape([tgtLen, bsz * numHeads, headDim]).transpose(0, 1);
    k = headsFirst(k, o.staticK, 'staticK', bsz, numHeads, headDim);
    v = headsFirst(v, o.staticV, 'staticV', bsz, numHeads, headDim);

    if (o.addZeroAttn) {
      const zeros = api.zeros([bsz * numHeads, 1, headDim], { dtype: k.dtype });
      k = api.cat([k, zeros], 1);
      v = api.cat([v, zeros], 1);
      [attnMask, kpm] = [padKey(attnMask), padKey(kpm)];
    }
    srcLen = k.size(1);
    if (kpm !== null) attnMask = mergeKeyPadding(attnMask, kpm, bsz, numHeads, srcLen, q.dtype);
    if (attnMask !== null) attnMask = toFloatMask(attnMask, q.dtype);
    const dropoutP = o.training ? o.dropoutP : 0.0;
    const shape = { tgtLen, bsz, numHeads, srcLen, embedDim, headDim };
    if (needWeights) return attendWithWeights(o, q, k, v, attnMask, dropoutP, shape, batched);
    return attendFused(o, q, k, v, attnMask, dropoutP, causalKernel, shape, batched);
  }

  function project(o, query, key, value) {
    if (!o.useSeparateProjWeight) {
      check(o.inProjWeight !== null, 'InvalidArgument', 'useSeparateProjWeight is false but inProjWeight is null');
      return inProjectionPacked(query, key, value, o.inProjWeight, o.inProjBias);
    }
    for (const name of ['qProjWeight', 'kProjWeight', 'vProjWeight']) {
      check(o[name] !== null, 'InvalidArgument', `useSeparateProjWeight is true but ${name} is null`);
    }
    const [bq, bk, bv] = o.inProjBias === null ? [null, null, null] : o.inProjBias.chunk(3);
    return inProjection(query, key, value, o.qProjWeight, o.kProjWeight, o.vProjWeight, bq, bk, bv);
  }

  // k or v as [N * H, S, headDim], or the static one given in that layout
  function headsFirst(t, stat, name, bsz, numHeads, headDim) {
    if (stat === null) return t.reshape([t.shape[0], bsz * numHeads, headDim]).transpose(0, 1);
    check(stat.size(0) === bsz * numHeads, 'ShapeError', `expecting ${name}.size(0) of ${bsz * numHeads}, but got ${stat.size(0)}`);
    check(stat.size(2) === headDim, 'ShapeError', `expecting ${name}.size(2) of ${headDim}, but got ${stat.size(2)}`);
    return stat;
  }

  // [N * H, L, headDim] → [L * N, E] → out_proj → [L, N, E] (or [L, E] unbatched)
  function outProject(o, attn, { tgtLen, bsz, embedDim }, batched) {
    const out = api.linear(attn, o.outProjWeight, o.outProjBias).view([tgtLen, bsz, embedDim]);
    return batched ? out : out.squeeze(1);
  }

  // 1.13's _scaled_dot_product_attention: softmax(q/√E kᵀ + mask) v, keeping the probabilities
  function attendWithWeights(o, q, k, v, attnMask, dropoutP, shape, batched) {
    const { tgtLen, bsz, numHeads, srcLen, embedDim } = shape;
    const qScaled = api.div(q, Math.sqrt(q.size(-1)));
    const kt = k.transpose(-2, -1);
    let w = attnMask !== null ? api.baddbmm(attnMask, qScaled, kt) : api.bmm(qScaled, kt);
    w = api.softmax(w, -1);
    if (dropoutP > 0) w = api.dropout(w, dropoutP, true);
    const attn = api.bmm(w, v).transpose(0, 1).contiguous().view([tgtLen * bsz, embedDim]);
    const out = outProject(o, attn, shape, batched);
    w = w.view([bsz, numHeads, tgtLen, srcLen]);
    if (o.averageAttnWeights) w = api.div(w.sum(1), numHeads);
    return [out, batched ? w : w.squeeze(0)];
  }

  // PyTorch 2.x's need_weights=False path: the fused kernel on [N, H, L, headDim]
  function attendFused(o, q, k, v, attnMask, dropoutP, isCausal, shape, batched) {
    const { tgtLen, bsz, numHeads, srcLen, embedDim, headDim } = shape;
    let mask = attnMask;
    if (mask !== null) mask = mask.size(0) === 1 ? mask.unsqueeze(0) : mask.view([bsz, numHeads, -1, srcLen]);
    const attn = api.scaledDotProductAttention(q.view([bsz, numHeads, tgtLen, headDim]), k.view([bsz, numHeads, srcLen, headDim]),
      v.view([bsz, numHeads, srcLen, headDim]), { attnMask: mask, dropoutP, isCausal });
    const flat = attn.permute([2, 0, 1, 3]).contiguous().view([bsz * tgtLen, embedDim]);
    return [outProject(o, flat, shape, batched), null];
  }

  // ---- modules ----

  const { Linear, LayerNorm, Dropout, ModuleList } = nn;

  // out_proj's class: a Linear under the name PyTorch prints
  class NonDynamicallyQuantizableLinear extends Linear {}

  const factory = (o) => ({ ...(o.device ? { device: o.device } : {}), ...(o.dtype ? { dtype: o.dtype } : {}) });

  class MultiheadAttention extends Module {
    constructor(...a) {
      super();
      const fn = 'MultiheadAttention';
      const o = parse(fn, [['embedDim', R], ['numHeads', R], ['dropout', 0.0], ['bias', true], ['addBiasKv', false], ['addZeroAttn', false],
        ['kdim', null], ['vdim', null], ['batchFirst', false], ['device', null], ['dtype', null]], a);
      const E = int(fn, 'embedDim', o.embedDim);
      this.embedDim = E;
      this.kdim = o.kdim === null ? E : int(fn, 'kdim', o.kdim);
      this.vdim = o.vdim === null ? E : int(fn, 'vdim', o.vdim);
      this._qkvSameEmbedDim = this.kdim === E && this.vdim === E;
      this.numHeads = int(fn, 'numHeads', o.numHeads);
      this.dropout = num(fn, 'dropout', o.dropout);
      this.batchFirst = bool(fn, 'batchFirst', o.batchFirst);
      if (this.numHeads <= 0) fail('InvalidArgument', `MultiheadAttention(): numHeads must be positive, got ${this.numHeads}`);
      this.headDim = Math.floor(E / this.numHeads);
      if (this.headDim * this.numHeads !== E) fail('InvalidArgument', 'embedDim must be divisible by numHeads');
      const bias = bool(fn, 'bias', o.bias);
      if (!this._qkvSameEmbedDim) {
        this.q_proj_weight = param([E, E], o);
        this.k_proj_weight = param([E, this.kdim], o);
        this.v_proj_weight = param([E, this.vdim], o);
        this.registerParameter('in_proj_weight', null);
      } else {
        this.in_proj_weight = param([3 * E, E], o);
        for (const name of ['q_proj_weight', 'k_proj_weight', 'v_proj_weight']) this.registerParameter(name, null);
      }
      if (bias) this.in_proj_bias = param([3 * E], o);
      else this.registerParameter('in_proj_bias', null);
      this.out_proj = new NonDynamicallyQuantizableLinear(E, E, { bias, ...factory(o) });
      if (bool(fn, 'addBiasKv', o.addBiasKv)) {
        this.bias_k = param([1, 1, E], o);
        this.bias_v = param([1, 1, E], o);
      } else {
        this.bias_k = null; // plain attributes, as PyTorch's
        this.bias_v = null;
      }
      this.addZeroAttn = bool(fn, 'addZeroAttn', o.addZeroAttn);
      this._resetParameters();
    }

    get inProjWeight() { return this.in_proj_weight; }
    get inProjBias() { return this.in_proj_bias; }
    get qProjWeight() { return this.q_proj_weight; }
    get kProjWeight() { return this.k_proj_weight; }
    get vProjWeight() { return this.v_proj_weight; }
    get biasK() { return this.bias_k; }
    get biasV() { return this.bias_v; }
    get outProj() { return this.out_proj; }

    _resetParameters() {
      if ((this.in_proj_weight ?? this.q_proj_weight).device === 'meta') return;
      if (this._qkvSameEmbedDim) init.xavierUniform_(this.in_proj_weight);
      else for (const w of [this.q_proj_weight, this.k_proj_weight, this.v_proj_weight]) init.xavierUniform_(w);
      if (this.in_proj_bias !== null) {
        init.constant_(this.in_proj_bias, 0);
        init.constant_(this.out_proj.bias, 0);
      }
      if (this.bias_k !== null) init.xavierNormal_(this.bias_k);
      if (this.bias_v !== null) init.xavierNormal_(this.bias_v);
    }

    // mha(query, key, value, { keyPaddingMask, needWeights, attnMask, averageAttnWeights, isCausal }) → [output, weights | null]
    forward(...a) {
      const o = parse('MultiheadAttention.forward', [['query', R], ['key', R], ['value', R], ['keyPaddingMask', null],
        ['needWeights', true], ['attnMask', null], ['averageAttnWeights', true], ['isCausal', false]], a);
      let { query, key, value } = o;
      const batched = query instanceof Tensor && query.dim() === 3;
      // batch-first in, sequence-first through; shared inputs stay shared (self-attention's packed projection)
      if (this.batchFirst && batched) {
        const tq = query.transpose(1, 0);
        const tk = key === query ? tq : key.transpose(1, 0);
        [query, key, value] = [tq, tk, value === key ? tk : value === o.query ? tq : value.transpose(1, 0)];
      }
      const [out, weights] = multiHeadAttentionForward(query, key, value, this.embedDim, this.numHeads, this.in_proj_weight,
        this.in_proj_bias, this.bias_k, this.bias_v, this.addZeroAttn, this.dropout, this.out_proj.weight, this.out_proj.bias, {
          training: this.training, keyPaddingMask: o.keyPaddingMask, needWeights: o.needWeights, attnMask: o.attnMask,
          averageAttnWeights: o.averageAttnWeights, isCausal: o.isCausal,
          ...(this._qkvSameEmbedDim ? {} : { useSeparateProjWeight: true, qProjWeight: this.q_proj_weight,
            kProjWeight: this.k_proj_weight, vProjWeight: this.v_proj_weight }),
        });
      return [this.batchFirst && batched ? out.transpose(1, 0) : out, weights];
    }
  }

  // ---- the transformer layers ----

  // _get_activation_fn: 'relu' / 'gelu' as F.relu / F.gelu; a function or module as given
  function activationOf(fn, activation) {
    if (typeof activation === 'string') {
      if (activation === 'relu') return api.relu;
      if (activation === 'gelu') return api.gelu;
      return fail('InvalidArgument', `activation should be relu/gelu, not ${activation}`);
    }
    if (typeof activation !== 'function') fail('TypeError', `${fn}(): argument 'activation' must be 'relu', 'gelu' or a function, not ${typeof activation}`);
    return activation;
  }

  const LAYER = [['dModel', R], ['nhead', R], ['dimFeedforward', 2048], ['dropout', 0.1], ['activation', 'relu'],
    ['layerNormEps', 1e-5], ['batchFirst', false], ['normFirst', false], ['device', null], ['dtype', null]];

  // the parts both layers share, in PyTorch's registration order around the attention blocks
  function buildLayer(self, fn, o, attentions) {
    const d = int(fn, 'dModel', o.dModel);
    const nhead = int(fn, 'nhead', o.nhead);
    const dff = int(fn, 'dimFeedforward', o.dimFeedforward);
    const p = num(fn, 'dropout', o.dropout);
    const eps = num(fn, 'layerNormEps', o.layerNormEps);
    const batchFirst = bool(fn, 'batchFirst', o.batchFirst);
    const f = factory(o);
    for (const name of attentions) self[name] = new MultiheadAttention(d, nhead, { dropout: p, batchFirst, ...f });
    self.linear1 = new Linear(d, dff, f);
    self.dropout = new Dropout(p);
    self.linear2 = new Linear(dff, d, f);
    self.normFirst = bool(fn, 'normFirst', o.normFirst);
    const norms = attentions.length + 1;
    for (let i = 1; i <= norms; i++) self[`norm${i}`] = new LayerNorm(d, { eps, ...f });
    for (let i = 1; i <= norms; i++) self[`dropout${i}`] = new Dropout(p);
    const act = activationOf(fn, o.activation);
    self.activationReluOrGelu = act === api.relu || act instanceof nn.ReLU ? 1 : act === api.gelu || act instanceof nn.GELU ? 2 : 0;
    self.activation = act;
  }

  // the feed-forward block: linear2(dropout(activation(linear1(x)))), then dropout
  const ffBlock = (m, x, last) => m[last](m.linear2(m.dropout(m.activation(m.linear1(x)))));
  // an attention block without weights, then its dropout
  const attnBlock = (attn, drop, x, mem, attnMask, keyPaddingMask, isCausal) => drop(attn(x, mem, mem,
    { attnMask, keyPaddingMask, needWeights: false, isCausal })[0]);

  class TransformerEncoderLayer extends Module {
    constructor(...a) {
      super();
      buildLayer(this, 'TransformerEncoderLayer', parse('TransformerEncoderLayer', LAYER, a), ['self_attn']);
    }
    get selfAttn() { return this.self_attn; }
    forward(...a) {
      const o = parse('TransformerEncoderLayer.forward', [['src', R], ['srcMask', null], ['srcKeyPaddingMask', null], ['isCausal', false]], a);
      checkPaddingMaskDtype(o.srcKeyPaddingMask);
      const sa = (x) => attnBlock(this.self_attn, this.dropout1, x, x, o.srcMask, o.srcKeyPaddingMask, o.isCausal);
      let x = o.src;
      if (this.normFirst) {
        x = api.add(x, sa(this.norm1(x)));
        return api.add(x, ffBlock(this, this.norm2(x), 'dropout2'));
      }
      x = this.norm1(api.add(x, sa(x)));
      return this.norm2(api.add(x, ffBlock(this, x, 'dropout2')));
    }
  }

  const DECODER_FORWARD = [['tgt', R], ['memory', R], ['tgtMask', null], ['memoryMask', null], ['tgtKeyPaddingMask', null],
    ['memoryKeyPaddingMask', null], ['tgtIsCausal', false], ['memoryIsCausal', false]];

  class TransformerDecoderLayer extends Module {
    constructor(...a) {
      super();
      buildLayer(this, 'TransformerDecoderLayer', parse('TransformerDecoderLayer', LAYER, a), ['self_attn', 'multihead_attn']);
    }
    get selfAttn() { return this.self_attn; }
    get multiheadAttn() { return this.multihead_attn; }
    forward(...a) {
      const o = parse('TransformerDecoderLayer.forward', DECODER_FORWARD, a);
      const sa = (x) => attnBlock(this.self_attn, this.dropout1, x, x, o.tgtMask, o.tgtKeyPaddingMask, o.tgtIsCausal);
      const mha = (x) => attnBlock(this.multihead_attn, this.dropout2, x, o.memory, o.memoryMask, o.memoryKeyPaddingMask, o.memoryIsCausal);
      let x = o.tgt;
      if (this.normFirst) {
        x = api.add(x, sa(this.norm1(x)));
        x = api.add(x, mha(this.norm2(x)));
        return api.add(x, ffBlock(this, this.norm3(x), 'dropout3'));
      }
      x = this.norm1(api.add(x, sa(x)));
      x = this.norm2(api.add(x, mha(x)));
      return this.norm3(api.add(x, ffBlock(this, x, 'dropout3')));
    }
  }

  // ---- the stacks ----

  // copy.deepcopy of a module: the same class (its constructor not run, so no
  // random numbers are drawn), every parameter and buffer copied, children
  // copied once each (a module shared inside stays shared), plain attributes
  // copied (functions shared)
  function deepCopy(m, memo = new Map()) {
    if (memo.has(m)) return memo.get(m);
    const copy = Reflect.construct(Module, [], m.constructor);
    memo.set(m, copy);
    const s = m[STATE];
    const dup = (t) => api.noGrad(() => t.clone());
    for (const [name, p] of s.params) copy.registerParameter(name, p ? (memo.get(p) ?? memoSet(memo, p, new Parameter(dup(p), p.requiresGrad))) : null);
    for (const [name, b] of s.buffers) copy.registerBuffer(name, b ? dup(b) : null, { persistent: !s.nonPersistent.has(name) });
    for (const [name, c] of s.modules) copy.addModule(name, c ? deepCopy(c, memo) : null);
    for (const key of Object.keys(m)) {
      if (s.params.has(key) || s.buffers.has(key) || s.modules.has(key)) continue;
      copy[key] = copyValue(m[key], memo);
    }
    copy.training = m.training;
    return copy;
  }
  const memoSet = (memo, key, value) => { memo.set(key, value); return value; };

  function copyValue(v, memo) {
    if (v instanceof Module) return deepCopy(v, memo);
    if (v instanceof Tensor) return api.noGrad(() => v.clone());
    if (Array.isArray(v)) return v.map((x) => copyValue(x, memo));
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([key, x]) => [key, copyValue(x, memo)]));
    }
    return v; // numbers, strings, functions, other objects: shared as deepcopy shares immutables
  }

  // _get_clones
  const clones = (fn, layer, n) => {
    if (!(layer instanceof Module)) fail('TypeError', `${fn}(): the layer must be a wt.nn.Module, not ${typeof layer}`);
    int(fn, 'numLayers', n);
    return new ModuleList(Array.from({ length: n }, () => deepCopy(layer)));
  };

  class TransformerEncoder extends Module {
    constructor(...a) {
      super();
      const fn = 'TransformerEncoder';
      const o = parse(fn, [['encoderLayer', R], ['numLayers', R], ['norm', null], ['enableNestedTensor', true], ['maskCheck', true]], a);
      this.layers = clones(fn, o.encoderLayer, o.numLayers);
      this.numLayers = o.numLayers;
      this.norm = o.norm;
      this.enableNestedTensor = bool(fn, 'enableNestedTensor', o.enableNestedTensor);
      this.maskCheck = bool(fn, 'maskCheck', o.maskCheck);
    }
    // forward(src, mask, srcKeyPaddingMask, isCausal) (PyTorch's names; srcMask reads as mask)
    forward(...a) {
      const args = withAlias(a, 'srcMask', 'mask');
      const o = parse('TransformerEncoder.forward', [['src', R], ['mask', null], ['srcKeyPaddingMask', null], ['isCausal', false]], args);
      checkPaddingMaskDtype(o.srcKeyPaddingMask);
      let out = o.src;
      for (const layer of this.layers) {
        out = layer(out, { srcMask: o.mask, srcKeyPaddingMask: o.srcKeyPaddingMask, isCausal: o.isCausal });
      }
      return this.norm ? this.norm(out) : out;
    }
  }

  // an options object's `from` key read as `to` (the layer's spelling on the stack)
  function withAlias(a, from, to) {
    const last = a[a.length - 1];
    if (a.length < 2 || last === null || typeof last !== 'object' || last instanceof Tensor || !(from in last)) return a;
    if (to in last) fail('TypeError', `got both '${to}' and its alias '${from}'`);
    const { [from]: v, ...rest } = last;
    return [...a.slice(0, -1), { ...rest, [to]: v }];
  }

  class TransformerDecoder extends Module {
    constructor(...a) {
      super();
      const o = parse('TransformerDecoder', [['decoderLayer', R], ['numLayers', R], ['norm', null]], a);
      this.layers = clones('TransformerDecoder', o.decoderLayer, o.numLayers);
      this.numLayers = o.numLayers;
      this.norm = o.norm;
    }
    forward(...a) {
      const o = parse('TransformerDecoder.forward', DECODER_FORWARD, a);
      const { tgt, memory, ...masks } = o;
      let out = tgt;
      for (const layer of this.layers) out = layer(out, memory, masks);
      return this.norm ? this.norm(out) : out;
    }
  }

  class Transformer extends Module {
    constructor(...a) {
      super();
      const fn = 'Transformer';
      const o = parse(fn, [['dModel', 512], ['nhead', 8], ['numEncoderLayers', 6], ['numDecoderLayers', 6], ['dimFeedforward', 2048],
        ['dropout', 0.1], ['activation', 'relu'], ['customEncoder', null], ['customDecoder', null], ['layerNormEps', 1e-5],
        ['batchFirst', false], ['normFirst', false], ['device', null], ['dtype', null]], a);
      const layerArgs = [o.dModel, o.nhead, { dimFeedforward: o.dimFeedforward, dropout: o.dropout, activation: o.activation,
        layerNormEps: o.layerNormEps, batchFirst: o.batchFirst, normFirst: o.normFirst, ...factory(o) }];
      const norm = () => new LayerNorm(o.dModel, { eps: o.layerNormEps, ...factory(o) });
      this.encoder = o.customEncoder ?? stack(TransformerEncoder, new TransformerEncoderLayer(...layerArgs), o.numEncoderLayers, norm());
      this.decoder = o.customDecoder ?? stack(TransformerDecoder, new TransformerDecoderLayer(...layerArgs), o.numDecoderLayers, norm());
      this._resetParameters();
      this.dModel = o.dModel;
      this.nhead = o.nhead;
      this.batchFirst = bool(fn, 'batchFirst', o.batchFirst);
    }
    _resetParameters() {
      for (const p of this.parameters()) if (p.dim() > 1 && p.device !== 'meta') init.xavierUniform_(p);
    }
    forward(...a) {
      const o = parse('Transformer.forward', [['src', R], ['tgt', R], ['srcMask', null], ['tgtMask', null], ['memoryMask', null],
        ['srcKeyPaddingMask', null], ['tgtKeyPaddingMask', null], ['memoryKeyPaddingMask', null], ['srcIsCausal', false],
        ['tgtIsCausal', false], ['memoryIsCausal', false]], a);
      const { src, tgt } = o;
      const b = this.batchFirst ? 0 : 1;
      if (src.dim() === 3 && src.size(b) !== tgt.size(b)) fail('ShapeError', 'the batch number of src and tgt must be equal');
      if (src.size(-1) !== this.dModel || tgt.size(-1) !== this.dModel) {
        fail('ShapeError', 'the feature number of src and tgt must be equal to dModel');
      }
      const memory = this.encoder(src, { mask: o.srcMask, srcKeyPaddingMask: o.srcKeyPaddingMask, isCausal: o.srcIsCausal });
      return this.decoder(tgt, memory, { tgtMask: o.tgtMask, memoryMask: o.memoryMask, tgtKeyPaddingMask: o.tgtKeyPaddingMask,
        memoryKeyPaddingMask: o.memoryKeyPaddingMask, tgtIsCausal: o.tgtIsCausal, memoryIsCausal: o.memoryIsCausal });
    }
    // the [sz, sz] float mask with -inf above the diagonal
    static generateSquareSubsequentMask(sz, { dtype = 'float32' } = {}) {
      int('generateSquareSubsequentMask', 'sz', sz);
      return api.tidy(() => api.triu(api.full([sz, sz], -Infinity, { dtype }), 1));
    }
  }

  // a stack made from a layer that is then dropped (the stack holds copies)
  function stack(Cls, layer, n, norm) {
    try {
      return new Cls(layer, n, norm);
    } finally {
      layer.dispose();
    }
  }

  return {
    modules: { MultiheadAttention, NonDynamicallyQuantizableLinear, TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder,
      TransformerDecoder, Transformer },
    functional: { multiHeadAttentionForward },
  };
}
