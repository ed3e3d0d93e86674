// Many tests run the BUILT package (dist/) in child processes: the CLI, the worker processes,
// the doc examples. So that they never test stale code after an edit of src/, the run first
// builds dist/ whenever any source file is newer than its output (npm test's pretest build
// makes this a no-op there).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The source files whose compiled output is missing or older than they are. */
export function staleSources(root = ROOT): string[] {
  const src = join(root, 'src');
  const stale = sources(src).filter((file) => {
    const output = join(root, 'dist', relative(src, file).replace(/\.ts$/, '.js'));
    return !existsSync(output) || statSync(output).mtimeMs < statSync(file).mtimeMs;
  });
  // Not compiled from src/: the meta-schema validator the build writes (Anthropic's schema-invalid rule
  // loads it). Only a missing one is stale: the build itself rewrites one its script or ajv would change.
  if (!existsSync(join(root, 'dist', 'exports', 'json-schema-2020-12.cjs'))) stale.push(join(root, 'scripts', 'json-schema-2020-12.mjs'));
  return stale;
}

export default function setup(): void {
  const stale = staleSources();
  if (stale.length === 0) return;
  process.stderr.write(`building dist/ first: ${stale.length} source file(s) are newer than their output\n`);
  // The package's own build (tsc, then the bundles), so that its steps are written down once.
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}
