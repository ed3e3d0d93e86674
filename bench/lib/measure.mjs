// tinybench, one task at a time. Fast operations are timed in batches (a sample is the mean
// of `batch` calls) so timer resolution and the per-sample overhead do not dominate.
import { performance } from 'node:perf_hooks';
import { Bench } from 'tinybench';

const QUICK = process.env.BENCH_QUICK === '1';

/**
 * Measures `fn` (sync or async) and returns latency statistics in microseconds.
 * `beforeEach` runs untimed before every sample (for example "another process writes").
 */
export async function measure(fn, { batch: batchOption, time = 1000, beforeEach, iterations = 10, async: isAsync } = {}) {
  const batch = batchOption ?? (beforeEach === undefined ? await autoBatch(fn) : 1);
  // tinybench's time budget counts only timed work: with an untimed beforeEach (another
  // process writing) a sample costs far more than it measures, so cap by iterations instead.
  if (beforeEach !== undefined) {
    time = Math.min(time, 20);
    iterations = Math.max(iterations, QUICK ? 50 : 300);
  }
  const bench = new Bench({
    time: QUICK ? Math.min(time, 200) : time,
    warmupTime: QUICK ? 50 : Math.min(time / 4, 250),
    iterations,
    warmupIterations: 5,
    retainSamples: true,
  });
  const task =
    batch === 1
      ? fn
      : isAsync
        ? async () => {
            const start = performance.now();
            for (let i = 0; i < batch; i++) await fn();
            const elapsed = performance.now() - start;
            return { overriddenDuration: elapsed / batch, overriddenIterationCost: elapsed };
          }
        : () => {
            const start = performance.now();
            for (let i = 0; i < batch; i++) fn();
            const elapsed = performance.now() - start;
            return { overriddenDuration: elapsed / batch, overriddenIterationCost: elapsed };
          };
  bench.add('task', task, { ...(beforeEach === undefined ? {} : { beforeEach }), ...(isAsync === undefined ? {} : { async: isAsync }) });
  await bench.run();
  const result = bench.tasks[0].result;
  if (result.state !== 'completed') throw result.error ?? new Error(`benchmark task ${result.state}`);
  const { latency } = result;
  return {
    median_us: latency.p50 * 1000,
    p75_us: latency.p75 * 1000,
    p99_us: latency.p99 * 1000,
    mean_us: latency.mean * 1000,
    samples: latency.samplesCount,
    batch,
    values_us: (latency.samples ?? []).map((value) => value * 1000),
  };
}

/**
 * Measures several contenders in alternating rounds (A B C A B C ...) and pools each one's
 * samples: slow drift on a shared machine (other work, WAL checkpoints) then hits every
 * contender alike. `contenders` is a list of [key, fn, options].
 */
export async function measureInterleaved(contenders, { rounds = 4, time = 400 } = {}) {
  const pooled = new Map(contenders.map(([key]) => [key, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [key, fn, options] of contenders) {
      const stats = await measure(fn, { time, ...options });
      // A loop, not push(...values): a fast operation yields more samples than a call can take arguments.
      const samples = pooled.get(key);
      for (const value of stats.values_us) samples.push(value);
    }
  }
  return new Map(
    [...pooled].map(([key, values]) => {
      const sorted = values.sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      return [key, { median_us: median(sorted), p75_us: at(0.75), p99_us: at(0.99), mean_us: sorted.reduce((a, b) => a + b, 0) / sorted.length, samples: sorted.length, rounds }];
    }),
  );
}

/** A batch size that makes one sample last about a millisecond (1 for slow calls). */
async function autoBatch(fn) {
  let calls = 0;
  const start = performance.now();
  while (calls < 10_000 && performance.now() - start < 20) {
    await fn();
    calls++;
  }
  const each = (performance.now() - start) / calls;
  return Math.max(1, Math.min(1000, Math.ceil(1 / each)));
}

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
