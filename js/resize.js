// Resizing's JS calling forms (torch.nn.functional's) over the op table's
// pad and upsample_* ops (src/ops/resize.def), whose generated functions
// js/ops.js installed:
//   wt.pad(x, pads, { mode: 'constant' | 'reflect' | 'replicate' | 'circular', value })
//     pads as F.pad's: last dim first, a (left, right) pair per dim
//   wt.interpolate(x, { size, scaleFactor, mode, alignCorners, recomputeScaleFactor })
//     F.interpolate (PyTorch 1.13): its checks and messages (in JS words),
//     the output size and the scales its `.vec` overloads compute (a scale
//     factor s gives trunc(in * s) outputs and passes s on to the kernel,
//     unless recomputeScaleFactor), modes nearest, nearest-exact, linear
//     (3-D), bilinear, bicubic (4-D) and area (4-D: adaptiveAvgPool2d).
// Both also as Tensor methods (x.interpolate({ size: [224, 224], mode: 'bilinear' })).
export function installResize(api, k) {
  const { Tensor, WeftError, isOptions } = k;
  const gen = { pad: api.pad };
  const ops = {
    nearest: [api.upsampleNearest1d, api.upsampleNearest2d],
    'nearest-exact': [api._upsampleNearestExact1d, api._upsampleNearestExact2d],
    linear: [api.upsampleLinear1d, null],
    bilinear: [null, api.upsampleBilinear2d],
    bicubic: [null, api.upsampleBicubic2d],
  };
  const NAMES = ['size', 'scaleFactor', 'mode', 'alignCorners', 'recomputeScaleFactor', 'antialias'];
  const SNAKE = { scale_factor: 'scaleFactor', align_corners: 'alignCorners', recompute_scale_factor: 'recomputeScaleFactor' };
  const valueError = (msg) => new WeftError('InvalidArgument', `interpolate: ${msg}`);

  // (x, ...positional, options?) -> options, F.interpolate's names
  function options(args) {
    const last = args[args.length - 1];
    const hasKw = args.length > 1 && isOptions(last) && !(last instanceof Tensor);
    const pos = hasKw ? args.slice(1, -1) : args.slice(1);
    const kw = {};
    for (const [key, v] of Object.entries(hasKw ? last : {})) {
      const name = SNAKE[key] ?? key;
      if (!NAMES.includes(name)) throw new WeftError('TypeError', `interpolate() got an unexpected keyword argument '${key}'`);
      kw[name] = v;
    }
    if (pos.length > NAMES.length) {
      throw new WeftError('TypeError', `interpolate() takes from 1 to ${NAMES.length + 1} positional arguments but ${pos.length + 1} were given`);
    }
    pos.forEach((v, i) => {
      if (NAMES[i] in kw) throw new WeftError('TypeError', `interpolate() got multiple values for argument '${NAMES[i]}'`);
      kw[NAMES[i]] = v;
    });
    return kw;
  }

  const given = (v) => v !== undefined && v !== null;
  const shapeText = (a) => `[${a.join(', ')}]`;

  function perDim(v, dim, x, what) {
    if (!Array.isArray(v)) return new Array(dim).fill(v);
    if (v.length !== dim) {
      const spatial = shapeText(x.shape.slice(2));
      throw valueError(what === 'size'
        ? `Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of ${spatial} and output size of ${shapeText(v)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.`
        : `Input and scaleFactor must have the same number of spatial dimensions, but got input with spatial dimensions of ${spatial} and scaleFactor of shape ${shapeText(v)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scaleFactor in (s1, s2, ...,sK) format.`);
    }
    return v;
  }

  function checkNumbers(list, what, integer) {
    for (const v of list) {
      if (typeof v !== 'number' || (integer && !Number.isInteger(v)) || Number.isNaN(v)) {
        throw new WeftError('TypeError', `interpolate(): ${what} must be ${integer ? 'an integer' : 'a number'} or an array of them, but got ${typeof v === 'number' ? v : typeof v}`);
      }
    }
  }

  function interpolate(...args) {
    const x = args[0];
    if (!(x instanceof Tensor)) throw new WeftError('TypeError', 'interpolate(): argument \'input\' must be a Tensor');
    const kw = options(args);
    const mode = kw.mode ?? 'nearest';
    if (typeof mode !== 'string') throw new WeftError('TypeError', 'interpolate(): mode must be a string');
    let alignCorners = kw.alignCorners ?? null;
    if (['nearest', 'area', 'nearest-exact'].includes(mode)) {
      if (alignCorners !== null) {
        throw valueError('alignCorners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear');
      }
    } else if (alignCorners === null) {
      alignCorners = false;
    }
    if (typeof (alignCorners ?? false) !== 'boolean') throw new WeftError('TypeError', 'interpolate(): alignCorners must be a boolean');
    const dim = x.dim() - 2;
    const { size, scaleFactor } = kw;
    let outputSize = null;
    let scales = null;
    if (given(size) && given(scaleFactor)) throw valueError('only one of size or scaleFactor should be defined');
    if (given(size)) {
      outputSize = perDim(size, dim, x, 'size');
      checkNumbers(outputSize, 'size', true);
    } else if (given(scaleFactor)) {
      scales = perDim(scaleFactor, dim, x, 'scaleFactor');
      checkNumbers(scales, 'scaleFactor', false);
    } else {
      throw valueError('either size or scaleFactor should be defined');
    }
    let recompute = kw.recomputeScaleFactor ?? null;
    if (recompute && given(size)) throw valueError('recomputeScaleFactor is not meaningful with an explicit size.');
    if (mode === 'area' && outputSize === null) recompute = true;
    if (recompute) {
      outputSize = scales.map((s, i) => Math.floor(x.shape[i + 2] * s));
      scales = null;
    }
    if (kw.antialias) throw valueError('Anti-alias option is not supported by weft');
    if (mode === 'area' && dim === 2) return api.adaptiveAvgPool2d(x, outputSize);
    const fn = ops[mode] && (dim === 1 || dim === 2) ? ops[mode][dim - 1] : null;
    if (!fn) throw notSupported(x, mode);
    // the .vec overloads' upsample_compute_output_size: trunc(in * scale)
    const out = outputSize ?? scales.map((s, i) => Math.trunc(x.shape[i + 2] * s));
    const sc = scales ?? new Array(dim).fill(null);
    const weighted = mode === 'linear' || mode === 'bilinear' || mode === 'bicubic';
    return weighted ? fn(x, out, alignCorners, ...sc) : fn(x, out, ...sc);
  }

  // F.interpolate's refusals; the modes PyTorch has and weft has not (5-D,
  // area on 3-D) say so
  function notSupported(x, mode) {
    const d = x.dim();
    const needs = { linear: 3, bilinear: 4, trilinear: 5 }[mode];
    const fail = (msg) => new WeftError('NotImplemented', `interpolate: ${msg}`);
    if (needs && d >= 3 && d <= 5 && d !== needs) return fail(`Got ${d}D input, but ${mode} mode needs ${needs}D input`);
    const torchHas = (['nearest', 'nearest-exact', 'area'].includes(mode) && d >= 3 && d <= 5) || needs === d ||
      (mode === 'bicubic' && d === 4);
    if (torchHas) return fail(`mode '${mode}' on a ${d}D input is not supported by weft`);
    return fail(`Input Error: Only 3D, 4D and 5D input Tensors supported (got ${d}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got ${mode})`);
  }

  // F.pad(input, pad, mode='constant', value=None): mode and value positional or in the options
  function pad(x, pads, ...rest) {
    const last = rest[rest.length - 1];
    const hasKw = rest.length > 0 && isOptions(last) && !(last instanceof Tensor);
    const kw = hasKw ? { ...last } : {};
    const pos = hasKw ? rest.slice(0, -1) : rest;
    if (pos.length > 2) throw new WeftError('TypeError', `pad() takes from 2 to 4 positional arguments but ${pos.length + 2} were given`);
    ['mode', 'value'].forEach((n, i) => {
      if (i < pos.length) {
        if (n in kw) throw new WeftError('TypeError', `pad() got multiple values for argument '${n}'`);
        kw[n] = pos[i];
      }
    });
    for (const key of Object.keys(kw)) {
      if (key !== 'mode' && key !== 'value') throw new WeftError('TypeError', `pad() got an unexpected keyword argument '${key}'`);
    }
    return gen.pad(x, pads, { mode: kw.mode ?? 'constant', value: kw.value ?? null });
  }

  const fns = { interpolate, pad };
  for (const [name, fn] of Object.entries(fns)) {
    if (name === 'pad' && !gen.pad) continue;
    api[name] = fn;
    Object.defineProperty(Tensor.prototype, name, {
      value: function resizeMethod(...args) { return fn(this, ...args); }, writable: true, configurable: true,
    });
  }
}
