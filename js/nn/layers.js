// torch.nn's layers with parameters or shapes: Identity, Flatten, Unflatten,
// Linear, Conv1d, Conv2d, ConvTranspose2d, the pools, Upsample, the padding
// layers and Dropout/Dropout2d. Constructor arguments are PyTorch's, in its
// positional order, options last in camelCase; parameter names, shapes,
// default initialization and extra_repr are torch/nn/modules 1.13's.
import { REQUIRED as R } from './args.js';
import { pyFloat, pyStr } from './module.js';

export function makeLayers(api, { Module, param, parse, checks, init }) {
  const { int, num, bool, tuple, fail } = checks;

  class Identity extends Module {
    constructor() { super(); } // PyTorch's Identity takes and ignores any arguments
    forward(x) { return x; }
  }

  class Flatten extends Module {
    constructor(...a) {
      super();
      const o = parse('Flatten', [['startDim', 1], ['endDim', -1]], a);
      this.startDim = int('Flatten', 'startDim', o.startDim);
      this.endDim = int('Flatten', 'endDim', o.endDim);
    }
    forward(x) { return x.flatten(this.startDim, this.endDim); }
    extraRepr() { return `start_dim=${this.startDim}, end_dim=${this.endDim}`; }
  }

  class Unflatten extends Module {
    constructor(...a) {
      super();
      const o = parse('Unflatten', [['dim', R], ['unflattenedSize', R]], a);
      this.dim = int('Unflatten', 'dim', o.dim);
      if (!Array.isArray(o.unflattenedSize)) fail('TypeError', `Unflatten(): unflattenedSize must be an array of integers, not ${typeof o.unflattenedSize}`);
      this.unflattenedSize = o.unflattenedSize.map((v) => int('Unflatten', 'unflattenedSize', v));
    }
    forward(x) { return x.unflatten(this.dim, this.unflattenedSize); }
    extraRepr() { return `dim=${this.dim}, unflattened_size=${pyStr(this.unflattenedSize)}`; }
  }

  // Linear and the convolutions: kaiming_uniform_(a=sqrt(5)) on the weight,
  // then the bias uniform in ±1/sqrt(fan_in)
  function resetLinearLike(m) {
    if (m.weight.device === 'meta') return;
    init.kaimingUniform_(m.weight, Math.sqrt(5));
    if (m.bias) {
      const [fanIn] = init._calculateFanInAndFanOut(m.weight);
      const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
      init.uniform_(m.bias, -bound, bound);
    }
  }

  class Linear extends Module {
    constructor(...a) {
      super();
      const o = parse('Linear', [['inFeatures', R], ['outFeatures', R], ['bias', true], ['device', null], ['dtype', null]], a);
      this.inFeatures = int('Linear', 'inFeatures', o.inFeatures);
      this.outFeatures = int('Linear', 'outFeatures', o.outFeatures);
      this.weight = param([this.outFeatures, this.inFeatures], o);
      if (bool('Linear', 'bias', o.bias)) this.bias = param([this.outFeatures], o);
      else this.registerParameter('bias', null);
      this.resetParameters();
    }
    resetParameters() { resetLinearLike(this); }
    forward(x) { return api.linear(x, this.weight, this.bias); }
    extraRepr() { return `in_features=${this.inFeatures}, out_features=${this.outFeatures}, bias=${pyStr(this.bias !== null)}`; }
  }

  const PADDING_MODES = ['zeros', 'reflect', 'replicate', 'circular'];

  // torch.nn.modules.conv._ConvNd
  class ConvNd extends Module {
    constructor(fn, n, transposed, o) {
      super();
      const inC = int(fn, 'inChannels', o.inChannels);
      const outC = int(fn, 'outChannels', o.outChannels);
      const groups = int(fn, 'groups', o.groups);
      if (groups <= 0) fail('InvalidArgument', 'groups must be a positive integer');
      if (inC % groups !== 0) fail('InvalidArgument', 'in_channels must be divisible by groups');
      if (outC % groups !== 0) fail('InvalidArgument', 'out_channels must be divisible by groups');
      const kernelSize = tuple(fn, 'kernelSize', o.kernelSize, n);
      const stride = tuple(fn, 'stride', o.stride, n);
      const dilation = tuple(fn, 'dilation', o.dilation, n);
      let padding;
      if (typeof o.padding === 'string') {
        if (o.padding !== 'same' && o.padding !== 'valid') {
          fail('InvalidArgument', `Invalid padding string '${o.padding}', should be one of ['valid', 'same']`);
        }
        if (o.padding === 'same' && stride.some((s) => s !== 1)) fail('InvalidArgument', "padding='same' is not supported for strided convolutions");
        padding = o.padding;
      } else padding = tuple(fn, 'padding', o.padding, n);
      if (!PADDING_MODES.includes(o.paddingMode)) {
        fail('InvalidArgument', `padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode='${o.paddingMode}'`);
      }
      Object.assign(this, { inChannels: inC, outChannels: outC, kernelSize, stride, padding, dilation, transposed,
        outputPadding: tuple(fn, 'outputPadding', o.outputPadding ?? 0, n), groups, paddingMode: o.paddingMode });
      // F.pad's order: last dim first, (before, after) each
      const rev = [];
      for (let d = n - 1; d >= 0; d--) {
        if (padding === 'same') {
          const total = dilation[d] * (kernelSize[d] - 1);
          rev.push(Math.floor(total / 2), total - Math.floor(total / 2));
        } else rev.push(...(padding === 'valid' ? [0, 0] : [padding[d], padding[d]]));
      }
      this._reversedPaddingRepeatedTwice = rev;
      const wShape = transposed ? [inC, outC / groups, ...kernelSize] : [outC, inC / groups, ...kernelSize];
      this.weight = param(wShape, o);
      if (bool(fn, 'bias', o.bias)) this.bias = param([outC], o);
      else this.registerParameter('bias', null);
      this.resetParameters();
    }
    resetParameters() { resetLinearLike(this); }
    // a padding mode other than zeros pads first (F.pad), then convolves unpadded
    // (positional: the op table's order, cheaper to bind than options)
    _conv(op, x) {
      const { weight, bias, stride, padding, dilation, groups } = this;
      if (this.paddingMode === 'zeros') return op(x, weight, bias, stride, padding, dilation, groups);
      const padded = api.pad(x, this._reversedPaddingRepeatedTwice, { mode: this.paddingMode });
      try {
        return op(padded, weight, bias, stride, 0, dilation, groups);
      } finally {
        padded.dispose();
      }
    }
    extraRepr() {
      const zero = (v, z) => Array.isArray(v) && v.every((x) => x === z);
      let s = `${this.inChannels}, ${this.outChannels}, kernel_size=${pyStr(this.kernelSize)}, stride=${pyStr(this.stride)}`;
      if (!zero(this.padding, 0)) s += `, padding=${pyStr(this.padding)}`;
      if (!zero(this.dilation, 1)) s += `, dilation=${pyStr(this.dilation)}`;
      if (!zero(this.outputPadding, 0)) s += `, output_padding=${pyStr(this.outputPadding)}`;
      if (this.groups !== 1) s += `, groups=${this.groups}`;
      if (this.bias === null) s += ', bias=False';
      if (this.paddingMode !== 'zeros') s += `, padding_mode=${this.paddingMode}`;
      return s;
    }
  }

  const CONV = [['inChannels', R], ['outChannels', R], ['kernelSize', R], ['stride', 1], ['padding', 0], ['dilation', 1],
    ['groups', 1], ['bias', true], ['paddingMode', 'zeros'], ['device', null], ['dtype', null]];

  class Conv1d extends ConvNd {
    constructor(...a) { super('Conv1d', 1, false, parse('Conv1d', CONV, a)); }
    forward(x) { return this._conv(api.conv1d, x); }
  }

  class Conv2d extends ConvNd {
    constructor(...a) { super('Conv2d', 2, false, parse('Conv2d', CONV, a)); }
    forward(x) { return this._conv(api.conv2d, x); }
  }

  class ConvTranspose2d extends ConvNd {
    constructor(...a) {
      const o = parse('ConvTranspose2d', [['inChannels', R], ['outChannels', R], ['kernelSize', R], ['stride', 1], ['padding', 0],
        ['outputPadding', 0], ['groups', 1], ['bias', true], ['dilation', 1], ['paddingMode', 'zeros'], ['device', null], ['dtype', null]], a);
      if (o.paddingMode !== 'zeros') fail('InvalidArgument', 'Only "zeros" padding mode is supported for ConvTranspose2d');
      super('ConvTranspose2d', 2, true, o);
    }
    // outputSize (optional) picks the output padding, as PyTorch's _output_padding
    forward(x, outputSize = null) {
      const outputPadding = outputSize === null ? this.outputPadding : this._outputPadding(x, outputSize);
      return api.convTranspose2d(x, this.weight, this.bias, { stride: this.stride, padding: this.padding, outputPadding,
        groups: this.groups, dilation: this.dilation });
    }
    _outputPadding(x, outputSize) {
      const n = 2;
      const nonSpatial = x.dim() === n + 2 ? 2 : 1;
      let size = outputSize.length === nonSpatial + n ? outputSize.slice(nonSpatial) : outputSize;
      if (size.length !== n) {
        fail('InvalidArgument', `ConvTranspose2D: for ${x.dim()}D input, output_size must have ${n} or ${n + nonSpatial} elements (got ${outputSize.length})`);
      }
      const min = [];
      const max = [];
      for (let d = 0; d < n; d++) {
        min.push((x.size(d + nonSpatial) - 1) * this.stride[d] - 2 * this.padding[d] + this.dilation[d] * (this.kernelSize[d] - 1) + 1);
        max.push(min[d] + this.stride[d] - 1);
      }
      size.forEach((s, i) => {
        if (s < min[i] || s > max[i]) {
          fail('InvalidArgument', `requested an output size of [${size.join(', ')}], but valid sizes range from [${min.join(', ')}] ` +
            `to [${max.join(', ')}] (for an input of [${x.shape.slice(2).join(', ')}])`); // size()[2:], as 1.13 prints it
        }
      });
      return size.map((s, d) => s - min[d]);
    }
  }

  // ---- pooling ----

  class MaxPool2d extends Module {
    constructor(...a) {
      super();
      const o = parse('MaxPool2d', [['kernelSize', R], ['stride', null], ['padding', 0], ['dilation', 1], ['returnIndices', false],
        ['ceilMode', false]], a);
      Object.assign(this, { ...o, stride: o.stride ?? o.kernelSize });
    }
    forward(x) {
      return api.maxPool2d(x, this.kernelSize, { stride: this.stride, padding: this.padding, dilation: this.dilation,
        ceilMode: this.ceilMode, returnIndices: this.returnIndices });
    }
    extraRepr() {
      return `kernel_size=${pyStr(this.kernelSize)}, stride=${pyStr(this.stride)}, padding=${pyStr(this.padding)}, ` +
        `dilation=${pyStr(this.dilation)}, ceil_mode=${pyStr(this.ceilMode)}`;
    }
  }

  class AvgPool2d extends Module {
    constructor(...a) {
      super();
      const o = parse('AvgPool2d', [['kernelSize', R], ['stride', null], ['padding', 0], ['ceilMode', false], ['countIncludePad', true],
        ['divisorOverride', null]], a);
      Object.assign(this, { ...o, stride: o.stride ?? o.kernelSize });
    }
    forward(x) {
      return api.avgPool2d(x, this.kernelSize, { stride: this.stride, padding: this.padding, ceilMode: this.ceilMode,
        countIncludePad: this.countIncludePad, divisorOverride: this.divisorOverride });
    }
    extraRepr() { return `kernel_size=${pyStr(this.kernelSize)}, stride=${pyStr(this.stride)}, padding=${pyStr(this.padding)}`; }
  }

  class AdaptiveAvgPool2d extends Module {
    constructor(...a) {
      super();
      this.outputSize = parse('AdaptiveAvgPool2d', [['outputSize', R]], a).outputSize;
    }
    forward(x) { return api.adaptiveAvgPool2d(x, this.outputSize); }
    extraRepr() { return `output_size=${pyStr(this.outputSize)}`; }
  }

  // ---- resizing and padding ----

  class Upsample extends Module {
    constructor(...a) {
      super();
      const o = parse('Upsample', [['size', null], ['scaleFactor', null], ['mode', 'nearest'], ['alignCorners', null],
        ['recomputeScaleFactor', null]], a);
      const sf = o.scaleFactor;
      // PyTorch keeps scale factors as floats
      Object.assign(this, { ...o, scaleFactor: sf ? (Array.isArray(sf) ? sf.map(Number) : Number(sf)) : null });
    }
    // the options that are set (F.interpolate's None ones left out)
    forward(x) {
      const opts = { mode: this.mode };
      for (const key of ['size', 'scaleFactor', 'alignCorners', 'recomputeScaleFactor']) {
        if (this[key] !== null && this[key] !== undefined) opts[key] = this[key];
      }
      return api.interpolate(x, opts);
    }
    extraRepr() {
      const floats = (v) => (Array.isArray(v) ? `(${v.map(pyFloat).join(', ')}${v.length === 1 ? ',' : ''})` : pyFloat(v));
      const info = this.scaleFactor !== null ? `scale_factor=${floats(this.scaleFactor)}` : `size=${pyStr(this.size)}`;
      return `${info}, mode=${this.mode}`; // 1.13 prints the mode unquoted
    }
  }

  // _ConstantPadNd / _ReflectionPadNd / _ReplicationPadNd over F.pad
  function padLayer(name, n, mode, withValue) {
    return class extends Module {
      static get name() { return name; }
      constructor(...a) {
        super();
        const o = parse(name, withValue === 'arg' ? [['padding', R], ['value', R]] : [['padding', R]], a);
        this.padding = tuple(name, 'padding', o.padding, 2 * n);
        if (withValue) this.value = withValue === 'arg' ? num(name, 'value', o.value) : 0;
      }
      forward(x) { return api.pad(x, this.padding, withValue ? { mode, value: this.value } : { mode }); }
      extraRepr() {
        return withValue === 'arg' ? `padding=${pyStr(this.padding)}, value=${pyStr(this.value)}` : pyStr(this.padding);
      }
    };
  }

  // ---- dropout ----

  function dropoutLayer(name, fn) {
    return class extends Module {
      static get name() { return name; }
      constructor(...a) {
        super();
        const o = parse(name, [['p', 0.5], ['inplace', false]], a);
        if (typeof o.p !== 'number' || o.p < 0 || o.p > 1) fail('InvalidArgument', `dropout probability has to be between 0 and 1, but got ${o.p}`);
        this.p = o.p;
        this.inplace = bool(name, 'inplace', o.inplace);
      }
      forward(x) {
        const inPlace = this.inplace && typeof api[`${fn}_`] === 'function';
        return (inPlace ? api[`${fn}_`] : api[fn])(x, this.p, this.training);
      }
      extraRepr() { return `p=${pyFloat(this.p)}, inplace=${pyStr(this.inplace)}`; }
    };
  }

  return {
    Identity, Flatten, Unflatten, Linear, Conv1d, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Upsample,
    ZeroPad2d: padLayer('ZeroPad2d', 2, 'constant', 'zero'),
    ConstantPad1d: padLayer('ConstantPad1d', 1, 'constant', 'arg'),
    ConstantPad2d: padLayer('ConstantPad2d', 2, 'constant', 'arg'),
    ReflectionPad1d: padLayer('ReflectionPad1d', 1, 'reflect', null),
    ReflectionPad2d: padLayer('ReflectionPad2d', 2, 'reflect', null),
    ReplicationPad1d: padLayer('ReplicationPad1d', 1, 'replicate', null),
    ReplicationPad2d: padLayer('ReplicationPad2d', 2, 'replicate', null),
    Dropout: dropoutLayer('Dropout', 'dropout'),
    Dropout2d: dropoutLayer('Dropout2d', 'dropout2d'),
  };
}
