// Types of report.mjs, for the test that checks its pairing (test/sqlite-cache/read-cache.test.ts).
export interface Target {
  readonly id: string;
  readonly workload: string;
  /** The result id of our figure and of the baseline's. */
  readonly ours: string;
  readonly base: string;
  readonly baseline: string;
  readonly max: number;
  readonly memory?: boolean;
}

export interface Result {
  readonly id: string;
  readonly median_us?: number;
  readonly peak_growth_bytes?: number;
  readonly json_bytes?: number;
  /** Set on the figures a partial run kept from the previous one. */
  readonly carriedOver?: boolean;
}

export const TARGETS: readonly Target[];

/** Evaluates the targets against one run's measurements: `ratio` undefined where none is given. */
export function evaluate(results: readonly Result[]): {
  targets: (Target & { ratio: number | undefined; met: boolean | undefined })[];
  context: { workload: string; ratio: number | undefined }[];
};
