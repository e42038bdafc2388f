#!/usr/bin/env node
// Writes text with the character-level GPT that PyTorch trained on "Pride and
// Prejudice" (demo/gpt/train_char_gpt.py), loaded from its torch.save file into
// weft/models' gpt (demo/gpt/model.mjs), from the command line:
//   node demo/node/char_gpt.mjs [--prompt TEXT] [--tokens N] [--temperature T] [--top-k K]
//                               [--seed S] [--threads N] [--quiet]
// The text goes to stdout as it is written; a progress line (tokens written,
// tokens/s) to stderr, redrawn in place on a terminal, and a summary line at
// the end. Temperature 0 is greedy decoding (no seed needed). --quiet drops the
// progress line (the summary stays).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { init } from 'weft';
import { models } from 'weft/models';
import { Writer, loadCharGPT } from '../gpt/model.mjs';

const file = (f) => new URL(`../gpt/${f}`, import.meta.url);
const DEFAULTS = { prompt: '"My dear', tokens: 300, temperature: 0.8, topK: 20, seed: 0, threads: 1, quiet: false };
const FLAGS = { '--prompt': 'prompt', '--tokens': 'tokens', '--temperature': 'temperature', '--top-k': 'topK', '--seed': 'seed', '--threads': 'threads' };
const USAGE = 'usage: node demo/node/char_gpt.mjs [--prompt TEXT] [--tokens N] [--temperature T] [--top-k K] [--seed S] [--threads N] [--quiet]';

export function parseArgs(argv) {
  const o = { ...DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quiet') { o.quiet = true; continue; }
    const key = FLAGS[argv[i]];
    if (!key || i + 1 >= argv.length) throw new Error(`${argv[i]}: unknown option or missing value\n${USAGE}`);
    o[key] = key === 'prompt' ? argv[++i] : Number(argv[++i]);
  }
  const bad = (k, want) => { throw new Error(`--${k.replace(/[A-Z]/, (c) => `-${c.toLowerCase()}`)} must be ${want}\n${USAGE}`); };
  if (!Number.isInteger(o.tokens) || o.tokens < 1) bad('tokens', 'a positive integer');
  if (!(o.temperature >= 0)) bad('temperature', 'a number >= 0');
  if (!Number.isInteger(o.topK) || o.topK < 1) bad('topK', 'a positive integer');
  if (!Number.isInteger(o.seed)) bad('seed', 'an integer');
  if (!Number.isInteger(o.threads) || o.threads < 1) bad('threads', 'a positive integer');
  return o;
}

export async function main(argv = process.argv.slice(2), { out = process.stdout, err = process.stderr } = {}) {
  const o = parseArgs(argv);
  const wt = await init();
  wt.setNumThreads(Math.min(o.threads, wt.maxThreads()));
  wt.manualSeed(o.seed);
  const meta = JSON.parse(readFileSync(file('char_gpt.json'), 'utf8'));
  const { model, vocab } = loadCharGPT(wt, models, readFileSync(file('char_gpt.pt')), meta);
  const writer = new Writer(wt, model, vocab, o.prompt, { maxNewTokens: o.tokens, temperature: o.temperature, topK: o.topK });
  const progress = () => `${writer.written}/${o.tokens} tokens, ${writer.tokensPerSecond.toFixed(1)} tokens/s`;
  const live = err.isTTY && !o.quiet;
  out.write(vocab.decode(writer.ids));
  let shown = 0;
  while (!writer.done) {
    out.write(writer.run(100));
    if (live && performance.now() - shown > 250) {
      err.write(`\r\x1b[2K${progress()}`);
      shown = performance.now();
    }
  }
  out.write('\n');
  if (live) err.write('\r\x1b[2K');
  err.write(`${progress()} (${wt.backend.variant}, ${wt.backend.numThreads} thread${wt.backend.numThreads > 1 ? 's' : ''})\n`);
  const result = { text: writer.text, written: writer.written, tokensPerSecond: writer.tokensPerSecond };
  writer.dispose();
  model.dispose();
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    await main();
  } catch (e) {
    console.error(e.message);
    process.exitCode = 1;
  }
}
