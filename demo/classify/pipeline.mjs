// ImageNet classification with a torchvision resnet18/34/50 or mobilenet_v2
// state dict (issue 23), shared by the checkpoint page (demo/checkpoint.js),
// the Node example (demo/node/classify.mjs) and their tests. Nothing here
// knows about Node or the DOM: images come in as decoded pixels.
//
// The model is told from the state dict's keys (its width and class count
// from their shapes); the image is preprocessed as torchvision's ImageNet
// transforms: shorter side resized to 256 (wt.interpolate, bilinear), center
// crop 224, / 255, mean / std normalization.

export const MEAN = [0.485, 0.456, 0.406];
export const STD = [0.229, 0.224, 0.225];
const RESIZE = 256;
const CROP = 224;
const MOBILENET_WIDTHS = [1.0, 0.75, 0.5, 0.35, 0.25, 1.3, 1.4, 0.1];

const isTensorDict = (wt, sd) => sd !== null && typeof sd === 'object' && !Array.isArray(sd) &&
  !(sd instanceof wt.Tensor) && Object.values(sd).every((v) => v instanceof wt.Tensor);

/**
 * What architecture a loaded state dict is for: { name, factory, options }
 * (factory: a function of models(wt)), or null when it is none of them.
 * models: weft/models' `models` (the page and the Node example import it
 * from where each finds the package).
 */
export function detectModel(wt, sd, models) {
  if (!isTensorDict(wt, sd)) return null;
  const has = (key) => key in sd;
  if (has('fc.weight') && has('layer4.0.conv1.weight')) {
    const numClasses = sd['fc.weight'].shape[0];
    const name = has('layer1.0.conv3.weight') ? 'resnet50' : has('layer1.2.conv1.weight') ? 'resnet34' : 'resnet18';
    return { name, factory: name, options: { numClasses } };
  }
  if (has('features.0.0.weight') && has('classifier.1.weight')) {
    const numClasses = sd['classifier.1.weight'].shape[0];
    const first = sd['features.0.0.weight'].shape[0];
    const last = sd['classifier.1.weight'].shape[1];
    const m = models(wt);
    const widthMult = MOBILENET_WIDTHS.find((w) =>
      m.makeDivisible(32 * w, 8) === first && m.makeDivisible(1280 * Math.max(1, w), 8) === last);
    if (widthMult === undefined) throw new Error(`a mobilenet_v2 state dict of an unknown width (${first} stem channels)`);
    const name = widthMult === 1 ? 'mobilenet_v2' : `mobilenet_v2 (widthMult ${widthMult})`;
    return { name, factory: 'mobilenetV2', options: { numClasses, widthMult } };
  }
  return null;
}

/**
 * { name, numClasses, model }: the detected model with sd's weights, loaded
 * strictly (a missing, unexpected or misshapen key throws PyTorch's message),
 * in eval mode and channels_last. sd stays the caller's to dispose.
 */
export function buildModel(wt, sd, models) {
  const found = detectModel(wt, sd, models);
  if (!found) throw new Error('the state dict is neither a torchvision resnet18/34/50 nor a mobilenet_v2 one');
  const model = models(wt)[found.factory](found.options);
  try {
    model.loadStateDict(sd);
  } catch (e) {
    model.dispose();
    throw e;
  }
  model.eval().to({ memoryFormat: 'channels_last' });
  return { name: found.name, numClasses: found.options.numClasses, model };
}

// Python's round() (CenterCrop's offsets): halves to even
const roundHalfEven = (v) => (v % 1 === 0.5 && Math.floor(v) % 2 === 0 ? Math.floor(v) : Math.round(v));

/**
 * A decoded image, { width, height, pixels } with pixels 8-bit, row-major,
 * `channels` per pixel (3: RGB, 4: RGBA as a canvas gives; alpha is dropped
 * as PIL's convert('RGB') does), as the model's float32 [1, 3, 224, 224]
 * channels_last input.
 */
export function preprocess(wt, { width, height, pixels, channels = 3 }) {
  if (typeof wt.interpolate !== 'function') throw new Error('this weft build has no wt.interpolate');
  if (pixels.length !== width * height * channels) {
    throw new Error(`an image of ${width}x${height}x${channels} needs ${width * height * channels} values, not ${pixels.length}`);
  }
  return wt.tidy(() => {
    const img = wt.tensor(Float32Array.from(pixels, (v) => v / 255)).reshape([1, height, width, channels])
      .narrow(3, 0, 3).permute([0, 3, 1, 2]);
    const s = RESIZE / Math.min(width, height);
    const size = width <= height ? [Math.floor(height * s), RESIZE] : [RESIZE, Math.floor(width * s)];
    const resized = wt.interpolate(img, { size, mode: 'bilinear', alignCorners: false });
    const top = roundHalfEven((size[0] - CROP) / 2), left = roundHalfEven((size[1] - CROP) / 2);
    const crop = resized.narrow(2, top, CROP).narrow(3, left, CROP);
    const mean = wt.tensor(MEAN).reshape([1, 3, 1, 1]), std = wt.tensor(STD).reshape([1, 3, 1, 1]);
    return crop.sub(mean).div(std).contiguous({ memoryFormat: 'channels_last' });
  });
}

/**
 * Runs model on the input x: { top: [[classIndex, probability]] (the k most
 * probable, most probable first), classes, ms (the forward's wall time) }.
 */
export function classify(wt, model, x, k = 5) {
  const t0 = performance.now();
  const probs = wt.noGrad(() => wt.tidy(() => wt.softmax(model(x), 1)));
  const ms = performance.now() - t0;
  try {
    const p = Array.from(probs.toArray()[0]);
    const top = p.map((v, i) => [i, v]).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
    return { top, classes: p.length, ms };
  } finally {
    probs.dispose();
  }
}
