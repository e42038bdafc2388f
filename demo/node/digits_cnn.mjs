// The digits CNN that PyTorch trained (demo/data/train_digits_cnn.py) loaded
// from its torch.save file into the same network written with wt.nn
// (demo/digits/model.mjs), then run on the 299 test images:
//   node demo/node/digits_cnn.mjs [model.pt] [--show 8]
// Prints the module, the state dict's tensors, the test accuracy and the
// first few predictions (with each image drawn in text).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { init } from 'weft';
import { loadDigitsCNN, testSet } from '../digits/model.mjs';

const data = (f) => new URL(`../data/${f}`, import.meta.url);
const args = process.argv.slice(2);
const showAt = args.indexOf('--show');
const show = showAt >= 0 ? Number(args[showAt + 1]) : 5;
const file = args.find((a, i) => !a.startsWith('--') && i !== showAt + 1) ?? data('digits_cnn.pt');

const SHADES = ' .:-=+*#%@';
const picture = (pixels) => Array.from({ length: 8 }, (_, r) =>
  pixels.slice(r * 8, r * 8 + 8).map((v) => SHADES[Math.min(9, Math.round((v / 16) * 9))].repeat(2)).join(''));

export async function main() {
  const wt = await init();
  const model = loadDigitsCNN(wt, readFileSync(file));
  console.log(String(model));
  const sd = model.stateDict(); // detached views of the model's tensors, ours to free
  for (const [name, t] of Object.entries(sd)) console.log(`  ${name}: ${t.dtype} [${t.shape.join(', ')}]`);
  for (const t of Object.values(sd)) t.dispose();
  const { x, y, indices } = testSet(wt, readFileSync(data('digits-images.npy')), readFileSync(data('digits-labels.npy')));
  const { pred, probs } = wt.tidy(() => wt.noGrad(() => {
    const p = model(x).softmax(1);
    return { pred: Array.from(p.argmax(1).data(), Number), probs: Array.from(p.amax(1).data(), Number) };
  }));
  const labels = Array.from(y.data(), Number);
  const correct = pred.filter((p, i) => p === labels[i]).length;
  console.log(`test accuracy: ${correct}/${labels.length} = ${(correct / labels.length).toFixed(4)}`);
  const pixels = wt.tidy(() => Array.from(x.mul(16).data(), Math.round));
  for (let i = 0; i < Math.min(show, labels.length); i++) {
    console.log(`\nimage ${indices[i]}: label ${labels[i]}, predicted ${pred[i]} (p = ${probs[i].toFixed(3)})`);
    console.log(picture(pixels.slice(i * 64, i * 64 + 64)).join('\n'));
  }
  for (const t of [x, y]) t.dispose();
  model.dispose();
  return { correct, total: labels.length };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
