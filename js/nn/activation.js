// torch.nn's activation and loss modules: thin classes over the wt.* ops
// (torch/nn/modules/activation.py and loss.py 1.13), with their extra_repr.
import { pyFloat, pyRepr, pyStr } from './module.js';

export function makeActivations(api, { Module, parse, checks }) {
  const { bool, num, fail } = checks;
  const named = (name, cls) => ({ [name]: class extends cls {} })[name];
  const inplaceOnly = (m) => (m.inplace ? 'inplace=True' : '');
  const inplaceTail = (m) => (m.inplace ? ', inplace=True' : '');

  // spec: the constructor's arguments after none, call(x, m) the op,
  // repr(m) the extra_repr; `inplace` picks the op's in-place form when it has one
  function activation(name, spec, call, repr = () => '') {
    return named(name, class extends Module {
      constructor(...a) {
        super();
        const o = parse(name, spec, a);
        for (const [key, v] of Object.entries(o)) this[key] = key === 'inplace' ? bool(name, key, v) : v;
      }
      forward(x) { return call(x, this); }
      extraRepr() { return repr(this); }
    });
  }

  // fn(x, ...args) or its in-place form x.fn_(...args) under inplace: true
  const op = (fn, m, x, ...args) => (m.inplace && typeof x[`${fn}_`] === 'function' ? x[`${fn}_`](...args) : api[fn](x, ...args));
  const INPLACE = [['inplace', false]];

  // softmax's implicit dim (PyTorch's _get_softmax_dim, deprecated there)
  const softmaxDim = (x, dim) => (dim !== null ? dim : [0, 1, 3].includes(x.dim()) ? 0 : 1);

  const acts = {
    ReLU: activation('ReLU', INPLACE, (x, m) => op('relu', m, x), inplaceOnly),
    ReLU6: activation('ReLU6', INPLACE, (x, m) => op('relu6', m, x), inplaceOnly),
    LeakyReLU: activation('LeakyReLU', [['negativeSlope', 1e-2], ['inplace', false]], (x, m) => op('leakyRelu', m, x, m.negativeSlope),
      (m) => `negative_slope=${pyFloat(m.negativeSlope)}${inplaceTail(m)}`),
    ELU: activation('ELU', [['alpha', 1.0], ['inplace', false]], (x, m) => op('elu', m, x, m.alpha),
      (m) => `alpha=${pyFloat(m.alpha)}${inplaceTail(m)}`),
    GELU: activation('GELU', [['approximate', 'none']], (x, m) => api.gelu(x, { approximate: m.approximate }),
      (m) => `approximate=${pyRepr(m.approximate)}`),
    SiLU: activation('SiLU', INPLACE, (x, m) => op('silu', m, x), inplaceOnly),
    Mish: activation('Mish', INPLACE, (x, m) => op('mish', m, x), inplaceOnly),
    Hardswish: activation('Hardswish', INPLACE, (x, m) => op('hardswish', m, x)),
    Hardsigmoid: activation('Hardsigmoid', INPLACE, (x, m) => op('hardsigmoid', m, x)),
    Hardtanh: activation('Hardtanh', [['minVal', -1.0], ['maxVal', 1.0], ['inplace', false]],
      (x, m) => op('hardtanh', m, x, m.minVal, m.maxVal),
      (m) => `min_val=${pyFloat(m.minVal)}, max_val=${pyFloat(m.maxVal)}${inplaceTail(m)}`),
    Sigmoid: activation('Sigmoid', [], (x) => api.sigmoid(x)),
    Tanh: activation('Tanh', [], (x) => api.tanh(x)),
    Softplus: activation('Softplus', [['beta', 1], ['threshold', 20]], (x, m) => api.softplus(x, m.beta, m.threshold),
      (m) => `beta=${m.beta}, threshold=${m.threshold}`),
    Softmax: activation('Softmax', [['dim', null]], (x, m) => api.softmax(x, softmaxDim(x, m.dim)), (m) => `dim=${pyStr(m.dim)}`),
    LogSoftmax: activation('LogSoftmax', [['dim', null]], (x, m) => api.logSoftmax(x, softmaxDim(x, m.dim)),
      (m) => `dim=${pyStr(m.dim)}`),
  };
  const hardtanhCheck = acts.Hardtanh;
  acts.Hardtanh = named('Hardtanh', class extends hardtanhCheck {
    constructor(...a) {
      super(...a);
      num('Hardtanh', 'minVal', this.minVal);
      num('Hardtanh', 'maxVal', this.maxVal);
      if (!(this.maxVal > this.minVal)) fail('InvalidArgument', 'Hardtanh(): maxVal must be greater than minVal');
    }
  });

  // ---- losses: reduction and the deprecated sizeAverage/reduce pair ----

  // _Reduction.legacy_get_string
  function reductionOf(o) {
    if (o.sizeAverage === null && o.reduce === null) return o.reduction;
    const sizeAverage = o.sizeAverage ?? true;
    const reduce = o.reduce ?? true;
    return sizeAverage && reduce ? 'mean' : reduce ? 'sum' : 'none';
  }
  const LEGACY = [['sizeAverage', null], ['reduce', null], ['reduction', 'mean']];

  // a loss module: spec of its arguments, buffers (weights) it registers, call(input, target, m)
  function loss(name, spec, call, buffers = []) {
    return named(name, class extends Module {
      constructor(...a) {
        super();
        const o = parse(name, spec, a);
        for (const [key, v] of Object.entries(o)) {
          if (key === 'sizeAverage' || key === 'reduce' || key === 'reduction') continue;
          if (buffers.includes(key)) this.registerBuffer(key === 'posWeight' ? 'pos_weight' : key, v);
          else this[key] = v;
        }
        this.reduction = reductionOf({ sizeAverage: null, reduce: null, ...o });
      }
      forward(input, target) { return call(input, target, this); }
    });
  }

  const losses = {
    L1Loss: loss('L1Loss', LEGACY, (x, y, m) => api.l1Loss(x, y, { reduction: m.reduction })),
    MSELoss: loss('MSELoss', LEGACY, (x, y, m) => api.mseLoss(x, y, m.reduction)),
    NLLLoss: loss('NLLLoss', [['weight', null], ['sizeAverage', null], ['ignoreIndex', -100], ['reduce', null], ['reduction', 'mean']],
      (x, y, m) => api.nllLoss(x, y, m.weight, m.reduction, m.ignoreIndex), ['weight']),
    CrossEntropyLoss: loss('CrossEntropyLoss', [['weight', null], ['sizeAverage', null], ['ignoreIndex', -100], ['reduce', null],
      ['reduction', 'mean'], ['labelSmoothing', 0.0]],
    // positional: the op table's order (cheaper to bind than options)
    (x, y, m) => api.crossEntropy(x, y, m.weight, m.reduction, m.ignoreIndex, m.labelSmoothing), ['weight']),
    BCEWithLogitsLoss: loss('BCEWithLogitsLoss', [['weight', null], ['sizeAverage', null], ['reduce', null], ['reduction', 'mean'],
      ['posWeight', null]],
    (x, y, m) => api.binaryCrossEntropyWithLogits(x, y, m.weight, m.pos_weight, m.reduction),
    ['weight', 'posWeight']),
    SmoothL1Loss: loss('SmoothL1Loss', [...LEGACY, ['beta', 1.0]],
      (x, y, m) => api.smoothL1Loss(x, y, { reduction: m.reduction, beta: m.beta })),
    HuberLoss: loss('HuberLoss', [['reduction', 'mean'], ['delta', 1.0]],
      (x, y, m) => api.huberLoss(x, y, { reduction: m.reduction, delta: m.delta })),
  };
  return { ...acts, ...losses };
}
