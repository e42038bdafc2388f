// docs/api.md is generated (scripts/gen_api_docs.mjs): regenerated here in memory, it must equal
// the committed file; and every example and PyTorch → weft row of docs/examples.json runs and
// gives the value the reference shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as models from 'weft/models';
import { generate } from '../../scripts/gen_api_docs.mjs';
import { init } from './helpers.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const examples = JSON.parse(readFileSync(`${root}docs/examples.json`, 'utf8'));
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
const wt = await init({ variant: 'simd' });

test('docs/api.md is up to date (node scripts/gen_api_docs.mjs rewrites it)', () => {
  const committed = readFileSync(`${root}docs/api.md`, 'utf8');
  const fresh = generate(wt, models);
  if (committed === fresh) return;
  const a = committed.split('\n');
  const b = fresh.split('\n');
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  assert.fail(`docs/api.md is stale: run node scripts/gen_api_docs.mjs\nfirst difference at line ${i + 1}:\n` +
    `- ${a[i] ?? '(end)'}\n+ ${b[i] ?? '(end)'}`);
});

test('every function, module and method is in the reference', () => {
  const text = readFileSync(`${root}docs/api.md`, 'utf8');
  for (const name of Object.keys(wt).filter((k) => typeof wt[k] === 'function' && !/^[A-Z]/.test(k))) {
    assert.ok(text.includes(`#### wt.${name}\n`), `wt.${name}`);
  }
  for (const name of Object.keys(wt.nn).filter((k) => /^[A-Z]/.test(k) && typeof wt.nn[k] === 'function')) {
    assert.ok(text.includes(`#### wt.nn.${name}\n`), `wt.nn.${name}`);
  }
  for (const name of Object.keys(wt.nn.functional)) assert.ok(text.includes(`#### wt.nn.functional.${name}\n`), name);
  for (const name of ['add', 'matmul', 'backward', 'toArray', 'item', 'index']) {
    assert.ok(text.includes(`| \`x.${name}\` |`), `x.${name}`);
  }
});

test('every family has an example', () => {
  const named = new Set(examples.examples.map((e) => e.name.split('.').slice(0, -1).join('.') || e.name));
  for (const ns of ['wt', 'wt.nn', 'wt.nn.functional', 'wt.optim', 'models']) assert.ok(named.has(ns), ns);
});

for (const e of examples.examples) {
  test(`example ${e.name}`, async () => {
    const got = await wt.tidy(() => new AsyncFunction('wt', 'models', e.code)(wt, models));
    assert.deepEqual(JSON.parse(JSON.stringify(got)), e.expect);
  });
}

for (const r of examples.pytorchToWeft) {
  test(`PyTorch → weft: ${r.torch}`, async () => {
    const got = await new AsyncFunction('wt', 'models', r.code)(wt, models);
    assert.deepEqual(JSON.parse(JSON.stringify(got)), r.expect);
  });
}

test("the README's tour runs", async () => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const tour = readme.match(/## A tour\n\n```js\n([\s\S]*?)```/);
  assert.ok(tour, 'README.md has a "## A tour" js block');
  const body = tour[1].replace(/^import .*\n/m, '');
  const log = [];
  const console = { log: (...a) => log.push(a) };
  // seeded, so the tiny model's training is the same every run
  const seeded = async (options) => { const w = await init(options); w.manualSeed(0); return w; };
  await new AsyncFunction('init', 'console', body)(seeded, console);
  assert.deepEqual(log[0], ['tensor([17., 37.])']);
  assert.deepEqual(log[1], [[1, 3]]);
  const [[[a], [b]]] = log[2];
  assert.ok(Math.abs(a - 1) < 0.1 && Math.abs(b) < 0.1, `trained to ${a}, ${b}`);
});
