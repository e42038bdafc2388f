// The digits CNN of demo/data/train_digits_cnn.py as a wt.nn module, and the
// preprocessing that script's inputs had, shared by the drawing page
// (demo/digits.html), the Node example (demo/node/digits_cnn.mjs) and
// tests/js/digits-cnn.test.mjs. Nothing here knows about Node or the DOM.
//
// The module has PyTorch's attribute names and layer order, so
// model.loadStateDict(wt.load(bytes)) takes the script's digits_cnn.pt as it
// is, strictly (every key, every shape).

export const TEST_EVERY = 6; // every 6th image (index 5, 11, ...) is a test image, as in the script
export const SIDE = 8; // the model's input: 8x8 pixels
export const MAX_INK = 16; // a pixel counts the inked cells of a 4x4 block of a 32x32 bitmap: 0..16
const BITMAP = 32;
const BLOCK = BITMAP / SIDE;

/** DigitsCNN(features: conv-bn-relu-pool x2, classifier: flatten-linear-relu-linear). */
export function digitsCNN(wt) {
  const nn = wt.nn;
  class DigitsCNN extends nn.Module {
    constructor() {
      super();
      this.features = new nn.Sequential(
        new nn.Conv2d(1, 16, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(16), new nn.ReLU(), new nn.MaxPool2d(2),
        new nn.Conv2d(16, 32, 3, { padding: 1, bias: false }), new nn.BatchNorm2d(32), new nn.ReLU(), new nn.MaxPool2d(2));
      this.classifier = new nn.Sequential(
        new nn.Flatten(), new nn.Linear(32 * 2 * 2, 64), new nn.ReLU(), new nn.Linear(64, 10));
    }

    forward(x) { return this.classifier(this.features(x)); }
  }
  return new DigitsCNN();
}

/** A model with the checkpoint's weights (bytes: anything wt.load takes synchronously), in eval mode. */
export function loadDigitsCNN(wt, bytes) {
  const model = digitsCNN(wt);
  const sd = wt.load(bytes);
  try {
    model.loadStateDict(sd); // strict: a missing, unexpected or misshapen key throws PyTorch's message
  } finally {
    for (const t of Object.values(sd)) t.dispose();
  }
  return model.eval();
}

/** Pixels 0..16 (any array-like of 64 * n numbers, or a tensor) as the model's float32 [n, 1, 8, 8] input: / 16. */
export function toInput(wt, pixels) {
  const t = pixels instanceof wt.Tensor ? pixels.float() : wt.tensor(Array.from(pixels, Number), { dtype: 'float32' });
  return t.reshape([-1, 1, SIDE, SIDE]).div(MAX_INK);
}

/** The test split of demo/data's digits: float32 [n, 1, 8, 8] inputs, int64 labels, the indices. */
export function testSet(wt, imagesNpy, labelsNpy) {
  return wt.tidy(() => {
    const images = wt.fromNpy(imagesNpy); // uint8 [1797, 8, 8]
    const labels = wt.fromNpy(labelsNpy); // int64 [1797]
    const indices = [];
    for (let i = TEST_EVERY - 1; i < images.shape[0]; i += TEST_EVERY) indices.push(i);
    const idx = wt.tensor(indices, { dtype: 'int64' });
    return { x: wt.keep(toInput(wt, images.indexSelect(0, idx))), y: wt.keep(labels.indexSelect(0, idx)), indices };
  });
}

/**
 * Strokes drawn on a square canvas (arrays of { x, y } points in canvas units, size x size) as the
 * 8x8 pixels optdigits was made of: the strokes' bounding box scaled (aspect kept) to fill a
 * 32x32 bitmap with a margin, centred, drawn with a pen `width` bitmap cells wide, then each 4x4
 * block's inked cells counted (0..16). Returns 64 numbers, row by row; all zeros for no strokes.
 */
export function strokesToPixels(strokes, size, { width = 4, margin = 1 } = {}) {
  const pts = strokes.flat();
  const pixels = new Array(SIDE * SIDE).fill(0);
  if (!pts.length) return pixels;
  const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  // a stroke narrower than a tenth of the canvas (a "1") keeps its thinness instead of becoming a blob
  const extent = Math.max(x1 - x0, y1 - y0, size / 10);
  const scale = (BITMAP - 2 * margin - width) / extent;
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const map = (p) => ({ x: BITMAP / 2 + (p.x - cx) * scale, y: BITMAP / 2 + (p.y - cy) * scale });
  const ink = new Uint8Array(BITMAP * BITMAP);
  for (const stroke of strokes) {
    const m = stroke.map(map);
    for (let i = 0; i < m.length; i++) stamp(ink, m[i], m[Math.max(0, i - 1)], width / 2);
  }
  for (let r = 0; r < BITMAP; r++) for (let c = 0; c < BITMAP; c++) {
    pixels[Math.floor(r / BLOCK) * SIDE + Math.floor(c / BLOCK)] += ink[r * BITMAP + c];
  }
  return pixels;
}

// inks every bitmap cell whose centre lies within `radius` of the segment a-b
function stamp(ink, a, b, radius) {
  const lo = (v) => Math.max(0, Math.floor(v - radius - 1)), hi = (v) => Math.min(BITMAP - 1, Math.ceil(v + radius + 1));
  const dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
  for (let r = lo(Math.min(a.y, b.y)); r <= hi(Math.max(a.y, b.y)); r++) {
    for (let c = lo(Math.min(a.x, b.x)); c <= hi(Math.max(a.x, b.x)); c++) {
      const px = c + 0.5, py = r + 0.5;
      const t = len2 ? Math.max(0, Math.min(1, ((px - a.x) * dx + (py - a.y) * dy) / len2)) : 0;
      const ex = a.x + t * dx - px, ey = a.y + t * dy - py;
      if (ex * ex + ey * ey <= radius * radius) ink[r * BITMAP + c] = 1;
    }
  }
}

/** Softmax probabilities and the predicted class of one input's logits (a [1, 10] tensor). */
export function classify(wt, model, pixels) {
  return wt.tidy(() => wt.noGrad(() => {
    const probs = Array.from(model(toInput(wt, pixels)).softmax(1).data(), Number);
    return { probs, pred: probs.indexOf(Math.max(...probs)) };
  }));
}
