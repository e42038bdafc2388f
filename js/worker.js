// Worker mode, browser side: the script initWorker() starts with
// new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }).
import { init } from './browser.js';
import { serve } from './worker-host.js';

serve({
  post: (msg, transfer) => self.postMessage(msg, transfer ?? []),
  onMessage: (cb) => { self.onmessage = (e) => cb(e.data); },
}, init);
