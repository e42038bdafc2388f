// The op table from JS: wt.ops.call/list/schema/table and the functions and
// methods generated from the registry at init.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: ops.list / schema / table`, async () => {
    const wt = await init({ variant });
    const all = wt.ops.list();
    assert.ok(all.length >= 28);
    const names = new Set(all.map((o) => o.name));
    for (const n of ['aten::empty.memory_format', 'aten::copy_', 'aten::contiguous', 'aten::view', 'aten::slice.Tensor']) {
      assert.ok(names.has(n), n);
    }
    for (const o of all) assert.match(o.schema, /^aten::[A-Za-z_0-9.]+\(.*\) -> /);
    assert.equal(wt.ops.schema('aten::transpose.int'), 'aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)');
    assert.equal(wt.ops.schema('transpose.int'), wt.ops.schema('transpose'));
    assert.match(wt.ops.schema('contiguous'), /MemoryFormat memory_format=contiguous_format/);
    throwsWeft(() => wt.ops.schema('nope'), 'InvalidArgument', /unknown operator 'nope'/);

    const tab = wt.ops.table('contiguous');
    const row = (key) => tab.find((e) => e.key === key);
    assert.deepEqual(tab.map((e) => e.key).slice(0, 2), ['CPU', 'Meta']);
    assert.equal(row('CPU').kind, 'alias');
    assert.equal(row('CPU').source, 'CompositeImplicitAutograd');
    assert.equal(row('AutogradCPU').kind, 'alias');
    assert.equal(row('Tracer').kind, 'fallthrough');
    const empty = wt.ops.table('empty.memory_format');
    assert.equal(empty.find((e) => e.key === 'CPU').kind, 'direct');
    assert.equal(empty.find((e) => e.key === 'BackendSelect').kind, 'direct');
    const copy = wt.ops.table('copy_');
    assert.ok(copy.every((e) => ['direct', 'alias', 'fallback', 'fallthrough', 'missing'].includes(e.kind)));
  });

  test(`${variant}: ops.call converts by schema`, async () => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(wt.arange(0, 24, 1, { dtype: 'float32' }));
      const v = track(wt.ops.call('aten::view', x, [2, 3, 4]));
      assert.deepEqual(v.shape, [2, 3, 4]);
      assert.deepEqual(track(wt.ops.call('view', x, 4, 6)).shape, [4, 6]);
      assert.deepEqual(track(wt.ops.call('transpose.int', v, 0, 2)).stride(), [1, 4, 12]);
      // overloads resolved by the arguments, as torch.ops.aten.squeeze does
      assert.deepEqual(track(wt.ops.call('squeeze', track(v.unsqueeze(0)))).shape, [2, 3, 4]);
      assert.deepEqual(track(wt.ops.call('squeeze', track(v.unsqueeze(0)), 0)).shape, [2, 3, 4]);
      // keywords (camelCase or snake_case), None, defaults
      assert.deepEqual(track(wt.ops.call('slice', v, { dim: 2, start: 1, step: 2 })).shape, [2, 3, 2]);
      assert.deepEqual(track(wt.ops.call('slice', v, 1, null, 2)).shape, [2, 2, 4]);
      const cl = track(wt.ops.call('contiguous', track(wt.rand(1, 4, 2, 2)), { memoryFormat: 'channels_last' }));
      assert.deepEqual(cl.stride(), [16, 1, 8, 4]);
      const c2 = track(wt.ops.call('clone', cl, { memory_format: 'contiguous_format' }));
      assert.deepEqual(c2.stride(), [16, 4, 2, 1]);
      assert.equal(track(wt.ops.call('to.dtype', x, 'float64')).dtype, 'float64');
      const e = track(wt.ops.call('empty.memory_format', [2, 3], { dtype: 'int32', device: 'meta' }));
      assert.equal(e.dtype, 'int32');
      assert.equal(e.device, 'meta');
      assert.deepEqual(track(wt.ops.call('empty_strided', [2, 3], [1, 2])).stride(), [1, 2]);
      // in-place returns the tensor it was given
      const z = track(wt.zeros(3));
      assert.equal(wt.ops.call('copy_', z, track(wt.tensor([1, 2, 3], { dtype: 'float32' }))), z);
      assert.deepEqual(z.toArray(), [1, 2, 3]);
      // errors: C messages, PyTorch's argument errors
      throwsWeft(() => wt.ops.call('view', x, [5]), 'ShapeError', /shape '\[5\]' is invalid for input of size 24/);
      throwsWeft(() => wt.ops.call('view', x, 'a'), 'TypeError', /view\(\): argument 'size' \(position 2\) must be an array of integers, not a string/);
      throwsWeft(() => wt.ops.call('transpose.int', x, 0), 'TypeError', /missing required argument 'dim1'/);
      throwsWeft(() => wt.ops.call('t', x, { bogus: 1 }), 'TypeError', /unexpected option 'bogus'/);
      throwsWeft(() => wt.ops.call('squeeze', x, 'a'), 'TypeError',
        /squeeze\(\) received an invalid combination of arguments - got \(Tensor, string\), but expected one of:\n \* \(self: Tensor\)\n \* \(self: Tensor, dim: integer\)/);
      throwsWeft(() => wt.ops.call('aten::nope', x), 'InvalidArgument', /unknown operator 'aten::nope'/);
      throwsWeft(() => wt.ops.call('contiguous', x, { memoryFormat: 'sideways' }), 'InvalidArgument');
      track.disposeAll();
    });
  });

  test(`${variant}: generated functions and methods`, async () => {
    const wt = await init({ variant });
    const { functions, methods } = wt.ops.generated;
    assert.ok(methods.includes('copy_') && methods.includes('fill_') && methods.includes('to'));
    assert.ok(!methods.includes('emptyLike'));
    // hand-written API kept
    assert.ok(!functions.includes('empty') && !methods.includes('view'));
    const track = tracker();
    await noLeaks(wt, () => {
      const x = track(wt.arange(0, 6, 1, { dtype: 'float32' }));
      const y = track(wt.zeros(6));
      assert.equal(y.copy_(x), y);
      assert.deepEqual(y.toArray(), [0, 1, 2, 3, 4, 5]);
      assert.equal(track(x.to('int32')).dtype, 'int32');
      assert.equal(track(x.to('float64', { copy: true })).dtype, 'float64');
      assert.deepEqual(track(wt.transpose(track(x.view(2, 3)), 0, 1)).shape, [3, 2]);
      assert.deepEqual(track(wt.view(x, 3, 2)).shape, [3, 2]);
      track.disposeAll();
    });
  });

  test(`${variant}: elementwise ops from the registry`, async (t) => {
    const wt = await init({ variant });
    if (typeof wt.add !== 'function') {
      t.skip('no elementwise ops in this build');
      return;
    }
    const track = tracker();
    await noLeaks(wt, () => {
      const a = track(wt.tensor([1, 2, 3], { dtype: 'float32' }));
      const b = track(wt.tensor([10, 20, 30], { dtype: 'float32' }));
      const i = track(wt.tensor([1, 2, 3], { dtype: 'int64' }));
      assert.deepEqual(track(wt.add(a, b)).toArray(), [11, 22, 33]);
      assert.deepEqual(track(wt.add(a, b, { alpha: 2 })).toArray(), [21, 42, 63]);
      assert.deepEqual(track(a.sub(b)).toArray(), [-9, -18, -27]);
      // JS numbers: int Scalars keep integer dtypes, fractional ones promote
      assert.equal(track(i.mul(2)).dtype, 'int64');
      assert.equal(track(i.mul(2.5)).dtype, 'float32');
      assert.deepEqual(track(i.mul(2.5)).toArray(), [2.5, 5, 7.5]);
      assert.equal(track(wt.add(i, true)).dtype, 'int64');
      // no .Scalar overload: the number becomes a 0-dim tensor (a wrapped number)
      assert.equal(track(wt.maximum(i, 2.5)).dtype, 'float32');
      assert.equal(track(wt.maximum(i, 2)).dtype, 'int64');
      assert.deepEqual(track(wt.maximum(a, 2)).toArray(), [2, 2, 3]);
      assert.equal(track(wt.maximum(track(wt.tensor([1], { dtype: 'float64' })), 0.1)).dtype, 'float64');
      assert.deepEqual(track(wt.pow(2, a)).toArray(), [2, 4, 8]);
      // in place and out=
      const c = track(a.clone());
      assert.equal(c.add_(b), c);
      assert.deepEqual(c.toArray(), [11, 22, 33]);
      assert.equal(c.mul_(2), c);
      assert.deepEqual(c.toArray(), [22, 44, 66]);
      const o = track(wt.empty(3));
      assert.equal(wt.add(a, b, { out: o }), o);
      assert.deepEqual(o.toArray(), [11, 22, 33]);
      assert.equal(wt.ops.call('mul', a, 3, { out: o }), o);
      assert.deepEqual(o.toArray(), [3, 6, 9]);
      // an out= the kernel resizes: the JS object's shape and strides follow
      const r = track(wt.empty(0));
      assert.equal(wt.add(track(wt.ones(2, 3)), a, { out: r }), r);
      assert.deepEqual([r.shape, r.stride(), r.numel()], [[2, 3], [3, 1], 6]);
      assert.deepEqual(r.toArray(), [[2, 3, 4], [2, 3, 4]]);
      wt.ops.call('neg.out', a, { out: r });
      assert.deepEqual([r.shape, r.stride()], [[3], [1]]);
      // camelCase names, unary ops, where (method: self is the second argument)
      assert.deepEqual(track(wt.floorDivide(i, 2)).toArray(), [0, 1, 1]);
      assert.deepEqual(track(track(a.neg()).abs()).toArray(), [1, 2, 3]);
      const cond = track(a.gt(1.5));
      assert.equal(cond.dtype, 'bool');
      assert.deepEqual(track(wt.where(cond, a, b)).toArray(), [10, 2, 3]);
      assert.deepEqual(track(a.where(cond, 0)).toArray(), [0, 2, 3]);
      assert.deepEqual(track(wt.ops.call('aten::add.Tensor', a, b, { alpha: 3 })).toArray(), [31, 62, 93]);
      throwsWeft(() => wt.floorDivide(i, 0), 'ZeroDivisionError', /ZeroDivisionError/);
      throwsWeft(() => wt.add(a, 'x'), 'TypeError', /add\(\) received an invalid combination of arguments/);
      throwsWeft(() => wt.add(a, track(wt.ones(2))), 'ShapeError', /size of tensor a \(3\) must match the size of tensor b \(2\)/);
      track.disposeAll();
    });
  });
}
