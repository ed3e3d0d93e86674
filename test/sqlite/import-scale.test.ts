// importSnapshot of 100,000 tools: one transaction, in bounded memory.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { spawnWorker, useTempFolder } from './helpers.js';

const temp = useTempFolder();

describe('a large import', () => {
  // The generated snapshot is about 16 MB as JSON and about 35 MB as objects; the whole
  // child (snapshot, validation, plan and write included) must fit a 192 MB old-space heap
  // (it needs about 144 MB; the rest is headroom against flakiness).
  const HEAP_MB = 192;
  const COUNT = 100_000;

  it(`imports ${COUNT} tools in one go within a ${HEAP_MB} MB heap`, async () => {
    const file = temp.file('large.db');
    const worker = spawnWorker({ file, action: 'import', count: COUNT }, [`--max-old-space-size=${HEAP_MB}`]);
    const done = await worker.next('done');
    expect(done.ok, `${JSON.stringify(done.error)} ${worker.stderr()}`).toBe(true);
    const result = done.result as { report: { added: number }; ms: number; maxRssMB: number };
    expect(result.report.added).toBe(COUNT);
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT count(*) FROM tools').pluck().get()).toBe(COUNT);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
    console.info(`import of ${COUNT} tools: ${result.ms} ms, child peak RSS ${result.maxRssMB} MB`);
  }, 120_000);
});
