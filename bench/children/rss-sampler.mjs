// A worker thread that keeps the process's peak RSS (in KiB) in shared memory: the main
// thread is blocked during a synchronous import, so it cannot sample itself.
import { setInterval } from 'node:timers';
import { workerData } from 'node:worker_threads';
import { raisePeak } from '../lib/peak.mjs';

const peak = new Int32Array(workerData.buffer);
setInterval(() => raisePeak(peak, Math.round(process.memoryUsage.rss() / 1024)), 1);
