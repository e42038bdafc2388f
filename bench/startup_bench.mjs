// Size and startup of each wasm variant (issue 26):
//   node bench/startup_bench.mjs [--runs N] [--no-browser] [--json] [--dist DIR] [--variants simd,scalar]
// Size: the .wasm of dist/ raw and gzipped (level 9). Startup: in a fresh Node
// process per run, import of dist/index.js, then init({ variant }) to the
// first op's result in JS (a small add read back with tolist()), split into
// init() and the first op; in Chromium (Debian's, through playwright-core,
// a fresh profile per run so nothing is cached, served by web/server.mjs
// with COOP/COEP) the same from a blank page importing dist/browser.js. The
// median of --runs (default 5). One JSON line per variant and engine with
// --json, else a table. In Node also the CPU time of init() to the result.
// Each row also gives when init()'s stages ended (the loader's performance
// marks: wasm read/compiled, glue loaded, instantiated, runtime up, API
// built, and the pthread workers loaded, which init() does not wait for).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const VARIANTS = ['simd-threads', 'simd', 'scalar'].filter((v) => !opt('--variants', '') || opt('--variants').split(',').includes(v));
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = opt('--dist', `${root}dist`);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// the measured sequence, the same text in Node and in the page; in Node also
// the process's CPU time from init() to the result (every thread's: the pool
// workers load then), which a loaded machine inflates less than the clock
async function startup(load, variant) {
  const cpu = () => (typeof process === 'object' ? process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 : NaN);
  const t0 = performance.now();
  const weft = await load();
  const t1 = performance.now();
  const c1 = cpu();
  const wt = await weft.init({ variant });
  const t2 = performance.now();
  const r = wt.tensor([1, 2, 3]).add(1).tolist();
  const t3 = performance.now();
  if (r[2] !== 4) throw new Error(`first op gave ${r}`);
  const c3 = cpu();
  // the loader's marks (js/loader.js mark()), ms after init() began; the
  // pthread workers load after init() resolved ('workers')
  try {
    await wt.threadsReady();
  } catch { /* an older build (--dist) waited for its workers in init() */ }
  const marks = Object.fromEntries(performance.getEntriesByType('mark')
    .filter((m) => m.name.startsWith('weft:')).map((m) => [m.name.slice(5), m.startTime]));
  const stages = Object.fromEntries(Object.entries(marks).filter(([k]) => k !== 'init')
    .map(([k, v]) => [k, v - marks.init]));
  return { import: t1 - t0, init: t2 - t1, firstOp: t3 - t2, total: t3 - t1, cpu: c3 - c1, stages };
}

if (args[0] === '--child') {
  const url = pathToFileURL(`${dist}/index.js`).href;
  console.log(JSON.stringify(await startup(() => import(url), args[1])));
  process.exit(0);
}

function nodeRun(variant) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', variant, '--dist', dist],
    { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`startup ${variant}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function browserRuns(runs) {
  const { startServer, launchBrowser } = await import('../tests/browser/helpers.mjs');
  const server = await startServer();
  const origin = new URL(server.url).origin;
  const distPath = `/${dist.replace(root, '').replace(/^\/+|\/+$/g, '')}`;
  const out = Object.fromEntries(VARIANTS.map((v) => [v, []]));
  try {
    for (let r = 0; r < runs; r++) {
      for (const variant of VARIANTS) {
        const b = await launchBrowser();
        try {
          const page = await b.context.newPage();
          await page.goto(`${origin}/bench/startup.html`);
          const fn = `(${startup})(() => import('${distPath}/browser.js'), '${variant}')`;
          out[variant].push(await page.evaluate(fn));
        } finally {
          await b.close();
        }
      }
    }
  } finally {
    await server.stop();
  }
  return out;
}

const runs = Math.max(1, Number(opt('--runs', '5')));
const rows = [];
const summarize = (variant, engine, xs) => {
  const keys = ['import', 'init', 'firstOp', 'total', ...(engine === 'node' ? ['cpu'] : [])];
  const stages = Object.fromEntries(Object.keys(xs[0].stages).map((k) => [k,
    +median(xs.map((x) => x.stages[k] ?? NaN)).toFixed(1)]));
  return { variant, engine, ...Object.fromEntries(keys.map((k) => [`${k}_ms`, +median(xs.map((x) => x[k])).toFixed(1)])),
    stages_ms: stages, runs };
};
for (const variant of VARIANTS) {
  const wasm = readFileSync(`${dist}/weft-${variant}.wasm`);
  rows.push({ variant, engine: 'size', wasm_kb: +(wasm.length / 1024).toFixed(1),
    gzip_kb: +(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(1) });
  const xs = [];
  for (let r = 0; r < runs; r++) xs.push(nodeRun(variant));
  rows.push(summarize(variant, 'node', xs));
}
if (!args.includes('--no-browser')) {
  try {
    const b = await browserRuns(runs);
    for (const variant of VARIANTS) rows.push(summarize(variant, 'chromium', b[variant]));
  } catch (e) {
    process.stderr.write(`startup: chromium skipped (${e.message.split('\n')[0]})\n`);
  }
}
if (args.includes('--json')) {
  for (const r of rows) console.log(JSON.stringify(r));
} else {
  console.log(`wasm size (KB, raw / gzip -9) and startup (ms, median of ${runs}; total = init() to the first op's result)`);
  for (const r of rows) {
    if (r.engine === 'size') console.log(`${r.variant.padEnd(14)}size      ${r.wasm_kb} KB / ${r.gzip_kb} KB gzip`);
    else {
      console.log(`${r.variant.padEnd(14)}${r.engine.padEnd(10)}import ${r.import_ms} ms, init ${r.init_ms} ms, ` +
        `first op ${r.firstOp_ms} ms, total ${r.total_ms} ms${r.cpu_ms === undefined ? '' : ` (CPU ${r.cpu_ms} ms)`}`);
      // when each stage of init() ended, ms after it began (sorted by time)
      const st = Object.entries(r.stages_ms).sort((a, b) => a[1] - b[1]).map(([k, v]) => `${k} ${v}`).join(', ');
      console.log(`${''.padEnd(24)}init stages (ms after init() began): ${st}`);
    }
  }
}
