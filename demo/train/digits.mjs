// The digits classifier shared by the Node example (demo/node/train_digits.mjs)
// and the browser training page (demo/train.html): data preparation, the two
// models (an MLP and a small CNN), and a trainer that runs one minibatch at a
// time so the page can draw between steps. Everything is plain weft API
// (autograd, crossEntropy, wt.optim.Adam); nothing here knows about Node or
// the DOM.
//
// Data: the 8x8 digits scikit-learn ships (demo/data/*.npy, 1,797 images,
// pixel values 0..16). Every 6th image (index 5, 11, ...: 299 images) is
// held out as the test set, the other 1,498 train. The file stores the
// images in blocks of writers, so an interleaved split tests on unseen
// images of the writers the model learned from, as a shuffled
// train_test_split does; holding out the last block instead measures
// transfer to new writers (an MLP tops out near 92% there, in PyTorch too).

export const TEST_EVERY = 6;
export const MODELS = ['mlp', 'cnn'];
export const DEFAULTS = Object.freeze({ model: 'mlp', epochs: 10, batch: 32, lr: 0.01, seed: 0 });

// x in [0, 1] then centred per pixel with the training set's mean and
// scaled by its overall standard deviation: Adam then converges in a few
// epochs (raw 0..16 inputs leave the first layer badly scaled).
function normalize(wt, images, trainIdx) {
  const n = images.shape[0];
  const x = images.view([n, 64]).float().div(16);
  const train = x.indexSelect(0, trainIdx);
  const mean = train.mean(0, true);
  const std = train.sub(mean).pow(2).mean().sqrt().item();
  return x.sub(mean).div(std);
}

function split(wt, n) {
  const test = [], train = [];
  for (let i = 0; i < n; i++) (i % TEST_EVERY === TEST_EVERY - 1 ? test : train).push(i);
  return { trainIdx: wt.tensor(train, { dtype: 'int64' }), testIdx: wt.tensor(test, { dtype: 'int64' }) };
}

/** The data set as float32 [n, 64] inputs and int64 labels, split train/test. */
export function loadDigits(wt, imagesNpy, labelsNpy) {
  return wt.tidy(() => {
    const images = wt.fromNpy(imagesNpy); // uint8 [1797, 8, 8], 0..16
    const labels = wt.fromNpy(labelsNpy); // int64 [1797], 0..9
    const { trainIdx, testIdx } = split(wt, images.shape[0]);
    const x = normalize(wt, images, trainIdx);
    const parts = {
      xTrain: x.indexSelect(0, trainIdx), yTrain: labels.indexSelect(0, trainIdx),
      xTest: x.indexSelect(0, testIdx), yTest: labels.indexSelect(0, testIdx),
      testImages: images.indexSelect(0, testIdx),
    };
    for (const t of Object.values(parts)) wt.keep(t);
    return {
      ...parts, nTrain: trainIdx.shape[0], nTest: testIdx.shape[0],
      dispose() { for (const t of Object.values(parts)) t.dispose(); },
    };
  });
}

// torch.nn.Linear / nn.Conv2d's default initialization: kaiming_uniform with
// a = sqrt(5) gives weights and biases uniform in ±1/sqrt(fan_in).
function uniformParam(wt, shape, fanIn) {
  const bound = 1 / Math.sqrt(fanIn);
  return wt.tidy(() => wt.keep(wt.rand(shape).mul(2 * bound).sub(bound))).requiresGrad_();
}

function linear(wt, fanIn, fanOut) {
  // stored [in, out] so the forward is x.mm(w) (PyTorch stores [out, in] and multiplies by w.T)
  return { w: uniformParam(wt, [fanIn, fanOut], fanIn), b: uniformParam(wt, [fanOut], fanIn) };
}

function mlp(wt) {
  const l1 = linear(wt, 64, 64), l2 = linear(wt, 64, 10);
  return {
    kind: 'mlp', label: 'MLP 64 → 64 → 10 (ReLU)',
    params: [l1.w, l1.b, l2.w, l2.b],
    forward: (x) => x.mm(l1.w).add(l1.b).relu().mm(l2.w).add(l2.b),
  };
}

const CNN_CHANNELS = 16;
function cnn(wt) {
  const k = uniformParam(wt, [CNN_CHANNELS, 1, 3, 3], 9);
  const kb = uniformParam(wt, [CNN_CHANNELS], 9);
  const flat = CNN_CHANNELS * 4 * 4;
  const fc = linear(wt, flat, 10);
  return {
    kind: 'cnn', label: `CNN conv 1 → ${CNN_CHANNELS} 3×3 → ReLU → maxPool 2 → linear ${flat} → 10`,
    params: [k, kb, fc.w, fc.b],
    forward: (x) => {
      const n = x.shape[0];
      const h = wt.maxPool2d(wt.conv2d(x.view([n, 1, 8, 8]), k, kb, { padding: 1 }).relu(), 2);
      return h.reshape([n, flat]).mm(fc.w).add(fc.b);
    },
  };
}

/** A fresh model of `kind` ('mlp' or 'cnn'), initialized from weft's generator. */
export function makeModel(wt, kind = 'mlp') {
  if (kind === 'mlp') return mlp(wt);
  if (kind === 'cnn') return cnn(wt);
  throw new Error(`unknown model '${kind}' (expected ${MODELS.join(' or ')})`);
}

const countCorrect = (logits, y) => Number(logits.argmax(1).eq(y).sum().item());

/**
 * Minibatch training with Adam: step() runs one batch (forward, crossEntropy,
 * backward, optimizer step); an epoch is one pass over a fresh permutation.
 */
export class DigitsTrainer {
  #order = null;
  #sum = { loss: 0, correct: 0, seen: 0 };

  constructor(wt, data, options = {}) {
    const o = { ...DEFAULTS, ...options };
    this.wt = wt;
    this.data = data;
    this.batch = o.batch;
    wt.manualSeed(o.seed);
    this.model = makeModel(wt, o.model);
    this.opt = new wt.optim.Adam(this.model.params, { lr: o.lr });
    this.epoch = 0;         // completed epochs
    this.step = 0;          // steps run in all
    this.offset = 0;        // position in the current epoch's permutation
    this.stepsPerEpoch = Math.ceil(data.nTrain / o.batch);
  }

  /** One minibatch; returns its mean loss and, at an epoch's end, the epoch's figures. */
  trainStep() {
    const { wt, data } = this;
    if (!this.#order) this.#order = wt.randperm(data.nTrain);
    const m = Math.min(this.batch, data.nTrain - this.offset);
    this.opt.zeroGrad();
    const { loss, correct } = wt.tidy(() => {
      const idx = this.#order.narrow(0, this.offset, m);
      const y = data.yTrain.indexSelect(0, idx);
      const logits = this.model.forward(data.xTrain.indexSelect(0, idx));
      const l = wt.crossEntropy(logits, y);
      l.backward();
      return { loss: l.item(), correct: wt.noGrad(() => countCorrect(logits, y)) };
    });
    this.opt.step();
    this.step++;
    this.offset += m;
    this.#sum.loss += loss * m;
    this.#sum.correct += correct;
    this.#sum.seen += m;
    if (this.offset < data.nTrain) return { loss, epochEnd: null };
    return { loss, epochEnd: this.#endEpoch() };
  }

  #endEpoch() {
    this.#order.dispose();
    this.#order = null;
    this.offset = 0;
    this.epoch++;
    const s = this.#sum;
    this.#sum = { loss: 0, correct: 0, seen: 0 };
    return { epoch: this.epoch, loss: s.loss / s.seen, trainAccuracy: s.correct / s.seen, testAccuracy: this.testAccuracy() };
  }

  /** Runs the rest of the current epoch; returns its figures. */
  trainEpoch() {
    for (;;) {
      const { epochEnd } = this.trainStep();
      if (epochEnd) return epochEnd;
    }
  }

  /** Predicted classes of the test images [0, count), as numbers. */
  predict(count = this.data.nTest) {
    const { wt, data } = this;
    return wt.noGrad(() => wt.tidy(() =>
      Array.from(this.model.forward(data.xTest.narrow(0, 0, count)).argmax(1).data(), Number)));
  }

  testAccuracy() {
    const { wt, data } = this;
    return wt.noGrad(() => wt.tidy(() => countCorrect(this.model.forward(data.xTest), data.yTest))) / data.nTest;
  }

  dispose() {
    this.#order?.dispose();
    this.opt.dispose();
    for (const p of this.model.params) p.dispose();
  }
}

/** The progress line the Node example prints per epoch. */
export function progressLine(e, epochs, seconds) {
  const pct = (v) => `${(v * 100).toFixed(1)}%`.padStart(6);
  return `epoch ${String(e.epoch).padStart(3)}/${epochs}  loss ${e.loss.toFixed(4)}  ` +
    `train acc ${pct(e.trainAccuracy)}  test acc ${pct(e.testAccuracy)}  ${seconds.toFixed(1)} s`;
}
