// The TypeScript declarations: tsc --noEmit over a typed tour of the API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = `${root}node_modules/typescript/bin/tsc`;

test('tsc --noEmit over tests/types/example.ts', { skip: !existsSync(tsc) && 'typescript not installed' }, async () => {
  const r = await new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', `${root}tests/types/tsconfig.json`], { cwd: root, timeout: 120000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr }));
  });
  assert.equal(r.code, 0, r.out);
});
