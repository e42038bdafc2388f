// torchvision 0.14's MobileNetV2 (torchvision/models/mobilenetv2.py) and its
// Conv2dNormActivation (torchvision/ops/misc.py) over wt.nn: the same classes,
// children, state-dict keys and printed form. forward() takes the eval fast
// path (common.js) when it can.

export function makeMobilenet(api, common) {
  const nn = api.nn;
  const { parseArgs, int, layerClass, fusable, unitOf, runUnit, folded, chain, dropsFolds, fail } = common;

  // torchvision's _make_divisible: v rounded to a multiple of divisor, not
  // below minValue and not more than 10% under v
  function makeDivisible(v, divisor, minValue = null) {
    const min = minValue ?? divisor;
    let out = Math.max(min, Math.floor(Math.trunc(v + divisor / 2) / divisor) * divisor);
    if (out < 0.9 * v) out += divisor;
    return out;
  }

  // Python's round(): halves to even
  const roundHalfEven = (v) => {
    const r = Math.round(v);
    return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  };

  const CNA = [['inChannels', undefined], ['outChannels', undefined], ['kernelSize', 3], ['stride', 1], ['padding', null],
    ['groups', 1], ['normLayer', undefined], ['activationLayer', undefined], ['dilation', 1], ['inplace', true], ['bias', null]];

  // Conv2d, its norm layer and its activation as a Sequential ('0', '1', '2')
  class Conv2dNormActivation extends nn.Sequential {
    constructor(...a) {
      const fn = 'Conv2dNormActivation';
      const o = parseArgs(fn, CNA, a);
      const normLayer = o.normLayer === undefined ? nn.BatchNorm2d : layerClass(fn, 'normLayer', o.normLayer);
      const activationLayer = o.activationLayer === undefined ? nn.ReLU : layerClass(fn, 'activationLayer', o.activationLayer);
      const { kernelSize: k, dilation: d } = o;
      let padding = o.padding;
      if (padding === null) {
        padding = Number.isInteger(k) && Number.isInteger(d) ? Math.floor((k - 1) / 2) * d
          : [0, 1].map((i) => Math.floor(((Array.isArray(k) ? k[i] : k) - 1) / 2) * (Array.isArray(d) ? d[i] : d));
      }
      const bias = o.bias ?? normLayer === null;
      const layers = [new nn.Conv2d(o.inChannels, o.outChannels, k, o.stride, padding, { dilation: d, groups: o.groups, bias })];
      if (normLayer !== null) layers.push(new normLayer(o.outChannels));
      if (activationLayer !== null) layers.push(o.inplace === null ? new activationLayer() : new activationLayer({ inplace: o.inplace }));
      super(...layers);
      this.outChannels = o.outChannels;
    }

    forward(x) { return fusable(this, x) ? api.noGrad(() => this._fused(x)) : super.forward(x); }

    // the three layers as one fused conv when they are Conv2d, BatchNorm2d, ReLU / ReLU6 (or two, no activation)
    _unit() {
      const n = this.length;
      return n === 2 || n === 3 ? unitOf(this.at(0), this.at(1), n === 3 ? this.at(2) : null) : null;
    }

    _fused(x, residual = null) {
      const u = this._unit();
      if (u) return runUnit(u, x, residual);
      const y = super.forward(x);
      return residual ? y.add(residual) : y;
    }
  }

  const IR = [['inp', undefined], ['oup', undefined], ['stride', undefined], ['expandRatio', undefined], ['normLayer', null]];

  class InvertedResidual extends nn.Module {
    constructor(...a) {
      super();
      const fn = 'InvertedResidual';
      const o = parseArgs(fn, IR, a);
      for (const name of ['inp', 'oup', 'stride']) int(fn, name, o[name]);
      if (typeof o.expandRatio !== 'number') fail('TypeError', `${fn}(): argument 'expandRatio' must be a number`);
      this.stride = o.stride;
      if (o.stride !== 1 && o.stride !== 2) fail('ValueError', `stride should be 1 or 2 instead of ${o.stride}`);
      const normLayer = layerClass(fn, 'normLayer', o.normLayer) ?? nn.BatchNorm2d;
      const hidden = roundHalfEven(o.inp * o.expandRatio);
      this.useResConnect = this.stride === 1 && o.inp === o.oup;
      const layers = [];
      if (o.expandRatio !== 1) {
        layers.push(new Conv2dNormActivation(o.inp, hidden, { kernelSize: 1, normLayer, activationLayer: nn.ReLU6 }));
      }
      layers.push(
        new Conv2dNormActivation(hidden, hidden, { stride: o.stride, groups: hidden, normLayer, activationLayer: nn.ReLU6 }),
        new nn.Conv2d(hidden, o.oup, 1, 1, 0, { bias: false }),
        new normLayer(o.oup),
      );
      this.conv = new nn.Sequential(...layers);
      this.outChannels = o.oup;
      this._isCn = o.stride > 1;
    }

    forward(x) { return fusable(this, x) ? api.noGrad(() => this._fused(x)) : this._plain(x); }

    _plain(x) { return this.useResConnect ? x.add(this.conv(x)) : this.conv(x); }

    // the whole block as one _inverted_residual call (the expansion, the
    // depthwise conv and the projection with their BatchNorms folded; the
    // expanded map stays in cache); a block of another shape: the expansion
    // and depthwise Conv2dNormActivations fused, then the projection conv +
    // BatchNorm with the skip added in its output tile
    _fused(x) {
      const layers = [...this.conv];
      const n = layers.length;
      const project = unitOf(layers[n - 2], layers[n - 1]);
      const heads = layers.slice(0, n - 2);
      if (!project || !heads.every((m) => m instanceof Conv2dNormActivation)) return this._plain(x);
      const units = this._blockUnits(heads, project);
      if (units) {
        const [e, d, p] = units.map((u) => (u ? folded(u) : { w: null, b: null }));
        return api._invertedResidual(x, e.w, e.b, d.w, d.b, p.w, p.b, this.stride, this.useResConnect);
      }
      const h = chain(x, heads.map((m) => (t) => m._fused(t)));
      const y = runUnit(project, h, this.useResConnect ? x : null);
      if (h !== x) h.dispose();
      return y;
    }
  }

  const same = (v, n) => (Array.isArray(v) ? v : [v, v]).every((e) => e === n);

  // [expand | null, depthwise, project] units when the block is what
  // _inverted_residual computes: an optional 1x1 + ReLU6, a depthwise
  // conv (odd kernel, padding k // 2, undilated) + ReLU6, a 1x1 without
  // activation; else null
  InvertedResidual.prototype._blockUnits = function blockUnits(heads, project) {
    if (typeof api._invertedResidual !== 'function' || heads.length < 1 || heads.length > 2) return null;
    const units = heads.map((m) => m._unit());
    if (units.some((u) => !u || u.activation !== 'relu6')) return null;
    const [e, d] = units.length === 2 ? units : [null, units[0]];
    const plain1x1 = (c) => same(c.kernelSize, 1) && same(c.stride, 1) && same(c.padding, 0) && same(c.dilation, 1) &&
      c.groups === 1;
    if (e && !plain1x1(e.conv)) return null;
    if (!plain1x1(project.conv) || project.activation !== 'none') return null;
    const dc = d.conv;
    const [kh, kw] = Array.isArray(dc.kernelSize) ? dc.kernelSize : [dc.kernelSize, dc.kernelSize];
    const pad = Array.isArray(dc.padding) ? dc.padding : [dc.padding, dc.padding];
    const depthwise = dc.groups === dc.inChannels && dc.outChannels === dc.inChannels && kh % 2 === 1 && kw % 2 === 1 &&
      pad[0] === (kh - 1) / 2 && pad[1] === (kw - 1) / 2 && same(dc.dilation, 1) && same(dc.stride, this.stride);
    return depthwise ? [e, d, project] : null;
  };

  const MOBILENET = [['numClasses', 1000], ['widthMult', 1.0], ['invertedResidualSetting', null], ['roundNearest', 8],
    ['block', null], ['normLayer', null], ['dropout', 0.2]];

  class MobileNetV2 extends nn.Module {
    constructor(...a) {
      super();
      const fn = 'MobileNetV2';
      const o = parseArgs(fn, MOBILENET, a);
      int(fn, 'numClasses', o.numClasses);
      int(fn, 'roundNearest', o.roundNearest);
      if (typeof o.widthMult !== 'number') fail('TypeError', `${fn}(): argument 'widthMult' must be a number`);
      const block = layerClass(fn, 'block', o.block) ?? InvertedResidual;
      const normLayer = layerClass(fn, 'normLayer', o.normLayer) ?? nn.BatchNorm2d;
      const setting = o.invertedResidualSetting ?? [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
        [6, 160, 3, 2], [6, 320, 1, 1]];
      if (!Array.isArray(setting) || setting.length === 0 || !Array.isArray(setting[0]) || setting[0].length !== 4) {
        fail('ValueError', `inverted_residual_setting should be non-empty or a 4-element list, got ${JSON.stringify(setting)}`);
      }
      let inputChannel = makeDivisible(32 * o.widthMult, o.roundNearest);
      this.lastChannel = makeDivisible(1280 * Math.max(1.0, o.widthMult), o.roundNearest);
      const features = [new Conv2dNormActivation(3, inputChannel, { stride: 2, normLayer, activationLayer: nn.ReLU6 })];
      for (const [t, c, n, s] of setting) {
        const outputChannel = makeDivisible(c * o.widthMult, o.roundNearest);
        for (let i = 0; i < n; i++) {
          features.push(new block(inputChannel, outputChannel, i === 0 ? s : 1, { expandRatio: t, normLayer }));
          inputChannel = outputChannel;
        }
      }
      features.push(new Conv2dNormActivation(inputChannel, this.lastChannel, { kernelSize: 1, normLayer, activationLayer: nn.ReLU6 }));
      this.features = new nn.Sequential(...features);
      this.classifier = new nn.Sequential(new nn.Dropout({ p: o.dropout }), new nn.Linear(this.lastChannel, o.numClasses));
      this._init();
    }

    // torchvision's init: kaiming_normal_(fan_out) convs with zero biases,
    // BatchNorm / GroupNorm ones and zeros, Linear normal(0, 0.01) and zeros
    _init() {
      const { init } = nn;
      for (const m of this.modules()) {
        if (m instanceof nn.Conv2d) {
          init.kaimingNormal_(m.weight, { mode: 'fan_out' });
          if (m.bias) init.zeros_(m.bias);
        } else if ((m instanceof nn.BatchNorm2d || m instanceof nn.GroupNorm) && m.weight) {
          init.ones_(m.weight);
          init.zeros_(m.bias);
        } else if (m instanceof nn.Linear) {
          init.normal_(m.weight, 0, 0.01);
          if (m.bias) init.zeros_(m.bias);
        }
      }
    }

    forward(x) { return fusable(this, x) ? api.noGrad(() => this._fused(x)) : this._plain(x); }

    _plain(x) { return this.classifier(api.flatten(api.adaptiveAvgPool2d(this.features(x), [1, 1]), 1)); }

    _fused(x) {
      return chain(x, [
        ...[...this.features].map((m) => (t) => (typeof m._fused === 'function' ? m._fused(t) : m(t))),
        (t) => api.adaptiveAvgPool2d(t, [1, 1]),
        (t) => api.flatten(t, 1),
        // Dropout in eval is the identity: skipped
        ...[...this.classifier].filter((m) => !(m instanceof nn.Dropout)).map((m) => (t) => m(t)),
      ]);
    }
  }
  dropsFolds(Conv2dNormActivation, InvertedResidual, MobileNetV2);

  function mobilenetV2(options = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      fail('TypeError', 'mobilenetV2(): options must be an object such as { numClasses: 10, widthMult: 0.5 }');
    }
    const { weights, progress, ...rest } = options;
    if (weights !== undefined && weights !== null) {
      fail('NotImplemented', 'mobilenetV2(): weft downloads no weights; load a state dict with model.loadStateDict(wt.load(bytes))');
    }
    return new MobileNetV2(rest);
  }

  return { MobileNetV2, InvertedResidual, Conv2dNormActivation, mobilenetV2, makeDivisible };
}
