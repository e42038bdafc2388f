// The TensorIterator plan and the dispatch trace of one op, as the demo page
// draws them: which dims were broadcast, reordered and coalesced, the loop
// kind and the parallel chunks; then each dispatcher hop (op, key).
// node demo/node/plan_trace.mjs   (after npm run build)
import { init } from 'weft';

const wt = await init();
const x = wt.rand([1, 3, 4, 4]);
const y = x.permute(0, 2, 3, 1); // an NHWC view of NCHW memory

const op = typeof wt.add === 'function' ? 'add' : 'contiguous';
const run = () => (op === 'add' ? wt.add(y, wt.ones(3)) : y.contiguous());
console.log(`op: ${op} on sizes [${y.shape.join(', ')}], strides [${y.stride().join(', ')}]`);

if (typeof wt.explain === 'function') {
  const plan = op === 'add' ? wt.explain('add', y, wt.ones(3)) : wt.explain('contiguous', y);
  console.log('\niterator plan:');
  console.log(typeof plan === 'string' ? plan : JSON.stringify(plan, null, 2));
} else {
  console.log('\niterator plan: wt.explain is not in this build of weft');
}

if (typeof wt.trace === 'function') {
  const t = wt.trace(run);
  const events = Array.isArray(t) ? t : t?.events ?? t;
  console.log('\ndispatch trace:');
  const print = (evs, depth) => {
    for (const e of Array.isArray(evs) ? evs : [evs]) {
      if (e && typeof e === 'object' && 'op' in e) {
        console.log(`${'  '.repeat(depth)}${e.op}${e.key ? `  [${e.key}]` : ''}`);
        if (e.children) print(e.children, depth + 1);
      } else {
        console.log('  '.repeat(depth) + (typeof e === 'string' ? e : JSON.stringify(e)));
      }
    }
  };
  print(events, 1);
} else {
  const r = run();
  console.log('\ndispatch trace: wt.trace is not in this build of weft');
  console.log(`result strides [${r.stride().join(', ')}], contiguous: ${r.isContiguous()}`);
  r.dispose();
}
x.dispose();
y.dispose();
