/* For hosts whose threads become startable one at a time: the wasm loader
 * (js/loader.js) starts the pthread Web Workers after init() and raises the
 * limit as each one has loaded, since a pthread_create on a worker still
 * loading would wait on the browser's event loop while the caller spins. */
#ifndef WEFT_PARALLEL_WORKER_LIMIT_H
#define WEFT_PARALLEL_WORKER_LIMIT_H

/* At most n worker threads may be started from now on (n < 0: no limit, the
 * default); threads already started are kept. */
void weft_set_worker_limit(int n);

#endif
