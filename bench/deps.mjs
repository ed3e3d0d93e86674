// Bench-only baselines, installed on demand so that `npm ci` never builds them: Keyv with
// @keyv/sqlite pulls the native `sqlite3` module (minutes of compiling on a fresh machine),
// which only the Keyv comparison of the benchmark needs. `npm run bench` runs this file
// first; it installs the pinned versions into bench/.deps/ (gitignored) when they are
// missing there, and the bench imports them from there with importBaseline().
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';

/** Exact versions, so runs compare like with like (BENCHMARKS.md names them). */
export const BASELINES = { keyv: '5.6.0', '@keyv/sqlite': '4.0.8' };

const FOLDER = fileURLToPath(new URL('./.deps/', import.meta.url));
const MANIFEST = `${FOLDER}package.json`;
const ROOT_MANIFEST = fileURLToPath(new URL('../package.json', import.meta.url));

function installedVersion(name) {
  const file = `${FOLDER}node_modules/${name}/package.json`;
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : undefined;
}

/** The baselines whose pinned version is not installed in bench/.deps/. */
export function missingBaselines() {
  return Object.entries(BASELINES)
    .filter(([name, version]) => installedVersion(name) !== version)
    .map(([name, version]) => `${name}@${version}`);
}

/** Installs what is missing (a no-op when everything is there). */
export function ensureBaselines({ log = (text) => process.stderr.write(`${text}\n`) } = {}) {
  const missing = missingBaselines();
  if (missing.length === 0) return;
  mkdirSync(FOLDER, { recursive: true });
  // A package.json of its own, so npm installs here and not into the project; the project's
  // allowScripts (sqlite3's build script) is carried over.
  const { allowScripts } = JSON.parse(readFileSync(ROOT_MANIFEST, 'utf8'));
  writeFileSync(MANIFEST, `${JSON.stringify({ name: 'tool-registry-bench-deps', private: true, allowScripts }, null, 2)}\n`);
  log(`bench: installing ${missing.join(' ')} into bench/.deps/ (once; sqlite3 may compile for a few minutes)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', ...missing], {
    cwd: FOLDER,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const still = missingBaselines();
  if (still.length > 0) throw new Error(`bench: could not install ${still.join(' ')} into bench/.deps/`);
}

/** Imports a baseline package from bench/.deps/ (its module namespace). */
export async function importBaseline(name) {
  const require = createRequire(MANIFEST);
  return import(pathToFileURL(require.resolve(name)).href);
}

/** The installed versions, for the report. */
export function baselineVersions() {
  return Object.fromEntries(Object.keys(BASELINES).map((name) => [name, installedVersion(name) ?? 'not installed']));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) ensureBaselines();
