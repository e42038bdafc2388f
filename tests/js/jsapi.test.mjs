// Issue 14: the JS API in JS terms. A dtype never depends on the values,
// int64 reads are exact or refused, PyTorch's shortcuts exist, errors speak
// JS, and every out= path refuses an unsafe cast.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: JS numbers make the default dtype, whatever their values`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const dt = (t) => track(t).dtype;
      assert.equal(wt.getDefaultDtype(), 'float32');
      assert.equal(dt(wt.tensor([1.0, 2.0])), 'float32');
      assert.equal(dt(wt.tensor([[1, 2], [3, 4]])), 'float32');
      assert.equal(dt(wt.tensor(3)), 'float32');
      assert.equal(dt(wt.tensor([])), 'float32');
      assert.equal(dt(wt.full([2], 1)), 'float32');
      assert.equal(dt(wt.full([2], 7n)), 'int64');
      assert.equal(dt(wt.full([2], true)), 'bool');
      assert.equal(dt(wt.tensor([1n, 2n])), 'int64');
      assert.equal(dt(wt.tensor([true, false])), 'bool');
      assert.equal(dt(wt.tensor(new Int32Array(2))), 'int32');
      assert.equal(dt(wt.tensor(new Float64Array(2))), 'float64');
      assert.equal(dt(wt.tensor([1, 2], { dtype: 'int64' })), 'int64');
      // arange keeps PyTorch's integer rule
      assert.equal(dt(wt.arange(5)), 'int64');
      assert.equal(dt(wt.arange(0, 1, 0.25)), 'float32');
      // where(cond, 1, 0): two numbers and no tensor are JS numbers too (PyTorch's int64 for where(c, 1, 0)
      // would give BigInts for where(c, 1.0, 0.0)); bigints stay int64, a tensor operand sets the dtype
      const c = track(wt.tensor([true, false]));
      const w = track(wt.where(c, 1.0, 0.0));
      assert.deepEqual([w.dtype, w.toArray()], ['float32', [1, 0]]);
      assert.equal(dt(wt.where(c, 1n, 0n)), 'int64');
      assert.equal(dt(wt.where(c, 1, track(wt.tensor([5, 6], { dtype: 'int32' })))), 'int32');
      // the trap of the issue: mul_(0.5) on a tensor made from JS numbers
      const x = track(wt.tensor([1.0, 2.0]));
      x.mul_(0.5);
      assert.deepEqual(x.toArray(), [0.5, 1]);
      assert.ok(x.data() instanceof Float32Array);
      track.disposeAll();
    });
  });

  test(`${variant}: setDefaultDtype / getDefaultDtype`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    try {
      wt.setDefaultDtype('float64');
      assert.equal(wt.getDefaultDtype(), 'float64');
      for (const t of [wt.tensor([1, 2]), wt.zeros(2), wt.ones([2]), wt.rand(2), wt.randn(2), wt.empty(2),
        wt.full([1], 0.5), wt.arange(0, 1, 0.5)]) {
        assert.equal(track(t).dtype, 'float64');
      }
      // an integer tensor and a float number promote to the default dtype (PyTorch)
      assert.equal(track(track(wt.tensor([1, 2], { dtype: 'int32' })).add(0.5)).dtype, 'float64');
      assert.equal(track(wt.arange(3)).dtype, 'int64');
      assert.equal(track(wt.where(track(wt.tensor([true])), 1, 0)).dtype, 'float64');
      throwsWeft(() => wt.setDefaultDtype('float16'), 'TypeError', /only float32 and float64/);
      throwsWeft(() => wt.setDefaultDtype('flaot32'), 'TypeError', /unknown dtype 'flaot32'/);
      throwsWeft(() => wt.setDefaultDtype(32), 'TypeError', /got a number/);
      assert.equal(wt.getDefaultDtype(), 'float64');
    } finally {
      wt.setDefaultDtype('float32');
      track.disposeAll();
    }
    assert.equal(wt.getDefaultDtype(), 'float32');
    const i = wt.tensor([1, 2], { dtype: 'int32' });
    const t = i.add(0.5);
    assert.equal(t.dtype, 'float32');
    t.dispose();
    i.dispose();
  });

  test(`${variant}: int64 reads are exact or refused`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const big = track(wt.tensor([2n ** 60n, -(2n ** 53n)]));
      throwsWeft(() => big.toArray(), 'InvalidArgument', /beyond ±2\*\*53.*toArray\(\{ bigint: true \}\)/);
      assert.deepEqual(big.toArray({ bigint: true }), [2n ** 60n, -(2n ** 53n)]);
      assert.deepEqual(big.tolist({ bigint: true }), [2n ** 60n, -(2n ** 53n)]);
      const edge = track(wt.tensor([2n ** 53n]));
      assert.equal(edge.item(), 2 ** 53);
      const over = track(wt.tensor([2n ** 53n + 1n]));
      throwsWeft(() => over.item(), 'InvalidArgument', /item\(\{ bigint: true \}\)/);
      assert.equal(over.item({ bigint: true }), 2n ** 53n + 1n);
      assert.deepEqual(track(wt.tensor([3n])).toArray(), [3]);
      // { bigint } concerns int64 only
      assert.deepEqual(track(wt.tensor([1.5])).toArray({ bigint: true }), [1.5]);
      throwsWeft(() => big.toArray({ bigInt: true }), 'TypeError', /did you mean bigint\?/);
      track.disposeAll();
    });
  });

  test(`${variant}: PyTorch's shortcuts`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(track(wt.arange(24, { dtype: 'float32' })).view(2, 3, 4));
      assert.equal(x.ndim, 3);
      assert.equal(x.dim(), 3);
      assert.equal(x.numel(), 24);
      assert.equal(x.size(-1), 4);
      assert.deepEqual(x.size(), [2, 3, 4]);
      assert.equal(x.elementSize(), 4);
      const T = track(x.T);
      assert.deepEqual(T.shape, [4, 3, 2]);
      assert.deepEqual(T.stride(), [1, 4, 12]);
      const mT = track(x.mT);
      assert.deepEqual(mT.shape, [2, 4, 3]);
      assert.deepEqual(mT.stride(), [12, 1, 4]);
      throwsWeft(() => track(wt.zeros(3)).mT, 'InvalidArgument', /only supported on matrices .* Got 1-D tensor/);
      const casts = { float: 'float32', double: 'float64', half: 'float16', bfloat16: 'bfloat16', int: 'int32',
        long: 'int64', short: 'int16', char: 'int8', byte: 'uint8', bool: 'bool' };
      for (const [m, d] of Object.entries(casts)) assert.equal(track(x[m]()).dtype, d, m);
      assert.deepEqual(track(x.long()).toArray()[1][2], [20, 21, 22, 23]);
      assert.deepEqual(x.tolist(), x.toArray());
      // to({ dtype, memoryFormat }), and to() of nothing to do is self's storage
      const y = track(wt.rand([2, 3, 4, 5]));
      const cl = track(y.to({ memoryFormat: 'channels_last' }));
      assert.deepEqual(cl.stride(), [60, 1, 15, 3]);
      assert.equal(cl.dtype, 'float32');
      const both = track(y.to({ dtype: 'float64', memoryFormat: 'channels_last' }));
      assert.deepEqual([both.dtype, both.isContiguous('channels_last')], ['float64', true]);
      const same = track(y.to({ dtype: 'float32' }));
      assert.equal(same.dataPtr(), y.dataPtr());
      const copied = track(y.to({ dtype: 'float32', copy: true }));
      assert.notEqual(copied.dataPtr(), y.dataPtr());
      throwsWeft(() => track(wt.zeros(2, 3)).to({ memoryFormat: 'channels_last' }), 'InvalidArgument',
        /^to: required rank 4 tensor to use channels_last format/);
      // PyTorch's to.device and to.other: to('cpu') is self's storage, to(other) takes other's dtype
      assert.equal(track(y.to('cpu')).dataPtr(), y.dataPtr());
      assert.notEqual(track(y.to('cpu', { copy: true })).dataPtr(), y.dataPtr());
      assert.equal(track(y.to('cpu', 'float64')).dtype, 'float64');
      const asLong = track(wt.to(y, track(wt.tensor([1n]))));
      assert.deepEqual([asLong.dtype, asLong.shape], ['int64', [2, 3, 4, 5]]);
      assert.equal(track(y.to(track(wt.zeros(1)))).dataPtr(), y.dataPtr());
      throwsWeft(() => y.to('meta'), 'NotImplemented', /^to\(\): cannot move a cpu tensor to the 'meta' device/);
      throwsWeft(() => y.to(track(wt.empty(1, { device: 'meta' }))), 'NotImplemented', /'meta' device/);
      track.disposeAll();
    });
  });

  test(`${variant}: errors speak JS and name the op called`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(wt.rand([2, 3]));
      throwsWeft(() => wt.add([1, 2], [3, 4]), 'TypeError',
        /^add\(\): expected a Tensor or a number for 'self'; got an array — wrap it with wt\.tensor\(\)/);
      throwsWeft(() => x.add(new Float32Array(3)), 'TypeError', /got a Float32Array — wrap it with wt\.tensor/);
      throwsWeft(() => x.contiguous({ memory_format: 'channels_last' }), 'TypeError',
        /unexpected option 'memory_format' \(did you mean memoryFormat\?\)/);
      throwsWeft(() => x.clone({ memory_format: 'contiguous_format' }), 'TypeError', /did you mean memoryFormat\?/);
      throwsWeft(() => wt.sum(x, 0, { keep_dim: true }), 'TypeError', /did you mean keepdim\?/);
      throwsWeft(() => x.contiguous('channels_last'), 'TypeError',
        /options must be an object such as \{ memoryFormat: \.\.\. \}, not a string/);
      throwsWeft(() => x.contiguous({ memoryFormat: 'channels_last' }), 'InvalidArgument',
        /^contiguous: required rank 4 tensor to use channels_last format/);
      throwsWeft(() => x.clone({ memoryFormat: 'channels_last' }), 'InvalidArgument', /^clone: required rank 4/);
      // the *Like factories name themselves, not the empty they allocate with
      for (const [fn, name] of [['emptyLike', 'empty_like'], ['zerosLike', 'zeros_like'], ['onesLike', 'ones_like'],
        ['randLike', 'rand_like'], ['randnLike', 'randn_like']]) {
        throwsWeft(() => wt[fn](x, { memoryFormat: 'channels_last' }), 'InvalidArgument',
          new RegExp(`^${name}: required rank 4 tensor to use channels_last format$`));
      }
      throwsWeft(() => wt.fullLike(x, 1, { memoryFormat: 'channels_last' }), 'InvalidArgument', /^full_like: required rank 4/);
      // and a fill value the dtype cannot hold names full / full_like, not the fill_ inside
      throwsWeft(() => wt.full([2], 300, { dtype: 'uint8' }), 'OverflowError',
        /^full: value cannot be converted to type uint8 without overflow$/);
      throwsWeft(() => wt.fullLike(track(wt.zeros(2, { dtype: 'int8' })), 300), 'OverflowError', /^full_like: value cannot/);
      throwsWeft(() => x.view('a'), 'TypeError',
        /argument 'size' must be an array of integers, but found an element of type string at pos 0/);
      throwsWeft(() => x.view(null), 'TypeError', /must be an array of integers, but found an element of type null/);
      throwsWeft(() => x.transpose(0.5, 1), 'TypeError', /must be an integer, not the number 0.5/);
      throwsWeft(() => wt.zeros(2, { dtype: 5 }), 'TypeError', /must be a dtype name such as 'float32', not a number/);
      throwsWeft(() => x.permute([0]), 'InvalidArgument', /^permute: number of dimensions/);
      throwsWeft(() => wt.sum(x, 'a'), 'TypeError',
        /got \(Tensor, string\), but expected one of:\n \* \(self: Tensor, \{ dtype = null \}\)\n \* \(self: Tensor, dim: integer\[\] \| null, keepdim = false, \{ dtype = null \}\)/);
      throwsWeft(() => wt.tensor([{}]), 'TypeError', /expected numbers, bigints or booleans, got an object/);
      for (const re of [/tuple of ints/, /\bstr\b/, /NoneType/, /\blist\b/]) {
        for (const f of [() => x.view('a'), () => x.view(null), () => wt.add([1], [2]), () => wt.sum(x, 'a')]) {
          assert.throws(f, (e) => !re.test(e.message));
        }
      }
      track.disposeAll();
    });
  });

  test(`${variant}: pointwise ops on a view with a tiny inner dim run long rows, same values`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(wt.rand([5, 37, 3]));
      const v = track(x.permute(2, 0, 1)); // an HWC image viewed as CHW
      const c = track(v.contiguous());
      const o = track(wt.rand([3, 5, 37]));
      assert.equal(wt.explain('add', v, o).widenedInner, true);
      assert.equal(wt.explain('add', c, o).widenedInner, false);
      assert.deepEqual(track(v.add(o)).toArray(), track(c.add(o)).toArray());
      assert.deepEqual(track(o.mul(v)).toArray(), track(o.mul(c)).toArray());
      const nd = track(track(x.narrow(2, 0, 2)).permute(2, 0, 1)); // not dense
      assert.deepEqual(track(nd.exp()).toArray(), track(track(nd.contiguous()).exp()).toArray());
      // in place on the view writes through to the image
      const y = track(x.clone());
      const yv = track(y.permute(2, 0, 1));
      yv.add_(o);
      assert.deepEqual(y.toArray(), track(track(c.add(o)).permute(1, 2, 0)).toArray());
      // broadcasting a per-channel value over the view
      const ch = track(wt.tensor([[[1]], [[2]], [[3]]]));
      assert.deepEqual(track(v.mul(ch)).toArray(), track(c.mul(ch)).toArray());
      track.disposeAll();
    });
  });

  test(`${variant}: results interleaved over 2, 3 or 4 channels (stored a chunk of pixels at a time) match`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      for (const ch of [2, 3, 4, 5]) {
        const x = track(wt.rand([7, 41, ch])); // 287 pixels: a chunk of 256 and a ragged tail
        const v = track(x.permute(2, 0, 1));
        const c = track(v.contiguous());
        const o = track(wt.rand([ch, 7, 41]));
        const r = track(v.mul(2)); // a float64 scalar: the casting row path
        assert.deepEqual(r.stride(), v.stride());
        assert.deepEqual(r.toArray(), track(c.mul(2)).toArray());
        assert.deepEqual(track(v.add(o)).toArray(), track(c.add(o)).toArray());
        assert.deepEqual(track(v.sub(o, { alpha: 0.5 })).toArray(), track(c.sub(o, { alpha: 0.5 })).toArray());
        // the CHW tensor first: a CHW result, the view de-interleaved on the fly
        const rs = track(o.sub(v, { alpha: 0.5 }));
        assert.deepEqual(rs.stride(), o.stride());
        assert.equal(wt.explain('sub', o, v).loop, ch <= 4 ? 'deinterleave' : 'strided');
        assert.deepEqual(rs.toArray(), track(o.sub(c, { alpha: 0.5 })).toArray());
        assert.deepEqual(track(o.maximum(v)).toArray(), track(o.maximum(c)).toArray());
        assert.deepEqual(track(v.div(o)).toArray(), track(c.div(o)).toArray());
        const nd = track(track(x.narrow(2, 0, ch - 1)).permute(2, 0, 1)); // not dense
        const ndc = track(nd.contiguous());
        assert.deepEqual(track(nd.mul(0.5)).toArray(), track(ndc.mul(0.5)).toArray());
        assert.deepEqual(track(nd.add(nd)).toArray(), track(ndc.add(ndc)).toArray());
        // 2 of 4 channels: picked 2 of each pixel's 4 (x32_pick), beside a CHW tensor
        const two = track(track(x.narrow(2, 0, 2)).permute(2, 0, 1));
        const twoc = track(two.contiguous());
        assert.deepEqual(track(two.exp()).toArray(), track(twoc.exp()).toArray());
        const o2 = track(o.narrow(0, 0, 2));
        assert.deepEqual(track(two.add(o2)).toArray(), track(twoc.add(o2)).toArray());
        const y = track(x.clone());
        track(track(y.narrow(2, 0, ch - 1)).permute(2, 0, 1)).mul_(3); // in place through the view
        assert.deepEqual(track(track(y.narrow(2, 0, ch - 1)).permute(2, 0, 1)).toArray(), track(ndc.mul(3)).toArray());
      }
      track.disposeAll();
    });
  });

  test(`${variant}: out of memory says what is live and how to free it`, async () => {
    const wt = await init({ variant });
    const keep = wt.rand([1000]);
    try {
      throwsWeft(() => wt.empty([2 ** 30]), 'OutOfMemory',
        /tried to allocate 4294967296 bytes \(\d+ tensors live holding [\d.]+ MB of a [\d.]+ MB wasm heap; free them with t\.dispose\(\) or wt\.tidy\(fn\), see wt\.memory\(\)\)/);
    } finally {
      keep.dispose();
    }
  });

  test(`${variant}: every out= refuses an unsafe cast (the .Scalar_out overloads too)`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const f = track(wt.tensor([1.5, 2.5]));
      const i = track(wt.zeros([2], { dtype: 'int32' }));
      for (const op of ['add', 'sub', 'mul', 'div']) {
        throwsWeft(() => wt[op](f, 2, { out: i }), 'TypeError',
          new RegExp(`^${op}: result type float32 can't be cast to the desired output type int32`));
        throwsWeft(() => wt[op](f, f, { out: i }), 'TypeError', /can't be cast to the desired output type (Int|int32)/);
      }
      assert.deepEqual(i.toArray(), [0, 0]);
      // same-kind casts stay allowed: an int32 result into int64, a float32 into float64
      const i32 = track(wt.tensor([1, 2], { dtype: 'int32' }));
      const l = track(wt.zeros([2], { dtype: 'int64' }));
      wt.add(i32, 3, { out: l });
      assert.deepEqual(l.toArray(), [4, 5]);
      const d = track(wt.zeros([2], { dtype: 'float64' }));
      wt.mul(f, 2, { out: d });
      assert.deepEqual(d.toArray(), [3, 5]);
      track.disposeAll();
    });
  });
}

// div's roundingMode (PyTorch's div.Tensor_mode / div.Scalar_mode); values from PyTorch 1.13
test('div(a, b, { roundingMode }): trunc and floor as PyTorch, exact for int64, out= and div_', async () => {
  const wt = await init({ variant: 'simd' });
  const track = tracker();
  await noLeaks(wt, () => {
    const a = track(wt.tensor([7n, -7n, 7n, -7n, 6n, -6n, 0n]));
    const b = track(wt.tensor([2n, 2n, -2n, -2n, 3n, 4n, 5n]));
    const trunc = track(wt.div(a, b, { roundingMode: 'trunc' }));
    assert.deepEqual([trunc.dtype, trunc.toArray()], ['int64', [3, -3, -3, 3, 2, -1, 0]]);
    assert.deepEqual(track(a.div(b, { roundingMode: 'floor' })).toArray(), [3, -4, -4, 3, 2, -2, 0]);
    assert.deepEqual(track(a.div(-3, { roundingMode: 'trunc' })).toArray(), [-2, 2, -2, 2, -2, 2, 0]);
    const f = track(wt.tensor([7.5, -7.5, 1, -0.5]));
    assert.deepEqual(track(f.div(2, { roundingMode: 'trunc' })).toArray(), [3, -3, 0, -0]);
    assert.deepEqual(track(f.div(2, { roundingMode: 'floor' })).toArray(), [3, -4, 0, -1]);
    assert.deepEqual(track(f.div(2, { roundingMode: null })).toArray(), [3.75, -3.75, 0.5, -0.25]);
    const big = track(wt.tensor([2n ** 62n + 1n, -(2n ** 62n) - 3n]));
    assert.deepEqual(track(big.div(3, { roundingMode: 'trunc' })).toArray({ bigint: true }),
      [1537228672809129301n, -1537228672809129302n]);
    const i32 = track(wt.tensor([7, -7], { dtype: 'int32' }));
    const r = track(wt.div(i32, 2.5, { roundingMode: 'trunc' }));
    assert.deepEqual([r.dtype, r.toArray()], ['float32', [2, -2]]);
    const out = track(wt.empty([2], { dtype: 'int32' }));
    assert.equal(wt.div(i32, 2, { roundingMode: 'trunc', out }), out);
    assert.deepEqual(out.toArray(), [3, -3]);
    throwsWeft(() => wt.div(i32, 2.5, { roundingMode: 'trunc', out }), 'TypeError',
      /^div: result type float32 can't be cast to the desired output type int32$/);
    assert.equal(i32.div_(2, { roundingMode: 'trunc' }), i32);
    assert.deepEqual(i32.toArray(), [3, -3]);
    i32.div_(-2, { roundingMode: 'floor' });
    assert.deepEqual(i32.toArray(), [-2, 1]);
    throwsWeft(() => a.div(b, { roundingMode: 'x' }), 'InvalidArgument',
      /^div expected roundingMode to be one of null, 'trunc', or 'floor' but found "x"$/);
    throwsWeft(() => a.div(b, { rounding_mode: 'floor' }), 'TypeError', /did you mean roundingMode\?/);
    throwsWeft(() => a.div(b, { roundingMode: 'floor', alpha: 2 }), 'TypeError', /unexpected option 'alpha'/);
    // the rounded quotient's gradient is zero (PyTorch's div.Tensor_mode formula), not a refusal
    const g = track(wt.tensor([3, -3], { requiresGrad: true }));
    for (const roundingMode of ['trunc', 'floor']) {
      wt.tidy(() => g.div(2, { roundingMode }).add(g).sum().backward());
      assert.deepEqual(track(g.grad).toArray(), [1, 1], roundingMode);
      g.grad = null;
    }
    track.disposeAll();
  });
});

// PyTorch's max.other / min.other: max(a, b) of two tensors is maximum(a, b)
test('max(a, b) / min(a, b) of two tensors: the elementwise maximum / minimum, out= too', async () => {
  const wt = await init({ variant: 'simd' });
  const track = tracker();
  await noLeaks(wt, () => {
    const a = track(wt.tensor([1, 5, NaN])), b = track(wt.tensor([3, 2, 0]));
    assert.deepEqual(track(wt.max(a, b)).toArray(), [3, 5, NaN]);
    assert.deepEqual(track(a.min(b)).toArray(), [1, 2, NaN]);
    const out = track(wt.empty([0]));
    assert.equal(wt.min(a, b, { out }), out);
    assert.deepEqual(out.toArray(), [1, 2, NaN]);
    const p = track(wt.max(track(wt.tensor([1, 5], { dtype: 'int32' })), track(wt.tensor([[2.5], [0]]))));
    assert.deepEqual([p.dtype, p.toArray()], ['float32', [[2.5, 5], [1, 5]]]);
    // the reduction forms stay
    assert.equal(track(b.max()).item(), 3);
    const { values, indices } = b.min(0);
    assert.deepEqual([track(values).item(), track(indices).item()], [0, 2]);
    track.disposeAll();
  });
});

test('worker mode: the default dtype, shortcuts and getters that make tensors', async () => {
  const { initWorker } = await import('weft');
  const ww = await initWorker({ variant: 'simd' });
  try {
    assert.equal(await ww.getDefaultDtype(), 'float32');
    const x = ww.tensor([[1, 2, 3], [4, 5, 6]]);
    assert.equal(await x.dtype, 'float32');
    assert.equal(await x.ndim, 2);
    assert.deepEqual(await x.T.shape, [3, 2]);
    assert.deepEqual(await x.mT.toArray(), [[1, 4], [2, 5], [3, 6]]);
    assert.equal(await x.long().dtype, 'int64');
    assert.deepEqual(await ww.tensor([2n ** 60n]).toArray({ bigint: true }), [2n ** 60n]);
    await assert.rejects(ww.tensor([2n ** 60n]).toArray(), /bigint: true/);
  } finally {
    await ww.terminate();
  }
});
