// Writes as the registry grows (issue 28, defect 9): 64 concurrent registers of new tools
// (one group commit, read cache on and holding every tool, as after a listAll) against the
// same 64 registers as 64 plain one-table transactions, on files of 100, 10,000 and 100,000
// tools. A write's cost must not grow with the number of tools beyond SQLite's own B-tree:
// the ratio (target <= 0.2x) must hold at 10,000 tools, not only at 100.
// `bench/run.mjs` calls writeScaleWorkloads(); `node bench/write-scale.mjs` runs only these
// (after npm run build) and prints the medians and ratios.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteToolRegistry } from '../dist/index.js';
import { createPlainFile, plainRegistry, populateStoreFile, specFor } from './lib/fixtures.mjs';
import { measureInterleaved } from './lib/measure.mjs';

export const SCALE_SIZES = [100, 10_000, 100_000];

/** Measures each size and hands each contender to `record(id, workload, contender, stats)`. */
export async function writeScaleWorkloads({ record, folder, sizes = SCALE_SIZES, rounds = 4 }) {
  for (const size of sizes) {
    const ours = join(folder, `scale-${size}.db`);
    await populateStoreFile(ours, size);
    const registry = await openSqliteToolRegistry({ filename: ours, cache: true });
    // The cache holds every tool and its sorted lists, as in a service that lists its tools.
    if ((await registry.listAll({ includeDisabled: true })).length !== size) throw new Error('bench sanity check failed: the file holds the tools');
    await registry.listAll();
    const plainDb = createPlainFile(join(folder, `scale-${size}-plain.db`), size);
    const plain = plainRegistry(plainDb);
    let fresh = 0;
    const batchOf = () => Array.from({ length: 64 }, () => specFor(5_000_000 + fresh++));
    const pooled = await measureInterleaved(
      [
        ['cache', async () => { await Promise.all(batchOf().map((spec) => registry.register(spec))); }, { async: true, batch: 1 }],
        ['plain', () => { for (const spec of batchOf()) plain.register(spec); }, { async: false, batch: 1 }],
      ],
      { rounds },
    );
    const workload = `64 concurrent registers of new tools, ${size.toLocaleString('en-US')} tools stored`;
    record(`register.concurrent64.scale${size}.cache`, workload, 'ours, cache on (holding every tool)', pooled.get('cache'));
    record(`register.concurrent64.scale${size}.plain`, workload, '64 plain one-table transactions', pooled.get('plain'));
    await registry.close();
    plainDb.close();
    rmSync(ours, { force: true });
  }
}

// Standalone: `npm run build && node bench/write-scale.mjs` prints the medians and ratios.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-scale-'));
  const results = new Map();
  try {
    await writeScaleWorkloads({
      folder,
      rounds: process.env.BENCH_QUICK === '1' ? 1 : 4,
      record: (id, workload, contender, stats) => results.set(id, { workload, contender, median_us: stats.median_us, samples: stats.samples }),
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  for (const size of SCALE_SIZES) {
    const ours = results.get(`register.concurrent64.scale${size}.cache`);
    const plain = results.get(`register.concurrent64.scale${size}.plain`);
    process.stdout.write(
      `${String(size).padStart(7)} tools: ours ${(ours.median_us / 1000).toFixed(2)} ms (${ours.samples} samples), 64 plain ${(plain.median_us / 1000).toFixed(2)} ms: ${(ours.median_us / plain.median_us).toFixed(3)}x\n`,
    );
  }
}
