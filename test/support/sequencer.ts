// The order files start in. Vitest's own order runs the files it has no timings for largest
// first, by bytes: on a fresh clone (CI) that put the conformance runners, three lines each
// but more than a minute to run, last, where they ran side by side after everything else
// had finished (docs/testing.md). These files start first; the rest keep vitest's order.
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/** Small files that run long, longest first (seconds on a quiet 2-core machine, 2026-11-27). */
const LONG_FILES = [
  'test/docs/doc-examples.test.ts', // 80 s: 40 examples, each a process
  'test/conformance/conformance-postgres.test.ts', // 74 s
  'test/conformance/conformance-postgres-nocache.test.ts', // 73 s
  'test/conformance/conformance.test.ts', // 70 s
  'test/conformance/model.test.ts', // 43 s
  'test/cli/demo.test.ts', // 34 s: the demo's 22 processes
];

export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = LONG_FILES.findIndex((path) => file.moduleId.endsWith(path));
      return index < 0 ? LONG_FILES.length : index;
    };
    // Within a project only: vitest runs the projects one after the other.
    const projects = [...new Set(sorted.map((file) => file.project.name))];
    return sorted
      .map((file, position) => ({ file, position }))
      .sort((a, b) => projects.indexOf(a.file.project.name) - projects.indexOf(b.file.project.name) || rank(a.file) - rank(b.file) || a.position - b.position)
      .map(({ file }) => file);
  }
}
