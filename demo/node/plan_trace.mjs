// The TensorIterator plan and the dispatch trace of one op, as the demo page
// draws them: which dims were broadcast, reordered and coalesced, the loop
// kind and the parallel chunks; then each dispatcher hop (op, key).
// node demo/node/plan_trace.mjs   (after npm run build)
import { init } from 'weft';

const wt = await init();
const x = wt.rand([1, 3, 4, 4]);
const y = x.permute(0, 2, 3, 1); // an NHWC view of NCHW memory

const op = typeof wt.add === 'function' ? 'add' : 'contiguous';
const other = wt.ones(3);
const run = () => (op === 'add' ? wt.add(y, other) : y.contiguous());
console.log(`op: ${op} on sizes [${y.shape.join(', ')}], strides [${y.stride().join(', ')}]`);

// wt.explain(op, ...args): the plan of the first TensorIterator the op would
// run; wt.trace(fn): every call and redispatch fn made, as { op, key, depth }.
if (typeof wt.explain === 'function') {
  const plan = op === 'add' ? wt.explain('add', y, other) : wt.explain('contiguous', y);
  console.log('\niterator plan:');
  if (plan && typeof plan === 'object') {
    const row = (k, v) => console.log(`  ${k.padEnd(16)} ${Array.isArray(v) ? JSON.stringify(v) : v}`);
    for (const [k, v] of Object.entries(plan)) row(k, v);
  } else {
    console.log(`  ${plan === null ? '(no TensorIterator: the op only changes metadata)' : plan}`);
  }
} else {
  console.log('\niterator plan: wt.explain is not in this build of weft');
}

if (typeof wt.trace === 'function') {
  let r;
  const events = wt.trace(() => { r = run(); });
  console.log('\ndispatch trace:');
  for (const e of Array.isArray(events) ? events : []) {
    const depth = typeof e.depth === 'number' ? e.depth : 0;
    console.log(`  ${'  '.repeat(depth)}${e.op}  [${e.key}]${e.redispatch ? ' (redispatch)' : ''}`);
  }
  console.log(`result strides [${r.stride().join(', ')}], contiguous: ${r.isContiguous()}`);
  r.dispose();
} else {
  const r = run();
  console.log('\ndispatch trace: wt.trace is not in this build of weft');
  console.log(`result strides [${r.stride().join(', ')}], contiguous: ${r.isContiguous()}`);
  r.dispose();
}
other.dispose();
x.dispose();
y.dispose();
