// A server as a child process for a bench step (`tool-registry serve`, or a baseline that
// prints the same line): resolved with its URL once it prints "listening on URL", stopped
// with SIGTERM.
import { spawn } from 'node:child_process';
import { URL, fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * Runs `node ...args` in `cwd` (`env` added to this process's environment) and resolves
 * `{ child, base, stop() }` once it prints "listening on URL" (`base` is that URL).
 */
export async function startListening(args, { cwd, env = {} } = {}) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  const base = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (match !== null) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return { child, base, stop };
}

/** `tool-registry serve --port 0 --no-console ...args` (startListening). */
export function startServe(args, options) {
  return startListening([CLI, 'serve', '--port', '0', '--no-console', ...args], options);
}
