// `npm test` after the build: vitest, with the static checks (`npm run lint` and `npm run
// typecheck`, as package.json defines them) run beside it rather than before it. Why: tsc is
// single-threaded, so in a row before vitest it kept one of the two cores busy and left the
// other idle; beside vitest every core stays busy (docs/testing.md). The checks run at the
// lowest priority, so they take what CPU the tests leave.
//
// Every step runs to its end, and the exit status is the first failure's: a lint error does
// not hide a failing test, nor the reverse. A check's output is printed whole when it ends,
// so it never interleaves with vitest's.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { URL, fileURLToPath } from 'node:url';

const VITEST = fileURLToPath(new URL('../node_modules/.bin/vitest', import.meta.url));
const CHECKS = ['lint', 'typecheck'];
const CHECK_PRIORITY = 19;

/** Runs a command; resolves with its exit code (1 when it could not start). */
function run(command, args, stdio, started = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio });
    child.once('error', (error) => {
      console.error(`${command}: ${error.message}`);
      resolve(1);
    });
    child.once('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
    started(child);
  });
}

async function check(script) {
  const chunks = [];
  const began = Date.now();
  const code = await run('npm', ['run', '--silent', script], ['ignore', 'pipe', 'pipe'], (child) => {
    child.once('spawn', () => {
      try {
        // The priority is inherited by what npm starts (oxlint, tsc).
        setPriority(child.pid, CHECK_PRIORITY);
      } catch {
        // Some sandboxes refuse renice: the check then runs at the normal priority.
      }
    });
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
  });
  const output = Buffer.concat(chunks).toString().trimEnd();
  const seconds = ((Date.now() - began) / 1000).toFixed(1);
  console.log(`\n${code === 0 ? '✓' : '✗'} npm run ${script}: ${code === 0 ? 'passed' : `failed, exit ${code}`} in ${seconds} s`);
  if (output !== '') console.log(output);
  return code;
}

const codes = await Promise.all([run(VITEST, ['run', ...process.argv.slice(2)], 'inherit'), ...CHECKS.map(check)]);
process.exitCode = codes.find((code) => code !== 0) ?? 0;
