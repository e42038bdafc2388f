// A tiny static server for the demo: serves the repository root with the two
// headers that make a page cross-origin isolated, so the threaded build
// (SharedArrayBuffer) can run.   node web/server.mjs [port]
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm',
  '.json': 'application/json', '.css': 'text/css', '.svg': 'image/svg+xml', '.ico': 'image/x-icon',
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

export function startServer(p = port) {
  const server = createServer(async (req, res) => {
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
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
  return new Promise((ok) => server.listen(p, () => ok(server)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const server = await startServer();
  console.log(`weft demo: http://localhost:${server.address().port}/demo/`);
}
