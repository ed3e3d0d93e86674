#!/usr/bin/env node
// The `tool-registry` bin. Everything else lives in program.ts.
import { CliError, EXIT_ERROR, describeError, describeSystemError } from './errors.js';
import { run } from './program.js';

process.stdout.on('error', async (error: NodeJS.ErrnoException) => {
  // `tool-registry list | head` closes the pipe early; that is not an error.
  if (error.code === 'EPIPE') process.exit(0);
  // `export > file` on a full disk: the output is incomplete, and the operator must know it.
  const failure = new CliError('IO_ERROR', `cannot write standard output: ${describeSystemError(error)}`, { cause: error });
  process.stderr.write(`${(await describeError(failure)).lines.join('\n')}\n`);
  process.exit(EXIT_ERROR);
});

// `tool-registry ... 2>&1 | head -1` closes the pipe after the error line: the rest of the
// message (the help) cannot be written, and nobody is left to tell. Unheard, the EPIPE ended
// the process with exit 1, so a usage error (2) looked like a registry error; the exit code stays.
process.stderr.on('error', () => {});

process.exitCode = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
