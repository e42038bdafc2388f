// Run by nn-memory.test.mjs as node --expose-gc: after a few training steps
// with wt.nn (the step rule active, no more steps to come), tensors made
// outside tidy and dropped are still collected: the optimizer's step set holds
// them weakly. Prints the counters as JSON.
import { init } from 'weft';

const wt = await init({ variant: 'simd' });
const nn = wt.nn;
const settle = async () => {
  for (let i = 0; i < 10; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 20));
  }
};
const model = new nn.Linear(4, 2);
const opt = new wt.optim.SGD(model.parameters(), { lr: 0.1 });
const x = wt.ones(3, 4);
for (let i = 0; i < 3; i++) {
  opt.zeroGrad();
  model(x).sum().backward();
  opt.step();
}
await settle();
const before = wt.memory().tensors;
(() => {
  for (let i = 0; i < 300; i++) wt.noGrad(() => model(x)).relu();
})();
const held = wt.memory().tensors;
await settle();
process.stdout.write(JSON.stringify({ before, held, after: wt.memory().tensors, collected: wt.memory().collected }));
