// torchvision 0.14's ResNet (torchvision/models/resnet.py) over wt.nn: the
// same classes (ResNet, BasicBlock, Bottleneck), attribute order, state-dict
// keys and printed form, so a torch.save(resnet18().state_dict()) file loads
// unchanged. forward() takes the eval fast path (common.js) when it can.

export function makeResnet(api, common) {
  const nn = api.nn;
  const { parseArgs, int, layerClass, fusable, unitOf, runUnit, chain, dropsFolds, fail } = common;

  const conv3x3 = (inP, outP, stride = 1, groups = 1, dilation = 1) =>
    new nn.Conv2d(inP, outP, 3, { stride, padding: dilation, groups, bias: false, dilation });
  const conv1x1 = (inP, outP, stride = 1) => new nn.Conv2d(inP, outP, 1, { stride, bias: false });

  const BLOCK = [['inplanes', undefined], ['planes', undefined], ['stride', 1], ['downsample', null], ['groups', 1],
    ['baseWidth', 64], ['dilation', 1], ['normLayer', null]];

  function blockArgs(fn, a) {
    const o = parseArgs(fn, BLOCK, a);
    for (const name of ['inplanes', 'planes', 'stride', 'groups', 'baseWidth', 'dilation']) int(fn, name, o[name]);
    if (o.downsample !== null && !(o.downsample instanceof nn.Module)) {
      fail('TypeError', `${fn}(): argument 'downsample' must be a Module or null`);
    }
    o.normLayer = layerClass(fn, 'normLayer', o.normLayer) ?? nn.BatchNorm2d;
    return o;
  }

  // the identity branch: x, or downsample(x) (fused when it is conv1x1 + BatchNorm)
  function identityOf(block, x) {
    const ds = block.downsample;
    if (!ds) return x;
    const u = ds instanceof nn.Sequential && ds.length === 2 ? unitOf(ds.at(0), ds.at(1)) : null;
    return u ? runUnit(u, x) : ds(x);
  }

  class BasicBlock extends nn.Module {
    static expansion = 1;
    constructor(...a) {
      super();
      const o = blockArgs('BasicBlock', a);
      if (o.groups !== 1 || o.baseWidth !== 64) fail('ValueError', 'BasicBlock only supports groups=1 and base_width=64');
      if (o.dilation > 1) fail('NotImplemented', 'Dilation > 1 not supported in BasicBlock');
      this.conv1 = conv3x3(o.inplanes, o.planes, o.stride);
      this.bn1 = new o.normLayer(o.planes);
      this.relu = new nn.ReLU({ inplace: true });
      this.conv2 = conv3x3(o.planes, o.planes);
      this.bn2 = new o.normLayer(o.planes);
      this.downsample = o.downsample;
      this.stride = o.stride;
    }

    forward(x) { return fusable(this, x) ? api.noGrad(() => this._fused(x)) : this._plain(x); }

    _plain(x) {
      const identity = this.downsample ? this.downsample(x) : x;
      const out = this.bn2(this.conv2(this.relu(this.bn1(this.conv1(x)))));
      return this.relu(out.add(identity));
    }

    // relu(bn2(conv2(relu(bn1(conv1(x))))) + identity): two fused convs
    _fused(x) {
      const u1 = unitOf(this.conv1, this.bn1, this.relu);
      const u2 = unitOf(this.conv2, this.bn2, this.relu);
      if (!u1 || !u2) return this._plain(x);
      const identity = identityOf(this, x);
      const h = runUnit(u1, x);
      const y = runUnit(u2, h, identity);
      h.dispose();
      if (identity !== x) identity.dispose();
      return y;
    }
  }

  class Bottleneck extends nn.Module {
    static expansion = 4;
    constructor(...a) {
      super();
      const o = blockArgs('Bottleneck', a);
      const width = Math.trunc(o.planes * (o.baseWidth / 64.0)) * o.groups;
      this.conv1 = conv1x1(o.inplanes, width);
      this.bn1 = new o.normLayer(width);
      this.conv2 = conv3x3(width, width, o.stride, o.groups, o.dilation);
      this.bn2 = new o.normLayer(width);
      this.conv3 = conv1x1(width, o.planes * Bottleneck.expansion);
      this.bn3 = new o.normLayer(o.planes * Bottleneck.expansion);
      this.relu = new nn.ReLU({ inplace: true });
      this.downsample = o.downsample;
      this.stride = o.stride;
    }

    forward(x) { return fusable(this, x) ? api.noGrad(() => this._fused(x)) : this._plain(x); }

    _plain(x) {
      const identity = this.downsample ? this.downsample(x) : x;
      let out = this.relu(this.bn1(this.conv1(x)));
      out = this.relu(this.bn2(this.conv2(out)));
      out = this.bn3(this.conv3(out));
      return this.relu(out.add(identity));
    }

    _fused(x) {
      const units = [unitOf(this.conv1, this.bn1, this.relu), unitOf(this.conv2, this.bn2, this.relu),
        unitOf(this.conv3, this.bn3, this.relu)];
      if (units.includes(null)) return this._plain(x);
      const identity = identityOf(this, x);
      const h = chain(x, [(t) => runUnit(units[0], t), (t) => runUnit(units[1], t)]);
      const y = runUnit(units[2], h, identity);
      h.dispose();
      if (identity !== x) identity.dispose();
      return y;
    }
  }

  const RESNET = [['block', undefined], ['layers', undefined], ['numClasses', 1000], ['zeroInitResidual', false],
    ['groups', 1], ['widthPerGroup', 64], ['replaceStrideWithDilation', null], ['normLayer', null]];

  class ResNet extends nn.Module {
    constructor(...a) {
      super();
      const fn = 'ResNet';
      const o = parseArgs(fn, RESNET, a);
      if (o.block !== BasicBlock && o.block !== Bottleneck && !(o.block?.prototype instanceof nn.Module)) {
        fail('TypeError', `${fn}(): argument 'block' must be BasicBlock, Bottleneck or another block class`);
      }
      if (!Array.isArray(o.layers) || o.layers.length !== 4) {
        fail('TypeError', `${fn}(): argument 'layers' must be an array of 4 block counts`);
      }
      o.layers.forEach((n, i) => int(fn, `layers[${i}]`, n));
      int(fn, 'numClasses', o.numClasses);
      const rswd = o.replaceStrideWithDilation ?? [false, false, false];
      if (!Array.isArray(rswd) || rswd.length !== 3) {
        fail('ValueError', `replace_stride_with_dilation should be None or a 3-element tuple, got ${JSON.stringify(rswd)}`);
      }
      this._normLayer = layerClass(fn, 'normLayer', o.normLayer) ?? nn.BatchNorm2d;
      this.inplanes = 64;
      this.dilation = 1;
      this.groups = int(fn, 'groups', o.groups);
      this.baseWidth = int(fn, 'widthPerGroup', o.widthPerGroup);
      this.conv1 = new nn.Conv2d(3, this.inplanes, 7, { stride: 2, padding: 3, bias: false });
      this.bn1 = new this._normLayer(this.inplanes);
      this.relu = new nn.ReLU({ inplace: true });
      this.maxpool = new nn.MaxPool2d(3, { stride: 2, padding: 1 });
      this.layer1 = this._makeLayer(o.block, 64, o.layers[0]);
      this.layer2 = this._makeLayer(o.block, 128, o.layers[1], 2, rswd[0]);
      this.layer3 = this._makeLayer(o.block, 256, o.layers[2], 2, rswd[1]);
      this.layer4 = this._makeLayer(o.block, 512, o.layers[3], 2, rswd[2]);
      this.avgpool = new nn.AdaptiveAvgPool2d([1, 1]);
      this.fc = new nn.Linear(512 * o.block.expansion, o.numClasses);
      this._init(o.zeroInitResidual);
    }

    // torchvision's init: kaiming_normal_(fan_out, relu) convs, BatchNorm /
    // GroupNorm ones and zeros, nn.Linear's own; zeroInitResidual zeroes each
    // block's last BatchNorm weight
    _init(zeroInitResidual) {
      for (const m of this.modules()) {
        if (m instanceof nn.Conv2d) nn.init.kaimingNormal_(m.weight, { mode: 'fan_out', nonlinearity: 'relu' });
        else if ((m instanceof nn.BatchNorm2d || m instanceof nn.GroupNorm) && m.weight) {
          nn.init.constant_(m.weight, 1);
          nn.init.constant_(m.bias, 0);
        }
      }
      if (!zeroInitResidual) return;
      for (const m of this.modules()) {
        const last = m instanceof Bottleneck ? m.bn3 : m instanceof BasicBlock ? m.bn2 : null;
        if (last?.weight) nn.init.constant_(last.weight, 0);
      }
    }

    _makeLayer(block, planes, blocks, stride = 1, dilate = false) {
      const normLayer = this._normLayer;
      let downsample = null;
      const previousDilation = this.dilation;
      if (dilate) {
        this.dilation *= stride;
        stride = 1;
      }
      if (stride !== 1 || this.inplanes !== planes * block.expansion) {
        downsample = new nn.Sequential(conv1x1(this.inplanes, planes * block.expansion, stride), new normLayer(planes * block.expansion));
      }
      const layers = [new block(this.inplanes, planes, stride, downsample, this.groups, this.baseWidth, previousDilation, normLayer)];
      this.inplanes = planes * block.expansion;
      for (let i = 1; i < blocks; i++) {
        layers.push(new block(this.inplanes, planes, { groups: this.groups, baseWidth: this.baseWidth, dilation: this.dilation,
          normLayer }));
      }
      return new nn.Sequential(...layers);
    }

    forward(x) { return fusable(this, x) ? api.noGrad(() => this._fused(x)) : this._plain(x); }

    _plain(x) {
      let y = this.maxpool(this.relu(this.bn1(this.conv1(x))));
      y = this.layer4(this.layer3(this.layer2(this.layer1(y))));
      return this.fc(api.flatten(this.avgpool(y), 1));
    }

    _fused(x) {
      const stem = unitOf(this.conv1, this.bn1, this.relu);
      const blocks = [this.layer1, this.layer2, this.layer3, this.layer4].flatMap((layer) => [...layer]);
      return chain(x, [
        (t) => (stem ? runUnit(stem, t) : this.relu(this.bn1(this.conv1(t)))),
        (t) => this.maxpool(t),
        ...blocks.map((b) => (t) => (typeof b._fused === 'function' ? b._fused(t) : b(t))),
        (t) => this.avgpool(t),
        (t) => api.flatten(t, 1),
        (t) => this.fc(t),
      ]);
    }
  }
  dropsFolds(BasicBlock, Bottleneck, ResNet);

  const factory = (name, block, layers) => ({
    [name](options = {}) {
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        fail('TypeError', `${name}(): options must be an object such as { numClasses: 10 }`);
      }
      if (options.weights !== undefined && options.weights !== null) {
        fail('NotImplemented', `${name}(): weft downloads no weights; load a state dict with model.loadStateDict(wt.load(bytes))`);
      }
      const { weights, progress, ...rest } = options;
      return new ResNet(block, layers, rest);
    },
  })[name];

  return {
    ResNet, BasicBlock, Bottleneck,
    resnet18: factory('resnet18', BasicBlock, [2, 2, 2, 2]),
    resnet34: factory('resnet34', BasicBlock, [3, 4, 6, 3]),
    resnet50: factory('resnet50', Bottleneck, [3, 4, 6, 3]),
  };
}
