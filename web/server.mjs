// A tiny static server for the demo: serves the repository root with the two
// headers that make a page cross-origin isolated, so the threaded build
// (SharedArrayBuffer) can run.
//   node web/server.mjs [port] [--port N] [--host H] [--no-isolation]
// Port 0 picks a free port. --no-isolation leaves COOP/COEP out, so the page
// runs the single-threaded build (the browser tests check that it says so).
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const positional = args.find((a, i) => !a.startsWith('--') && !(i > 0 && ['--port', '--host'].includes(args[i - 1])));
const port = Number(flag('--port') ?? positional ?? process.env.PORT ?? 8080);
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm',
  '.json': 'application/json', '.css': 'text/css', '.svg': 'image/svg+xml', '.ico': 'image/x-icon',
  '.md': 'text/plain; charset=utf-8', '.txt': 'text/plain; charset=utf-8',
};

async function resolve(urlPath) {
  let file;
  try {
    file = normalize(join(root, decodeURIComponent(urlPath)));
  } catch {
    return null;
  }
  if (!file.startsWith(root)) return null;
  const s = await stat(file).catch(() => null);
  if (s?.isDirectory()) return resolve(join(urlPath, 'index.html'));
  return s?.isFile() ? file : null;
}

export function startServer(p = port, { isolation = true, host } = {}) {
  const server = createServer(async (req, res) => {
    if (isolation) {
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
      res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    }
    const path = new URL(req.url, 'http://localhost').pathname;
    if (path === '/') {
      res.writeHead(302, { Location: '/demo/' });
      res.end();
      return;
    }
    const file = await resolve(path);
    if (!file) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': types[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(p, host, () => ok(server)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const isolation = !args.includes('--no-isolation');
  const host = flag('--host');
  const server = await startServer(port, { isolation, host });
  const shown = !host || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  console.log(`weft demo: http://${shown}:${server.address().port}/demo/` +
    (isolation ? '' : ' (no COOP/COEP: single-threaded)'));
}
