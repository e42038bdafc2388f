// wt.nn.init: torch/nn/init.py 1.13, drawing from weft's generator the numbers
// PyTorch's CPU kernels draw after the same manualSeed.
//
// uniform_(a, b) is aten's uniform_real_distribution: one draw per element in
// memory order, its mantissa bits as u in [0, 1) (exactly what wt.rand gives),
// then u * (b - a) + a in the tensor's dtype. float32 rounds once, as the
// fused multiply-add of PyTorch's AVX2 build (u * range is exact in a double
// and so is the sum, for bounds of like magnitude; the unfused default kernel
// can differ by many ulps near zero, where the sum cancels). normal_(mean,
// std) is wt.randnLike's draw (PyTorch's normal_fill for 16 or more
// contiguous elements, float32 or float64) times std plus mean, fused the
// same way. All write in place under noGrad and return the tensor.
import { REQUIRED } from './args.js';

export function makeInit(api, { Tensor, WeftError, typeName, parse }) {
  const fail = (code, msg) => { throw new WeftError(code, msg); };
  const f = Math.fround;

  function tensorArg(fn, t) {
    if (!(t instanceof Tensor)) fail('TypeError', `${fn}(): argument 'tensor' must be a Tensor, not ${typeName(t)}`);
    return t;
  }

  // Writes values made in draw order (memory order: outermost stride first)
  // into t, whatever its strides.
  function fill(fn, t, make) {
    tensorArg(fn, t);
    const n = t.numel();
    if (n === 0) return t;
    const shape = t.shape;
    const strides = t.stride();
    const perm = shape.map((_, i) => i).sort((a, b) => strides[b] - strides[a]);
    const inverse = perm.map((_, i) => perm.indexOf(i));
    api.noGrad(() => api.tidy(() => {
      const src = api.tensor(make(n, t.dtype), { dtype: t.dtype }).reshape(perm.map((i) => shape[i]));
      t.copy_(src.permute(inverse));
    }));
    return t;
  }

  const wide = (dtype) => dtype === 'float64';
  // out[i] = fround(x[i] * s + m) in a plain loop (Float32Array.from with a
  // map function goes through the iterator protocol: ~10x slower on 10^6 values)
  const affine32 = (x, s, m) => {
    const out = new Float32Array(x.length);
    for (let i = 0; i < x.length; i++) out[i] = f(x[i] * s + m);
    return out;
  };
  const draws = (fn, n, dtype) => api.tidy(() => fn(api.empty([n], { dtype })).data());

  function uniformValues(a, b) {
    return (n, dtype) => {
      const u = draws(api.randLike, n, dtype);
      if (wide(dtype)) return u.map((x) => x * (b - a) + a);
      const lo = f(a);
      const range = f(f(b) - lo);
      return affine32(u, range, lo);
    };
  }

  function normalValues(mean, std) {
    return (n, dtype) => {
      const z = draws(api.randnLike, n, dtype);
      if (wide(dtype)) return z.map((x) => x * std + mean);
      const s = f(std);
      const m = f(mean);
      return affine32(z, s, m);
    };
  }

  const args = (fn, spec, list) => parse(fn, [['tensor', REQUIRED], ...spec], list);

  function uniform_(...a) {
    const { tensor, a: lo, b: hi } = args('uniform_', [['a', 0], ['b', 1]], a);
    if (!(lo <= hi)) fail('InvalidArgument', `uniform_ expects to return a [from, to) range, but found from=${lo} > to=${hi}`);
    return fill('uniform_', tensor, uniformValues(lo, hi));
  }

  function normal_(...a) {
    const { tensor, mean, std } = args('normal_', [['mean', 0], ['std', 1]], a);
    if (!(std >= 0)) fail('InvalidArgument', `normal_ expects std >= 0.0, but found std ${std}`);
    return fill('normal_', tensor, normalValues(mean, std));
  }

  function constant_(...a) {
    const { tensor, val } = args('constant_', [['val', REQUIRED]], a);
    tensorArg('constant_', tensor);
    api.noGrad(() => tensor.fill_(val));
    return tensor;
  }
  const zeros_ = (t) => constant_(t, 0);
  const ones_ = (t) => constant_(t, 1);

  function calculateFanInAndFanOut(t) {
    tensorArg('calculateFanInAndFanOut', t);
    const shape = t.shape;
    if (shape.length < 2) fail('InvalidArgument', 'Fan in and fan out can not be computed for tensor with fewer than 2 dimensions');
    const receptive = shape.slice(2).reduce((p, s) => p * s, 1);
    return [shape[1] * receptive, shape[0] * receptive];
  }

  const LINEAR = ['linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d'];
  function calculateGain(nonlinearity, param = null) {
    if (LINEAR.includes(nonlinearity) || nonlinearity === 'sigmoid') return 1;
    if (nonlinearity === 'tanh') return 5.0 / 3;
    if (nonlinearity === 'relu') return Math.sqrt(2.0);
    if (nonlinearity === 'leaky_relu') {
      let slope = 0.01;
      if (param !== null && param !== undefined) {
        if (typeof param !== 'number') fail('InvalidArgument', `negative_slope ${String(param)} not a valid number`);
        slope = param;
      }
      return Math.sqrt(2.0 / (1 + slope * slope));
    }
    if (nonlinearity === 'selu') return 3.0 / 4;
    return fail('InvalidArgument', `Unsupported nonlinearity ${nonlinearity}`);
  }

  function correctFan(t, mode) {
    if (mode !== 'fan_in' && mode !== 'fan_out') fail('InvalidArgument', `Mode ${mode} not supported, please use one of fan_in, fan_out`);
    const [fanIn, fanOut] = calculateFanInAndFanOut(t);
    return mode === 'fan_in' ? fanIn : fanOut;
  }

  const KAIMING = [['a', 0], ['mode', 'fan_in'], ['nonlinearity', 'leaky_relu']];
  function kaimingStd(fn, list) {
    const { tensor, a, mode, nonlinearity } = args(fn, KAIMING, list);
    tensorArg(fn, tensor);
    if (tensor.shape.includes(0)) return [tensor, null]; // PyTorch warns: a no-op
    return [tensor, calculateGain(nonlinearity, a) / Math.sqrt(correctFan(tensor, mode))];
  }

  function kaimingUniform_(...list) {
    const [t, std] = kaimingStd('kaimingUniform_', list);
    if (std === null) return t;
    const bound = Math.sqrt(3.0) * std;
    return fill('kaimingUniform_', t, uniformValues(-bound, bound));
  }

  function kaimingNormal_(...list) {
    const [t, std] = kaimingStd('kaimingNormal_', list);
    return std === null ? t : fill('kaimingNormal_', t, normalValues(0, std));
  }

  function xavierStd(fn, list) {
    const { tensor, gain } = args(fn, [['gain', 1.0]], list);
    const [fanIn, fanOut] = calculateFanInAndFanOut(tensor);
    return [tensor, gain * Math.sqrt(2.0 / (fanIn + fanOut))];
  }

  function xavierUniform_(...list) {
    const [t, std] = xavierStd('xavierUniform_', list);
    const a = Math.sqrt(3.0) * std;
    return fill('xavierUniform_', t, uniformValues(-a, a));
  }

  function xavierNormal_(...list) {
    const [t, std] = xavierStd('xavierNormal_', list);
    return fill('xavierNormal_', t, normalValues(0, std));
  }

  // erfinv by PyTorch's rational first guess and two Newton steps, here in
  // float64 with weft's erf, so the float32 result is the correctly rounded one
  function erfinv(ys) {
    const x0 = Float64Array.from(ys, (y) => {
      const ya = Math.abs(y);
      if (ya > 1) return NaN;
      if (ya === 1) return Math.sign(y) * Infinity;
      if (ya <= 0.7) {
        const z = y * y;
        const num = ((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899;
        const dem = (((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1.0;
        return (y * num) / dem;
      }
      const z = Math.sqrt(-Math.log((1.0 - ya) / 2.0));
      const num = ((1.641345311 * z + 3.429567803) * z - 1.624906493) * z - 1.970840454;
      const dem = (1.637067800 * z + 3.543889200) * z + 1.0;
      return (Math.sign(y) * Math.abs(num)) / dem;
    });
    const erf = api.tidy(() => api.erf(api.tensor(x0, { dtype: 'float64' })).data());
    const step = (x, e, y) => (Number.isFinite(x) ? x - (e - y) / ((2 / Math.sqrt(Math.PI)) * Math.exp(-x * x)) : x);
    const x1 = x0.map((x, i) => step(x, erf[i], ys[i]));
    const erf1 = api.tidy(() => api.erf(api.tensor(x1, { dtype: 'float64' })).data());
    return x1.map((x, i) => step(x, erf1[i], ys[i]));
  }

  // trunc_normal_: uniform in [2l-1, 2u-1] of the normal's CDF, erfinv, scale, clamp
  function truncNormal_(...list) {
    const { tensor, mean, std, a, b } = args('truncNormal_', [['mean', 0], ['std', 1], ['a', -2], ['b', 2]], list);
    const cdf = (x) => (1 + erfScalar(x / Math.sqrt(2))) / 2;
    const l = cdf((a - mean) / std);
    const u = cdf((b - mean) / std);
    return fill('truncNormal_', tensor, (n, dtype) => {
      const ys = uniformValues(2 * l - 1, 2 * u - 1)(n, dtype);
      const x = erfinv(wide(dtype) ? ys : Float64Array.from(ys));
      const round = wide(dtype) ? (v) => v : f;
      const scale = round(std * Math.sqrt(2));
      const out = x.map((v) => Math.min(Math.max(round(round(round(v) * scale) + mean), a), b));
      return wide(dtype) ? out : Float32Array.from(out);
    });
  }

  // math.erf of one number (for the CDF bounds), by weft's float64 erf
  const erfScalar = (x) => api.tidy(() => api.erf(api.tensor([x], { dtype: 'float64' })).item());

  return {
    calculateGain, uniform_, normal_, constant_, zeros_, ones_, xavierUniform_, xavierNormal_,
    kaimingUniform_, kaimingNormal_, truncNormal_, _calculateFanInAndFanOut: calculateFanInAndFanOut,
  };
}
