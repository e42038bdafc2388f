// Run by memory.test.mjs as node --expose-gc: creates tensors, drops them
// without dispose(), collects, and prints the counters as JSON. Disposed
// tensors must not be released again by the registry (a double free would
// corrupt the counts or crash).
import { init } from 'weft';

const pick = ({ tensors, bytesInUse, jsTensors, collected }) => ({ tensors, bytesInUse, jsTensors, collected });
const settle = async () => {
  for (let i = 0; i < 10; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
};
const results = [];
for (const variant of ['simd-threads', 'simd', 'scalar']) {
  const wt = await init({ variant });
  const before = pick(wt.memory());
  const keep = wt.arange(10);
  (() => {
    for (let i = 0; i < 100; i++) {
      wt.ones(256);
      const a = wt.zeros(8);
      a.view(2, 4);
      a.dispose();
      wt.rand(3).t();
    }
  })();
  await settle();
  const afterGc = pick(wt.memory());
  afterGc.tensors -= 1;
  afterGc.bytesInUse -= 80;
  const keptOk = keep.toArray()[9] === 9;
  keep.dispose();
  results.push({ variant, before, afterGc: { ...afterGc, jsTensors: afterGc.jsTensors }, keptOk });
}
process.stdout.write(JSON.stringify(results));
