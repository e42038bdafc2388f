#!/usr/bin/env node
// Classifies an image with a torchvision resnet18/34/50 or mobilenet_v2 state
// dict (issue 23), from the command line:
//   node demo/node/classify.mjs <state_dict.pt | .safetensors> <image.ppm | .png> [--threads n]
// The model is told from the state dict's keys and the image preprocessed as
// torchvision's ImageNet transforms (demo/classify/pipeline.mjs, which the
// checkpoint page shares). Prints the top-5 class indices with
// their probabilities. Images: binary PPM (P6, 8 bits) and 8-bit
// non-interlaced PNG (grey, RGB, RGBA; inflated with node:zlib).
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { init } from 'weft';
import { models } from 'weft/models';
import { buildModel, classify, preprocess } from '../classify/pipeline.mjs';

// ---- images: { width, height, pixels: Uint8Array (RGB, HWC) } ----

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
  return { width: w, height: h, pixels: rgb };
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
  return { width, height, pixels: rgb };
}

function decodeImage(path) {
  const buf = readFileSync(path);
  if (buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return decodePng(buf);
  if (buf.toString('latin1', 0, 2) === 'P6') return decodePpm(buf);
  throw new Error(`${path}: not a PNG or a binary PPM (P6) image`);
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
  let built;
  try {
    built = buildModel(wt, sd, models);
  } finally {
    for (const t of Object.values(sd)) if (t instanceof wt.Tensor) t.dispose();
  }
  const { name, model } = built;
  const x = preprocess(wt, decodeImage(imagePath));
  const { top, classes, ms } = classify(wt, model, x);
  console.log(`${name}, ${classes} classes, ${ms.toFixed(1)} ms (${wt.getNumThreads()} thread(s), channels_last)`);
  for (const [i, v] of top) console.log(`  class ${String(i).padStart(4)}  ${(v * 100).toFixed(2)}%`);
  x.dispose();
  model.dispose();
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
