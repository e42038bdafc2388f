// Trains a small classifier on the 8x8 digits scikit-learn ships
// (demo/data/*.npy, 1,797 images) with weft's autograd and Adam, from the
// command line, one progress line per epoch:
//   node demo/node/train_digits.mjs [--model mlp|cnn] [--epochs 10] [--batch 32] [--lr 0.01] [--seed 0]
// Every 6th image is held out (299; see demo/train/digits.mjs); the line shows the mean training loss,
// the training accuracy of the epoch's minibatches and the test accuracy.
// The model and the loop are demo/train/digits.mjs, shared with the browser
// page demo/train.html.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from 'weft';
import { DEFAULTS, DigitsTrainer, loadDigits, progressLine } from '../train/digits.mjs';

const readData = (f) => readFileSync(new URL(`../data/${f}`, import.meta.url));

/** Trains with `options` ({ model, epochs, batch, lr, seed, log }); returns the last epoch's figures. */
export async function trainDigits(options = {}) {
  const o = { ...DEFAULTS, log: (line) => process.stdout.write(`${line}\n`), ...options };
  const wt = o.wt ?? await init();
  const data = loadDigits(wt, readData('digits-images.npy'), readData('digits-labels.npy'));
  let trainer, last;
  try {
    trainer = new DigitsTrainer(wt, data, o);
    o.log(`${trainer.model.label}, Adam lr ${o.lr}, batch ${o.batch}, seed ${o.seed}: ` +
      `${data.nTrain} training / ${data.nTest} test images`);
    const start = performance.now();
    for (let e = 0; e < o.epochs; e++) {
      last = trainer.trainEpoch();
      o.log(progressLine(last, o.epochs, (performance.now() - start) / 1000));
    }
  } finally {
    trainer?.dispose();
    data.dispose();
  }
  return last;
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in DEFAULTS)) throw new Error(`unknown option ${argv[i]} (expected ${Object.keys(DEFAULTS).map((k) => `--${k}`).join(', ')})`);
    o[key] = key === 'model' ? argv[i + 1] : Number(argv[i + 1]);
  }
  return o;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    await trainDigits(parseArgs(process.argv.slice(2)));
  } catch (e) {
    process.stderr.write(`train_digits: ${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}\n`);
    process.exitCode = 1;
  }
}
