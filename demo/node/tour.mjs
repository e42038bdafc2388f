// A tour of broadcasting and dtypes: how shapes line up, which dtype an op
// between two tensors computes in, and what a view shares.
// node demo/node/tour.mjs   (after npm run build)
import { init } from 'weft';

const wt = await init();
const show = (label, v) => console.log(`${label.padEnd(34)} ${v}`);
const list = (a) => `[${a.join(', ')}]`;

console.log(`weft ${wt.buildId} on weft-${wt.backend.variant} (${wt.getNumThreads()} threads)\n`);

wt.tidy(() => {
  // Broadcasting: sizes are matched from the right; a size-1 dim (or a
  // missing one) stretches with stride 0, without copying.
  const col = wt.arange(3, { dtype: 'float32' }).view(3, 1);
  const row = wt.arange(4, { dtype: 'float32' }).view(1, 4);
  const a = col.expand(3, 4);
  const b = row.expand(3, 4);
  show('col.expand(3, 4) strides', list(a.stride()));
  show('row.expand(3, 4) strides', list(b.stride()));
  console.log(String(b));
  if (typeof wt.add === 'function') {
    console.log('col + row =');
    console.log(String(wt.add(col, row)));
  }
  try {
    wt.ones(3).expand(2, 4);
  } catch (e) {
    show('ones(3).expand(2, 4)', `${e.name}: ${e.message}`);
  }

  // Dtypes: PyTorch's promotion lattice and the same-kind casting rule.
  console.log();
  for (const [x, y] of [['int32', 'int64'], ['uint8', 'int8'], ['int64', 'float16'], ['bool', 'int8'],
    ['float16', 'bfloat16'], ['float32', 'float64']]) {
    show(`promoteTypes(${x}, ${y})`, wt.promoteTypes(x, y));
  }
  for (const [x, y] of [['float32', 'int32'], ['int32', 'float32'], ['int64', 'bool']]) {
    show(`canCast(${x} -> ${y})`, wt.canCast(x, y));
  }
  if (typeof wt.add === 'function') {
    // An op computes in the promoted dtype; a JS number acts as a Python
    // scalar, which does not widen a tensor's dtype within its kind.
    const i8 = wt.tensor([1, 2, 3], { dtype: 'int8' });
    show('int8 + int64 tensor', wt.add(i8, wt.tensor([1])).dtype);
    show('int8 + 2 (a scalar)', wt.add(i8, 2).dtype);
    show('int8 + 2.5 (a scalar)', wt.add(i8, 2.5).dtype);
    show('float16 + float32 tensor', wt.add(wt.ones(2, { dtype: 'float16' }), wt.ones(2)).dtype);
  }
  const h = wt.tensor([0.1, 1 / 3, 65504], { dtype: 'float16' });
  console.log(String(h));
  show('float16 bits', Array.from(h.data({ bits: true }), (v) => '0x' + v.toString(16)).join(' '));
  console.log(String(wt.tensor([1, 2, 3], { dtype: 'int8' })));
  console.log(String(wt.tensor([true, false])));

  // Views share storage: a transpose is a new stride order, contiguous() copies.
  console.log();
  const m = wt.arange(6).view(2, 3);
  const t = m.t();
  show('m.t() strides / contiguous?', `${list(t.stride())} / ${t.isContiguous()}`);
  show('m.t().contiguous() strides', list(t.contiguous().stride()));
});
const { tensors, jsTensors } = wt.memory();
show('live tensors after tidy()', `${tensors} (JS objects: ${jsTensors})`);
