// `npm test` after the build: vitest, with the static checks (eslint, and tsc over src/, the
// tests and the console) run beside it rather than before it. Why: eslint and tsc are
// single-threaded, so in a row before vitest they kept one of the two cores busy for about
// 35 s and left the other idle; beside vitest every core stays busy (docs/testing.md). The
// checks run at the lowest priority, so they take what CPU the tests leave.
//
// Every step runs to its end, and the exit status is the first failure's: a lint error does
// not hide a failing test, nor the reverse. A check's output is printed whole when it ends,
// so it never interleaves with vitest's.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { URL, fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url));

const CHECKS = [
  ['lint', 'eslint', ['.']],
  ['typecheck', 'tsc', ['-p', 'tsconfig.check.json']],
  ['typecheck (console)', 'tsc', ['-p', 'tsconfig.console.json']],
];
const CHECK_PRIORITY = 19;

/** Runs a package binary; resolves with its exit code (1 when it could not start). */
function run(bin, args, options) {
  return new Promise((resolve) => {
    const child = spawn(BIN + bin, args, options);
    child.once('error', (error) => {
      console.error(`${bin}: ${error.message}`);
      resolve(1);
    });
    child.once('spawn', () => {
      if (options.priority !== undefined) {
        try {
          setPriority(child.pid, options.priority);
        } catch {
          // Some sandboxes refuse renice: the check then runs at the normal priority.
        }
      }
    });
    child.once('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
    options.onChild?.(child);
  });
}

async function check([name, bin, args]) {
  const chunks = [];
  const started = Date.now();
  const code = await run(bin, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    priority: CHECK_PRIORITY,
    onChild: (child) => {
      child.stdout.on('data', (chunk) => chunks.push(chunk));
      child.stderr.on('data', (chunk) => chunks.push(chunk));
    },
  });
  const output = Buffer.concat(chunks).toString().trimEnd();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\n${code === 0 ? '✓' : '✗'} ${name} (${bin} ${args.join(' ')}): ${code === 0 ? 'passed' : `failed, exit ${code}`} in ${seconds} s`);
  if (output !== '') console.log(output);
  return code;
}

const vitestArgs = ['run', ...process.argv.slice(2)];
const codes = await Promise.all([run('vitest', vitestArgs, { stdio: 'inherit' }), ...CHECKS.map(check)]);
process.exitCode = codes.find((code) => code !== 0) ?? 0;
