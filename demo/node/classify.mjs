#!/usr/bin/env node
// Classifies an image with a torchvision resnet18/34/50 or mobilenet_v2 state
// dict (issue 23), from the command line:
//   node demo/node/classify.mjs <state_dict.pt | .safetensors> <image.ppm | .png> [--threads n]
// The model is told from the state dict's keys (and its width and class count
// from their shapes); the image is preprocessed as torchvision's ImageNet
// transforms: shorter side resized to 256 (wt.interpolate, bilinear), center
// crop 224, mean / std normalization. Prints the top-5 class indices with
// their probabilities. Images: binary PPM (P6, 8 bits) and 8-bit
// non-interlaced PNG (grey, RGB, RGBA; inflated with node:zlib).
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { init } from 'weft';
import { models } from 'weft/models';

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];

// ---- images: { width, height, rgb: Uint8Array (HWC) } ----

function decodePpm(buf) {
  const tokens = [];
  let i = 0;
  while (tokens.length < 4) {
    while (i < buf.length && /\s/.test(String.fromCharCode(buf[i]))) i++;
    if (buf[i] === 0x23) { while (i < buf.length && buf[i] !== 0x0a) i++; continue; } // a # comment
    let s = '';
    while (i < buf.length && !/\s/.test(String.fromCharCode(buf[i]))) s += String.fromCharCode(buf[i++]);
    if (!s) throw new Error('PPM: truncated header');
    tokens.push(s);
  }
  const [magic, w, h, max] = [tokens[0], ...tokens.slice(1).map(Number)];
  if (magic !== 'P6') throw new Error(`PPM: only binary P6 files are read (this one is ${magic})`);
  if (max !== 255) throw new Error(`PPM: only 8-bit files are read (maxval ${max})`);
  const rgb = buf.subarray(i + 1, i + 1 + w * h * 3);
  if (rgb.length !== w * h * 3) throw new Error('PPM: truncated pixel data');
  return { width: w, height: h, rgb };
}

function decodePng(buf) {
  let pos = 8;
  let ihdr = null;
  const idat = [];
  while (pos + 8 <= buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') ihdr = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  if (!ihdr) throw new Error('PNG: no IHDR chunk');
  const width = ihdr.readUInt32BE(0), height = ihdr.readUInt32BE(4);
  const [depth, colorType, , , interlace] = ihdr.subarray(8, 13);
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colorType];
  if (depth !== 8 || !channels || interlace !== 0) {
    throw new Error(`PNG: only 8-bit non-interlaced grey / RGB / RGBA images are read (depth ${depth}, color type ${colorType})`);
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      if (pred === undefined) throw new Error(`PNG: bad filter type ${filter}`);
      px[y * stride + x] = (line[x] + pred) & 0xff;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    for (let ch = 0; ch < 3; ch++) rgb[i * 3 + ch] = px[i * channels + (channels < 3 ? 0 : ch)];
  }
  return { width, height, rgb };
}

function decodeImage(path) {
  const buf = readFileSync(path);
  if (buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return decodePng(buf);
  if (buf.toString('latin1', 0, 2) === 'P6') return decodePpm(buf);
  throw new Error(`${path}: not a PNG or a binary PPM (P6) image`);
}

// ---- the model, from the state dict's keys ----

function buildModel(wt, sd) {
  const m = models(wt);
  const has = (key) => key in sd;
  if (has('fc.weight') && has('layer4.0.conv1.weight')) {
    const numClasses = sd['fc.weight'].shape[0];
    const name = has('layer1.0.conv3.weight') ? 'resnet50' : has('layer1.2.conv1.weight') ? 'resnet34' : 'resnet18';
    return [name, m[name]({ numClasses })];
  }
  if (has('features.0.0.weight') && has('classifier.1.weight')) {
    const numClasses = sd['classifier.1.weight'].shape[0];
    const first = sd['features.0.0.weight'].shape[0];
    const last = sd['classifier.1.weight'].shape[1];
    const widthMult = [1.0, 0.75, 0.5, 0.35, 0.25, 1.3, 1.4, 0.1].find((w) =>
      m.makeDivisible(32 * w, 8) === first && m.makeDivisible(1280 * Math.max(1, w), 8) === last);
    if (widthMult === undefined) throw new Error(`a mobilenet_v2 state dict of an unknown width (${first} stem channels)`);
    return [`mobilenet_v2 (widthMult ${widthMult})`, m.mobilenetV2({ numClasses, widthMult })];
  }
  throw new Error('the state dict is neither a torchvision resnet18/34/50 nor a mobilenet_v2 one');
}

// Python's round() (CenterCrop's offsets): halves to even
const roundHalfEven = (v) => (v % 1 === 0.5 && Math.floor(v) % 2 === 0 ? Math.floor(v) : Math.round(v));

// image -> [1, 3, 224, 224] channels_last, normalized as torchvision's ImageNet transforms
function preprocess(wt, { width, height, rgb }) {
  if (typeof wt.interpolate !== 'function') throw new Error('this weft build has no wt.interpolate');
  return wt.tidy(() => {
    const img = wt.tensor(Float32Array.from(rgb, (v) => v / 255)).reshape([1, height, width, 3]).permute([0, 3, 1, 2]);
    const s = 256 / Math.min(width, height);
    const size = width <= height ? [Math.floor(height * s), 256] : [256, Math.floor(width * s)];
    const resized = wt.interpolate(img, { size, mode: 'bilinear', alignCorners: false });
    const top = roundHalfEven((size[0] - 224) / 2), left = roundHalfEven((size[1] - 224) / 2);
    const crop = resized.narrow(2, top, 224).narrow(3, left, 224);
    const mean = wt.tensor(MEAN).reshape([1, 3, 1, 1]), std = wt.tensor(STD).reshape([1, 3, 1, 1]);
    return crop.sub(mean).div(std).contiguous({ memoryFormat: 'channels_last' });
  });
}

async function main() {
  const args = process.argv.slice(2);
  const threadsAt = args.indexOf('--threads');
  const threads = threadsAt >= 0 ? Number(args.splice(threadsAt, 2)[1]) : 1;
  const [weightsPath, imagePath] = args;
  if (!weightsPath || !imagePath) {
    console.error('usage: node demo/node/classify.mjs <state_dict.pt | .safetensors> <image.ppm | .png> [--threads n]');
    process.exit(2);
  }
  const wt = await init();
  wt.setNumThreads(Math.min(threads, wt.maxThreads()));
  const bytes = readFileSync(weightsPath);
  const sd = weightsPath.endsWith('.safetensors') ? wt.loadSafetensors(bytes) : wt.load(bytes);
  const [name, model] = buildModel(wt, sd);
  model.loadStateDict(sd);
  for (const t of Object.values(sd)) t.dispose();
  model.eval().to({ memoryFormat: 'channels_last' });
  const x = preprocess(wt, decodeImage(imagePath));
  const t0 = performance.now();
  const probs = wt.noGrad(() => wt.tidy(() => wt.softmax(model(x), 1)));
  const ms = performance.now() - t0;
  const p = Array.from(probs.toArray()[0]);
  const top = p.map((v, i) => [i, v]).sort((a, b) => b[1] - a[1]).slice(0, 5);
  console.log(`${name}, ${p.length} classes, ${ms.toFixed(1)} ms (${wt.getNumThreads()} thread(s), channels_last)`);
  for (const [i, v] of top) console.log(`  class ${String(i).padStart(4)}  ${(v * 100).toFixed(2)}%`);
  probs.dispose();
  x.dispose();
  model.dispose();
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
