// Trains a small MLP (64 -> 64 -> 10, ReLU) on the 8x8 digits scikit-learn
// ships (demo/data/*.npy, 1,797 images) with weft's autograd and Adam, from
// the command line, one progress line per epoch:
//   node demo/node/train_digits.mjs [--epochs 20] [--batch 64] [--lr 0.01] [--seed 0]
// The last 297 images are held out; the line shows the training loss and the
// held-out accuracy.
import { readFileSync } from 'node:fs';
import { init } from 'weft';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const EPOCHS = arg('epochs', 20), BATCH = arg('batch', 64), LR = arg('lr', 0.01), SEED = arg('seed', 0);
const TEST = 297;

const wt = await init();
wt.manualSeed(SEED);
const data = (f) => readFileSync(new URL(`../data/${f}`, import.meta.url));
const images = wt.fromNpy(data('digits-images.npy')); // uint8 [1797, 8, 8], 0..16
const labels = wt.fromNpy(data('digits-labels.npy')); // int64 [1797]
const n = images.shape[0];
const x = wt.tidy(() => wt.keep(images.view([n, 64]).float().div(16)));
const xTrain = x.narrow(0, 0, n - TEST), yTrain = labels.narrow(0, 0, n - TEST);
const xTest = x.narrow(0, n - TEST, TEST), yTest = labels.narrow(0, n - TEST, TEST);

// Kaiming-uniform-like initialization, as torch.nn.Linear's
const layer = (fanIn, fanOut) => {
  const bound = 1 / Math.sqrt(fanIn);
  const w = wt.tidy(() => wt.keep(wt.rand([fanIn, fanOut]).mul(2 * bound).sub(bound)));
  const b = wt.tidy(() => wt.keep(wt.rand([fanOut]).mul(2 * bound).sub(bound)));
  return [w.requiresGrad_(), b.requiresGrad_()];
};
const [w1, b1] = layer(64, 64), [w2, b2] = layer(64, 10);
const params = [w1, b1, w2, b2];
const forward = (xb) => xb.mm(w1).add(b1).relu().mm(w2).add(b2);
const opt = new wt.optim.Adam(params, { lr: LR });

const accuracy = () => wt.noGrad(() => wt.tidy(() => {
  const correct = forward(xTest).argmax(1).eq(yTest).sum().item();
  return Number(correct) / TEST;
}));

const start = performance.now();
const train = n - TEST;
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  const order = wt.randperm(train);
  let total = 0;
  for (let i = 0; i < train; i += BATCH) {
    const m = Math.min(BATCH, train - i);
    opt.zeroGrad();
    total += wt.tidy(() => {
      const idx = order.narrow(0, i, m);
      const loss = wt.crossEntropy(forward(xTrain.indexSelect(0, idx)), yTrain.indexSelect(0, idx));
      loss.backward();
      return loss.item() * m;
    });
    opt.step();
  }
  order.dispose();
  const secs = ((performance.now() - start) / 1000).toFixed(1);
  process.stdout.write(`epoch ${String(epoch).padStart(3)}/${EPOCHS}  loss ${(total / train).toFixed(4)}  ` +
    `test accuracy ${(accuracy() * 100).toFixed(1)}%  ${secs} s\n`);
}
opt.dispose();
for (const t of [...params, x, xTrain, yTrain, xTest, yTest, images, labels]) t.dispose();
