// Worker mode, Node side: the worker_threads script of initWorker().
import { parentPort } from 'node:worker_threads';
import { init } from './index.js';
import { serve } from './worker-host.js';

serve({
  post: (msg, transfer) => parentPort.postMessage(msg, transfer ?? []),
  onMessage: (cb) => parentPort.on('message', cb),
}, init);
