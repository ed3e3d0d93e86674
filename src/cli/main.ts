#!/usr/bin/env node
// The `tool-registry` bin. Everything else lives in program.ts.
import { watchOutputErrors } from './output-errors.js';
import { run } from './program.js';

// `export > file` on a full disk: the output is incomplete, and the operator must know it;
// `list | head` closing the pipe early is no error (output-errors.ts).
watchOutputErrors();

process.exitCode = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
