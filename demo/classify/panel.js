// The checkpoint page's image classifier (#classify in demo/checkpoint.html):
// when an opened file is a torchvision resnet / mobilenet_v2 state dict, the
// model is built with weft/models and the file's weights (pipeline.mjs); a
// dropped or chosen image is decoded by the browser (createImageBitmap, then
// a canvas's RGBA pixels), preprocessed and classified with weft, and its
// top-5 class indices shown with their probabilities and the forward's time.
import { el } from '../layout.js';
import { onFileDrop } from '../panels.js';
import { models } from '../../dist/models/index.js';
import { buildModel, classify, detectModel, preprocess } from './pipeline.mjs';

const $ = (id) => document.getElementById(id);
let current = null; // { wt, name, numClasses, model }
let runs = 0;

function forget() {
  current?.model.dispose();
  current = null;
  $('classify').hidden = true;
  $('top5').replaceChildren();
  $('classify-ms').textContent = '';
  document.body.dataset.model = 'none';
}

/**
 * Called with every opened file's value (before its tensors are freed):
 * builds the classifier when value is a state dict it knows, else hides the
 * panel. Returns the model's name, or null. A state dict with the right keys
 * that does not load (a wrong shape) shows weft's message.
 */
export function offerModel(wt, value, showStatus) {
  forget();
  let found;
  try {
    found = detectModel(wt, value, models);
    if (!found) return null;
    current = { wt, ...buildModel(wt, value, models) };
  } catch (e) {
    showStatus(`this looks like a torchvision ${found?.name ?? 'classifier'}'s state dict, but it does not load: ${e.message}`);
    return null;
  }
  $('classify-model').textContent = `${current.name}, ${current.numClasses} classes`;
  $('classify').hidden = false;
  document.body.dataset.model = current.name;
  return current.name;
}

// RGBA pixels of an image file, as the browser decodes it (no colour
// management, alpha not premultiplied: the file's own 8-bit values).
async function decodeImage(blob) {
  const bitmap = await createImageBitmap(blob, { premultiplyAlpha: 'none', colorSpaceConversion: 'none' });
  try {
    const { width, height } = bitmap;
    const canvas = typeof OffscreenCanvas === 'function' ? new OffscreenCanvas(width, height)
      : Object.assign(document.createElement('canvas'), { width, height });
    const g = canvas.getContext('2d', { willReadFrequently: true });
    g.drawImage(bitmap, 0, 0);
    drawPreview(bitmap);
    return { width, height, channels: 4, pixels: g.getImageData(0, 0, width, height).data };
  } finally {
    bitmap.close();
  }
}

// the image as the model sees it: its centred square
function drawPreview(bitmap) {
  const c = $('image-preview');
  const side = Math.min(bitmap.width, bitmap.height);
  const g = c.getContext('2d');
  g.clearRect(0, 0, c.width, c.height);
  g.drawImage(bitmap, (bitmap.width - side) / 2, (bitmap.height - side) / 2, side, side, 0, 0, c.width, c.height);
}

function renderTop({ top, classes, ms }, wt) {
  $('top5').replaceChildren(...top.map(([i, p], rank) => el('li', {
    class: rank === 0 ? 'best' : null, 'data-class': String(i), 'data-p': String(p),
  }, `class ${i}: ${(p * 100).toFixed(2)}%`)));
  const threads = typeof wt.getNumThreads === 'function' ? wt.getNumThreads() : 1;
  $('classify-ms').textContent = `top ${top.length} of ${classes} classes; the forward took ${ms.toFixed(1)} ms (${threads} thread${threads === 1 ? '' : 's'})`;
}

async function classifyFile(file, showStatus) {
  if (!file || !current) return;
  const { wt, model } = current;
  try {
    const image = await decodeImage(file);
    const x = preprocess(wt, image);
    try {
      renderTop(classify(wt, model, x), wt);
    } finally {
      x.dispose();
    }
    showStatus(null);
    document.body.dataset.classified = String(++runs);
  } catch (e) {
    showStatus(`${file.name}: ${e.message}`);
    document.body.dataset.classified = 'error';
  }
}

/** Wires the image drop zone and file input. */
export function setupClassifier(showStatus) {
  onFileDrop($('image-drop'), $('image'), (file) => classifyFile(file, showStatus));
  document.body.dataset.model = 'none';
}
