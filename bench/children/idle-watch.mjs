// Child of bench/changes.mjs: opens a registry, starts an idle watch (or none, for the
// baseline), and reports the process CPU time used over `seconds` of wall time.
import { setTimeout as sleep } from 'node:timers/promises';
import { InMemoryToolRegistry, openSqliteToolRegistry } from '../../dist/index.js';

const [store, file, secondsText, mode] = process.argv.slice(2);
const seconds = Number(secondsText);
const registry = store === 'memory' ? new InMemoryToolRegistry() : await openSqliteToolRegistry({ filename: file });
const controller = new globalThis.AbortController();
let delivered = 0;
const watching =
  mode === 'watch'
    ? (async () => {
        for await (const event of registry.watch({ signal: controller.signal })) delivered += event.revision > 0 ? 1 : 0;
      })()
    : Promise.resolve();
// Let start-up work (imports, JIT, the first probe) settle before measuring.
await sleep(1000);
const cpuBefore = process.cpuUsage();
const wallBefore = process.hrtime.bigint();
// Keep the event loop alive without work of our own while measuring.
await sleep(seconds * 1000);
const cpu = process.cpuUsage(cpuBefore);
const wallUs = Number(process.hrtime.bigint() - wallBefore) / 1000;
controller.abort();
await watching;
await registry.close();
process.stdout.write(JSON.stringify({ cpuUs: cpu.user + cpu.system, wallUs, delivered }) + '\n');
