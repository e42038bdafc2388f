// The GPT page: the character-level GPT PyTorch trained (demo/gpt/char_gpt.pt)
// in weft/models' gpt, through demo/gpt/model.mjs. Writing and fine-tuning run
// on the page's thread in slices of a few tens of milliseconds between
// animation frames, so the page stays responsive; one of them runs at a time.
// The attention panel draws what attentionProbe recorded for the token just
// written (demo/gpt/attention.js).
import { init } from '../dist/browser.js';
import { models } from '../dist/models/index.js';
import { el } from './layout.js';
import { fetchBytes, showStatus, startPage } from './panels.js';
import { FineTuner, Writer, attentionProbe, loadCharGPT, loadWeights } from './gpt/model.mjs';
import { AttentionView } from './gpt/attention.js';
import { LossPlot } from './gpt/plot.js';

const $ = (id) => document.getElementById(id);
const SLICE_MS = 30;       // work per animation frame
const SAMPLE_EVERY = 25;   // fine-tuning steps between samples
const SAMPLE_TOKENS = 160;
const TUNE_BLOCK = 64;

const state = {
  wt: null, model: null, vocab: null, meta: null, pt: null, probe: null, attention: null, plot: null,
  writer: null, tuner: null, sample: null, busy: null, tuneMs: 0,
};

const num = (id, lo, hi, dflt) => {
  const v = Number($(id).value);
  return Number.isFinite(v) && v >= lo && v <= hi ? v : dflt;
};

function fail(e) {
  showStatus(e.message);
  stopAll();
}

// runs fn once per animation frame until it returns false; errors stop everything
function loop(fn) {
  const frame = () => {
    let again = false;
    try {
      again = fn();
    } catch (e) {
      fail(e);
    }
    if (again) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

function setBusy(what) {
  state.busy = what;
  $('gen-start').disabled = what !== null;
  $('gen-stop').disabled = what !== 'write';
  $('tune-start').disabled = what !== null;
  $('tune-stop').disabled = what !== 'tune';
  $('tune-reset').disabled = what !== null;
  document.body.dataset.busy = what ?? '';
}

function stopAll() {
  state.writer?.dispose();
  state.writer = null;
  state.sample?.dispose();
  state.sample = null;
  if (state.busy === 'tune') document.body.dataset.tuned = String(state.tuner?.steps ?? 0);
  setBusy(null);
}

// ---- writing ------------------------------------------------------------------------

function knobs() {
  return { temperature: num('temperature', 0, 2, 0.8), topK: Math.round(num('topk', 1, state.vocab.size, 20)) };
}

function showKnobs() {
  const { temperature, topK } = knobs();
  $('temperature-out').value = temperature.toFixed(2);
  $('topk-out').value = String(topK);
  if (state.writer) Object.assign(state.writer, { temperature, topK }); // takes effect at the next token
}

function startWriting(ev) {
  ev?.preventDefault();
  if (state.busy) return;
  showStatus(null);
  const { wt, model, vocab } = state;
  wt.manualSeed(Math.trunc(num('seed', -(2 ** 31), 2 ** 31, 0)));
  const w = new Writer(wt, model, vocab, $('prompt').value, { maxNewTokens: Math.round(num('tokens', 1, 5000, 600)), ...knobs() });
  state.writer = w;
  $('out-prompt').textContent = vocab.decode(w.ids);
  $('out-text').textContent = '';
  setBusy('write');
  document.body.dataset.generated = '0';
  loop(() => {
    if (state.writer !== w) return false;
    $('out-text').append(w.run(SLICE_MS));
    $('tps').textContent = w.tokensPerSecond.toFixed(1);
    $('gen-count').textContent = `${w.written} tokens`;
    $('output').scrollTop = $('output').scrollHeight;
    state.attention.show(w.ids);
    document.body.dataset.generated = String(w.written);
    if (!w.done) return true;
    stopAll();
    return false;
  });
}

// ---- fine-tuning ----------------------------------------------------------------------

function showTextSize() {
  const n = state.vocab.normalize($('tune-text').value).length;
  $('tune-chars').textContent = `${n.toLocaleString('en')} characters the model knows`;
}

// a sample from the start of the user's text, written across frames before training goes on
function startSample(tuner) {
  const { wt, model, vocab } = state;
  const prompt = vocab.decode(tuner.ids.slice(0, 16));
  wt.manualSeed(1234); // the same draws each time: what changes is the model
  const w = new Writer(wt, model, vocab, prompt, { maxNewTokens: SAMPLE_TOKENS, temperature: 0.8, topK: 20 });
  const li = el('li', { 'data-step': tuner.steps }, el('span', { class: 'tune-at', text: `step ${tuner.steps}` }),
    el('span', { class: 'out-prompt', text: prompt }), el('span', { class: 'tune-out' }));
  $('tune-samples').prepend(li);
  state.sample = { w, li, dispose: () => w.dispose() };
}

function sampleSlice() {
  const { w, li } = state.sample;
  li.querySelector('.tune-out').append(w.run(SLICE_MS));
  if (!w.done) return;
  state.sample.dispose();
  state.sample = null;
}

function trainSlice(tuner, steps) {
  const t0 = performance.now();
  do {
    tuner.step();
    state.plot.draw(tuner.losses, steps);
    if (tuner.steps % SAMPLE_EVERY === 0 || tuner.steps === steps) {
      startSample(tuner);
      break;
    }
  } while (performance.now() - t0 < SLICE_MS && tuner.steps < steps);
  $('tune-step').textContent = `${tuner.steps} / ${steps}`;
  $('tune-loss').textContent = tuner.losses.at(-1).toFixed(4);
  state.tuneMs += performance.now() - t0;
  $('tune-speed').textContent = `${(state.tuneMs / tuner.steps).toFixed(0)} ms/step`;
  document.body.dataset.tuneSteps = String(tuner.steps);
}

function startTuning(ev) {
  ev?.preventDefault();
  if (state.busy) return;
  showStatus(null);
  const { wt, model, vocab } = state;
  let tuner;
  try {
    tuner = new FineTuner(wt, model, vocab.encode($('tune-text').value), {
      batch: Math.round(num('tune-batch', 1, 64, 8)), block: TUNE_BLOCK, lr: num('tune-lr', 1e-5, 0.1, 1e-3),
    });
  } catch (e) {
    showStatus(e.message);
    return;
  }
  state.tuner?.dispose();
  state.tuner = tuner;
  state.tuneMs = 0;
  const steps = Math.round(num('tune-steps', 1, 5000, 300));
  $('tune-samples').replaceChildren();
  state.plot.draw([], steps);
  setBusy('tune');
  startSample(tuner); // step 0: what the checkpoint writes before it saw the text
  loop(() => {
    if (state.tuner !== tuner || state.busy !== 'tune') return false;
    if (state.sample) sampleSlice();
    else if (tuner.steps < steps) trainSlice(tuner, steps);
    if (state.sample || tuner.steps < steps) return true;
    stopAll();
    return false;
  });
}

function resetWeights() {
  if (state.busy) return;
  state.tuner?.dispose();
  state.tuner = null;
  loadWeights(state.wt, state.model, state.pt);
  $('tune-samples').replaceChildren();
  $('tune-step').textContent = '0';
  $('tune-loss').textContent = '—';
  $('tune-speed').textContent = '—';
  state.plot.draw([], 1);
  document.body.dataset.tuned = '';
}

// ---- start ------------------------------------------------------------------------

function showModel() {
  const { meta, model, pt } = state;
  const c = meta.config;
  const last = meta.training.history?.at(-1);
  const items = [
    ['layers × heads', `${c.nLayer} × ${c.nHead}, width ${c.nEmbd}, ${c.blockSize} positions`],
    ['parameters', model.getNumParams(false).toLocaleString('en')],
    ['checkpoint', `${(pt.length / 2 ** 20).toFixed(2)} MB float32`],
    ['training', `${meta.training.steps} steps of ${meta.training.batch} × ${c.blockSize} characters`],
    ['loss', last ? `train ${last.train.toFixed(3)}, validation ${last.val.toFixed(3)} (nats per character)` : '—'],
  ];
  $('model-info').replaceChildren(...items.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
}

async function main() {
  const wt = await startPage(init, showStatus);
  if (!wt) return;
  try {
    const [meta, pt] = await Promise.all([
      fetch('gpt/char_gpt.json').then((r) => (r.ok ? r.json() : Promise.reject(new Error(`gpt/char_gpt.json: HTTP ${r.status}`)))),
      fetchBytes('gpt/char_gpt.pt'),
    ]);
    Object.assign(state, { wt, meta, pt }, loadCharGPT(wt, models, pt, meta));
  } catch (e) {
    showStatus(`the model could not be loaded: ${e.message}`);
    document.body.dataset.ready = 'failed';
    return;
  }
  state.probe = attentionProbe(wt, state.model);
  state.attention = new AttentionView(state.probe, state.vocab, { grid: $('attn-grid'), text: $('attn-text'),
    layer: $('attn-layer'), head: $('attn-head'), token: $('attn-token') });
  state.plot = new LossPlot($('tune-canvas'));
  state.plot.draw([], 1);
  showModel();
  $('gen-form').addEventListener('submit', startWriting);
  $('gen-stop').addEventListener('click', stopAll);
  for (const id of ['temperature', 'topk']) $(id).addEventListener('input', showKnobs);
  $('tune-form').addEventListener('submit', startTuning);
  $('tune-stop').addEventListener('click', stopAll);
  $('tune-reset').addEventListener('click', resetWeights);
  $('tune-text').addEventListener('input', showTextSize);
  showKnobs();
  showTextSize();
  setBusy(null);
  window.gptDemo = { state, memory: () => wt.memory() };
  document.body.dataset.ready = 'true';
}

main();
