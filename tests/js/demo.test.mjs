// The Node demo prints the seed example's answers, and the process exits on
// its own (the pthread pool's workers must not keep it alive).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../demo/node/channels_last.mjs', import.meta.url));

test('demo/node/channels_last.mjs', async () => {
  const stdout = await new Promise((resolve, reject) => {
    execFile(process.execPath, [script], { timeout: 20000 }, (err, out, errOut) =>
      (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)));
  });
  assert.equal(stdout, '[1, 64, 5, 4]\n[1280, 1, 256, 64]\nfalse\ntrue\n');
});

function run(file, cwd, args = []) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [file, ...args], { timeout: 30000, cwd }, (err, out, errOut) =>
      (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)));
  });
}

test('demo/node/tour.mjs', async () => {
  const out = await run(fileURLToPath(new URL('../../demo/node/tour.mjs', import.meta.url)));
  assert.match(out, /row\.expand\(3, 4\) strides +\[0, 1\]/);
  assert.match(out, /promoteTypes\(uint8, int8\) +int16/);
  assert.match(out, /live tensors after tidy\(\) +0/);
});

test('demo/node/plan_trace.mjs', async () => {
  const out = await run(fileURLToPath(new URL('../../demo/node/plan_trace.mjs', import.meta.url)));
  assert.match(out, /iterator plan/);
  assert.match(out, /dispatch trace/);
});

test('demo/node/conv_layouts.mjs', async () => {
  const out = await run(fileURLToPath(new URL('../../demo/node/conv_layouts.mjs', import.meta.url)), undefined, ['--quick']);
  assert.match(out, /NCHW +input stride \[1152, 144, 12, 1\] +algorithm im2col_gemm_nchw +output channels_last false/);
  assert.match(out, /channels_last +input stride \[1152, 1, 96, 8\] +algorithm implicit_gemm_nhwc +output channels_last true/);
  assert.match(out, /same values: true/);
});
