// Benchmark W10's references (issue 24) against PyTorch 1.13 on tiny models
// (tests/fixtures/llama/, made by tests/fixtures/gen_llama_fixtures.py with the
// benchmark's own generator): the C decoder bench/llama/decode.c, built here
// natively, reads the llama2.c checkpoint and gives PyTorch's greedy ids from
// token 1, its next token after a prompt and the logits there (with its own
// classifier, and with grouped key/value heads and the classifier tied to the
// embedding); weft's row as the benchmark builds it (bench/models/weft_llama.mjs)
// gives the same ids from the state dict on every variant; a checkpoint whose
// size does not match its header is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLlama } from '../../bench/models/weft_llama.mjs';
import { init, VARIANTS } from './helpers.mjs';

const dir = fileURLToPath(new URL('../fixtures/llama/', import.meta.url));
const src = fileURLToPath(new URL('../../bench/llama/decode.c', import.meta.url));
const FX = JSON.parse(readFileSync(join(dir, 'llama.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'weft-llama-'));
const exe = join(tmp, 'decode');

function build() {
  const r = spawnSync('cc', ['-O2', '-std=c11', '-D_POSIX_C_SOURCE=199309L', '-Wall', '-Werror', '-Wno-unknown-pragmas', '-o', exe, src, '-lm'],
    { encoding: 'utf8' });
  assert.equal(r.status, 0, `cc failed: ${r.stderr}`);
}

function decode(ckpt, args) {
  const r = spawnSync(exe, [ckpt, ...args], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr, out: r.status === 0 ? JSON.parse(r.stdout) : null };
}

test('the C decoder gives PyTorch\'s greedy ids and logits', () => {
  build();
  for (const c of FX.cases) {
    const { status, stderr, out } = decode(join(dir, `${c.name}.bin`), ['--steps', String(c.gen_ids.length), '--start',
      String(c.gen_start), '--prompt', c.prompt.join(','), '--reps', '2', '--logits']);
    assert.equal(status, 0, stderr);
    assert.deepEqual(out.ids, c.gen_ids, `${c.name}: greedy ids from token ${c.gen_start}`);
    assert.equal(out.prefill_next, c.prefill_next, `${c.name}: the token after the prompt`);
    const scale = Math.max(...c.prefill_logits.map(Math.abs));
    const err = Math.max(...out.logits.map((v, i) => Math.abs(v - c.prefill_logits[i])));
    assert.ok(err <= 1e-5 * scale, `${c.name}: logits after the prompt off by ${err} (scale ${scale})`);
    assert.ok(out.decode_ms > 0 && out.tok_s > 0 && out.prefill_ms > 0 && out.threads === 1 && out.reps === 2);
  }
});

test('the C decoder refuses a checkpoint that does not match its header, and bad arguments', () => {
  build();
  const whole = readFileSync(join(dir, 'tiny.bin'));
  const cut = join(tmp, 'cut.bin');
  writeFileSync(cut, whole.subarray(0, whole.length - 4));
  let r = decode(cut, ['--steps', '2']);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /the file's size does not match its header/);
  r = decode(join(dir, 'tiny.bin'), ['--steps', '2', '--prompt', '1,64']);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /a prompt id is out of the vocabulary/);
  r = decode(join(dir, 'tiny.bin'), ['--steps', '33']);
  assert.match(r.stderr, /out of range/);
  r = decode(join(tmp, 'missing.bin'), []);
  assert.match(r.stderr, /cannot open the checkpoint/);
});

test('weft\'s benchmark row loads the state dict and gives the same ids', async () => {
  for (const variant of VARIANTS) {
    const wt = await init({ variant });
    for (const c of FX.cases) {
      const sd = wt.load(readFileSync(join(dir, `${c.name}.pt`)));
      const m = buildLlama(wt, c.config, sd);
      const ids = m.generate([c.gen_start], { maxNewTokens: c.gen_ids.length, temperature: 0 });
      assert.deepEqual(ids.slice(1), c.gen_ids, `${variant} ${c.name}: greedy ids`);
      const pre = buildLlama(wt, c.config, sd, c.prompt.length + 1).generate(c.prompt, { maxNewTokens: 1, temperature: 0 });
      assert.equal(pre[pre.length - 1], c.prefill_next, `${variant} ${c.name}: the token after the prompt`);
      for (const t of Object.values(sd)) t.dispose();
    }
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
