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

process.exitCode = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
