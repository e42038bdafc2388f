// torchvision's resnet18 and mobilenet_v2 in eval, composed functionally from
// weft's ops over a state dict (an object of tensors keyed by torchvision's
// names, e.g. wt.loadSafetensors of bench/models/out/<model>.safetensors), for
// benchmark W9 until weft/models (issue 23's module API) lands.
//
// Every BatchNorm is folded into the conv before it
// (wt.nn.utils.fuseConvBnWeights), so a conv + bn + activation (+ the
// residual add) is one _conv2d_fused call: its bias, the ReLU / ReLU6 and
// ResNet's `out + identity` are applied in the convolution's output tile.
// { fused: false } composes the same folded model from conv2d, add and
// relu / hardtanh instead (what the fusion saves).
//
//   const net = buildCnn(wt, 'resnet18', stateDict, { fused: true });
//   const logits = net.forward(x);   // x [1, 3, 224, 224], any memory format
//   net.dispose();
const conv = (prefix, bn, stride, padding, groups = 1) => ({ prefix, bn, stride, padding, groups });

// resnet18: the stem, then 4 stages of 2 BasicBlocks (the first block of
// stages 2-4 strides 2, with a 1x1 downsample of the identity)
function resnet18Plan() {
  const blocks = [];
  for (let s = 1; s <= 4; s++) {
    for (let b = 0; b < 2; b++) {
      const p = `layer${s}.${b}`, stride = s > 1 && b === 0 ? 2 : 1;
      blocks.push({
        conv1: conv(`${p}.conv1`, `${p}.bn1`, stride, 1),
        conv2: conv(`${p}.conv2`, `${p}.bn2`, 1, 1),
        down: stride === 2 ? conv(`${p}.downsample.0`, `${p}.downsample.1`, 2, 0) : null,
      });
    }
  }
  return { stem: conv('conv1', 'bn1', 2, 3), blocks, fc: 'fc' };
}

// mobilenet_v2: features.0 (3x3 s2 + bn + relu6), 17 inverted residuals
// (expand 1x1 + relu6 unless t = 1, depthwise 3x3 + relu6, project 1x1, the
// skip when stride 1 and the channels match), features.18 (1x1 + relu6)
function mobilenetV2Plan() {
  const settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
    [6, 320, 1, 1]];
  const blocks = [];
  let i = 1, cin = 32;
  for (const [t, c, n, s] of settings) {
    for (let j = 0; j < n; j++, i++) {
      const p = `features.${i}.conv`, stride = j === 0 ? s : 1, hidden = cin * t;
      const layers = t === 1 ? [] : [{ ...conv(`${p}.0.0`, `${p}.0.1`, 1, 0), act: 'relu6' }];
      const k = layers.length;
      layers.push({ ...conv(`${p}.${k}.0`, `${p}.${k}.1`, stride, 1, hidden), act: 'relu6' });
      layers.push({ ...conv(`${p}.${k + 1}`, `${p}.${k + 2}`, 1, 0), act: 'none' });
      blocks.push({ layers, skip: stride === 1 && cin === c });
      cin = c;
    }
  }
  return { stem: { ...conv('features.0.0', 'features.0.1', 2, 1), act: 'relu6' }, blocks,
    head: { ...conv('features.18.0', 'features.18.1', 1, 0), act: 'relu6' }, fc: 'classifier.1' };
}

export function buildCnn(wt, name, sd, { fused = true } = {}) {
  const owned = [];
  const get = (key) => {
    const t = sd[key];
    if (!t) throw new Error(`buildCnn(${name}): the state dict has no '${key}'`);
    return t;
  };
  // a conv with its BatchNorm folded in: { w, b, stride, padding, groups, act }
  const fold = (c, act) => {
    const [w, b] = wt.nn.utils.fuseConvBnWeights(get(`${c.prefix}.weight`), sd[`${c.prefix}.bias`] ?? null,
      get(`${c.bn}.running_mean`), get(`${c.bn}.running_var`), 1e-5, get(`${c.bn}.weight`), get(`${c.bn}.bias`));
    owned.push(w, b);
    return { w, b, stride: c.stride, padding: c.padding, groups: c.groups, act: act ?? c.act ?? 'none' };
  };
  // y = act(conv(x) + residual)
  const run = fused
    ? (x, c, residual = null) => wt._conv2dFused(x, c.w, c.b, { stride: c.stride, padding: c.padding, groups: c.groups,
      activation: c.act, residual })
    : (x, c, residual = null) => {
      let y = wt.conv2d(x, c.w, c.b, { stride: c.stride, padding: c.padding, groups: c.groups });
      if (residual) y = y.add(residual);
      return c.act === 'relu' ? y.relu() : c.act === 'relu6' ? y.clamp(0, 6) : y;
    };
  const fcW = get(name === 'resnet18' ? 'fc.weight' : 'classifier.1.weight');
  const fcB = get(name === 'resnet18' ? 'fc.bias' : 'classifier.1.bias');
  const head = (x) => wt.linear(wt.adaptiveAvgPool2d(x, 1).flatten(1), fcW, fcB);
  let forward;
  if (name === 'resnet18') {
    const plan = resnet18Plan();
    const stem = fold(plan.stem, 'relu');
    const blocks = plan.blocks.map((b) => ({ conv1: fold(b.conv1, 'relu'), conv2: fold(b.conv2, 'relu'),
      down: b.down && fold(b.down, 'none') }));
    forward = (x) => {
      let y = wt.maxPool2d(run(x, stem), 3, { stride: 2, padding: 1 });
      for (const b of blocks) {
        const identity = b.down ? run(y, b.down) : y;
        y = run(run(y, b.conv1), b.conv2, identity); // relu(bn2(conv2(.)) + identity)
      }
      return head(y);
    };
  } else if (name === 'mobilenet_v2') {
    const plan = mobilenetV2Plan();
    const stem = fold(plan.stem);
    const blocks = plan.blocks.map((b) => ({ layers: b.layers.map((l) => fold(l)), skip: b.skip }));
    const last = fold(plan.head);
    forward = (x) => {
      let y = run(x, stem);
      for (const b of blocks) {
        const input = y;
        for (let i = 0; i < b.layers.length; i++) {
          y = run(y, b.layers[i], b.skip && i === b.layers.length - 1 ? input : null);
        }
      }
      return head(run(y, last));
    };
  } else {
    throw new Error(`buildCnn: unknown model '${name}' (resnet18 or mobilenet_v2)`);
  }
  return {
    // intermediates freed as the forward goes (tidy): only the logits stay
    forward: (x) => wt.tidy(() => wt.noGrad(() => forward(x))),
    dispose: () => { for (const t of owned.splice(0)) t.dispose(); },
  };
}
