// Benchmark W10 (issue 24), weft's row: llama2.c's stories15M configuration
// with the random weights of bench/models/gen_llama_models.py
// (bench/models/out/stories15M.pt, made by bench/run.mjs when missing) loaded
// into weft/models' llama (llama2.c model.py's module names), batch 1:
//   node bench/llama_bench.mjs <weft-simd|weft-simd-threads> [--threads N] [--reps N] [--clock wall|cpu]
// 128 greedy tokens from token 1 (generate with its KV cache, one forward per
// token) and the next token after llama_check.json's 256-token prompt
// (generate with maxNewTokens 1: the prompt in one forward). One warm-up, then
// the median of --reps runs. Prints one JSON line: name, build, threads, ids,
// prefill_next, decode_ms, tok_s, prefill_ms, reps.
// bench/models/weft_llama.mjs builds the model (its classifier untied when the
// checkpoint's is; the prefill model with room for the token after the prompt).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { benchArgs, weftInit } from './peer_util.mjs';
import { buildLlama } from './models/weft_llama.mjs';

const OUT = new URL('./models/out/', import.meta.url);
const cli = benchArgs();
if (!['weft-simd', 'weft-simd-threads'].includes(cli.lib)) {
  console.error('usage: node bench/llama_bench.mjs <weft-simd|weft-simd-threads> [--threads N] [--reps N]');
  process.exit(2);
}
const wt = await weftInit(cli.lib.slice(5), cli);
const check = JSON.parse(readFileSync(new URL('llama_check.json', OUT), 'utf8'));
const c = check.config;
const sd = wt.load(readFileSync(new URL('stories15M.pt', OUT)));

// fn's median ms over reps runs after one warm-up, and its last result; with
// --clock cpu the process's CPU time (every thread's) instead of the wall
// clock, which a loaded machine inflates (at 1 thread they agree on an idle one)
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const now = cli.clock === 'cpu' ? cpuMs : () => performance.now();
function timed(fn, reps) {
  fn();
  const ms = [];
  let out;
  for (let r = 0; r < reps; r++) {
    const t0 = now();
    out = fn();
    ms.push(now() - t0);
  }
  return [ms.sort((a, b) => a - b)[reps >> 1], out];
}

const steps = check.gen_ids.length;
const decoder = buildLlama(wt, c, sd);
const [decodeMs, gen] = timed(() => decoder.generate([check.gen_start], { maxNewTokens: steps, temperature: 0 }), cli.reps);
const prefiller = buildLlama(wt, c, sd, c.seq_len + 1);
const [prefillMs, pre] = timed(() => prefiller.generate(check.prompt, { maxNewTokens: 1, temperature: 0 }), cli.reps);
console.log(JSON.stringify({
  name: 'W10 stories15M', build: `wasm-${cli.lib.slice(5)}`, threads: cli.threads, ids: gen.slice(1),
  prefill_next: pre[pre.length - 1], decode_ms: +decodeMs.toFixed(3), tok_s: +(steps * 1000 / decodeMs).toFixed(2),
  prefill_ms: +prefillMs.toFixed(3), reps: cli.reps, ...(cli.clock === 'cpu' ? { clock: 'cpu' } : {}),
}));
process.exit(0);
