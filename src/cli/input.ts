// Reads the JSON a command is given: a file, or `-` for standard input.
import { readFile } from 'node:fs/promises';
import { ValidationError, parseJsonBytes } from '../index.js';
import { CliError, describeSystemError } from './errors.js';

/** What the input is meant to be: text that is not JSON is VALIDATION_FAILED or SNAPSHOT_INVALID. */
export type InputKind = 'spec' | 'snapshot';

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** The name of the input in messages. */
export function inputName(source: string): string {
  return source === '-' ? 'standard input' : source;
}

/**
 * Reads and parses `source` (`-` is standard input).
 * @throws IO_ERROR when it cannot be read; VALIDATION_FAILED (`spec`) or SNAPSHOT_INVALID
 *   (`snapshot`) when it is not JSON, holds a number JavaScript would change (such as
 *   18446744073709551615 or 1e400), or gives a key twice in one object, with the path.
 */
export async function readJsonInput(source: string, kind: InputKind, stdin: NodeJS.ReadableStream): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = source === '-' ? await readAll(stdin) : await readFile(source);
  } catch (error) {
    throw new CliError('IO_ERROR', `cannot read ${inputName(source)}: ${describeSystemError(error)}`, { cause: error });
  }
  return parseJsonBytes(bytes, { name: inputName(source), kind, refuseRepeatedKeys: true });
}

/**
 * Reads `--policy FILE` (`token create`, `mcp`) as every other input: refused, never altered
 * (it was JSON.parse: bytes not UTF-8 became U+FFFD, 1e400 Infinity, a repeated key its last
 * value). Text that is no JSON is a usage error; a number or key it would change is
 * VALIDATION_FAILED naming the place, as a bad field of the policy is.
 * @throws IO_ERROR when it cannot be read
 */
export async function readPolicyFile(file: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new CliError('IO_ERROR', `cannot read the policy file ${file}: ${describeSystemError(error)}`, { cause: error });
  }
  try {
    return parseJsonBytes(bytes, { name: `the policy file ${file}`, refuseRepeatedKeys: true });
  } catch (error) {
    if (error instanceof ValidationError && error.issues.length === 0) throw new CliError('USAGE', error.message, { cause: error });
    throw error;
  }
}
