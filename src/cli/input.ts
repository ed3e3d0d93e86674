// Reads the JSON a command is given: a file, or `-` for standard input.
import { open } from 'node:fs/promises';
import { constants } from 'node:buffer';
import { ValidationError, parseJsonBytes } from '../index.js';
import { CliError, describeSystemError } from './errors.js';

/** What the input is meant to be: text that is not JSON is VALIDATION_FAILED or SNAPSHOT_INVALID. */
export type InputKind = 'spec' | 'snapshot';

/**
 * The largest input read: the longest string JavaScript holds (UTF-8 never takes fewer bytes
 * than UTF-16 code units, so an input this size always fits). A longer file was read whole,
 * failed in the decoder and was called "not UTF-8 text" after a 10 s scan for a bad byte.
 * (src/server/tokens.ts bounds the token file the same way.)
 */
const MAX_TEXT_BYTES = constants.MAX_STRING_LENGTH;

/** `NAME is too large: SIZE bytes, over the limit of ...`; `size` undefined: a stream, read until past the limit. */
function tooLargeMessage(name: string, size: number | undefined): string {
  return `${name} is too large: ${size === undefined ? '' : `${size} bytes, `}over the limit of ${MAX_TEXT_BYTES} bytes (the longest string JavaScript holds)`;
}

/** Thrown by `readAll` past MAX_TEXT_BYTES: reading on would only fail later. */
class TooLarge extends Error {}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    size += (chunks.at(-1) as Buffer).length;
    if (size > MAX_TEXT_BYTES) throw new TooLarge();
  }
  return Buffer.concat(chunks);
}

/**
 * The bytes of `file`, refused by its size before any is read when it is too large for one
 * string (a FIFO or a device has no size: refused once that much has been read).
 * @throws IO_ERROR naming the file, its size and the limit; errors of `open` and `read` as they are
 */
async function readFileBounded(file: string, name: string): Promise<Buffer> {
  const handle = await open(file);
  try {
    const info = await handle.stat();
    if (info.size > MAX_TEXT_BYTES) throw new CliError('IO_ERROR', tooLargeMessage(name, info.size));
    // A regular file in one read of its size (as before); a FIFO or a device as a stream, counted.
    return info.isFile() ? await handle.readFile() : await readAll(handle.createReadStream({ autoClose: false }));
  } finally {
    await handle.close();
  }
}

/** Reads `source` (with `stdin`, `-` is standard input); `name` is what messages call it. @throws IO_ERROR */
async function readInputBytes(source: string, name: string, stdin?: NodeJS.ReadableStream): Promise<Buffer> {
  try {
    return source === '-' && stdin !== undefined ? await readAll(stdin) : await readFileBounded(source, name);
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (error instanceof TooLarge) throw new CliError('IO_ERROR', tooLargeMessage(name, undefined));
    throw new CliError('IO_ERROR', `cannot read ${name}: ${describeSystemError(error)}`, { cause: error });
  }
}

/** The name of the input in messages. */
export function inputName(source: string): string {
  return source === '-' ? 'standard input' : source;
}

/**
 * Reads and parses `source` (`-` is standard input).
 * @throws IO_ERROR when it cannot be read or is too large for one string; VALIDATION_FAILED (`spec`) or SNAPSHOT_INVALID
 *   (`snapshot`) when it is not JSON, holds a number JavaScript would change (such as
 *   18446744073709551615 or 1e400), or gives a key twice in one object, with the path.
 */
export async function readJsonInput(source: string, kind: InputKind, stdin: NodeJS.ReadableStream): Promise<unknown> {
  const bytes = await readInputBytes(source, inputName(source), stdin);
  return parseJsonBytes(bytes, { name: inputName(source), kind, refuseRepeatedKeys: true });
}

/**
 * Reads `--policy FILE` (`token create`, `mcp`) as every other input: refused, never altered
 * (it was JSON.parse: bytes not UTF-8 became U+FFFD, 1e400 Infinity, a repeated key its last
 * value). Text that is no JSON is a usage error; a number or key it would change is
 * VALIDATION_FAILED naming the place, as a bad field of the policy is.
 * @throws IO_ERROR when it cannot be read or is too large for one string
 */
export async function readPolicyFile(file: string): Promise<unknown> {
  const bytes = await readInputBytes(file, `the policy file ${file}`);
  try {
    return parseJsonBytes(bytes, { name: `the policy file ${file}`, refuseRepeatedKeys: true });
  } catch (error) {
    if (error instanceof ValidationError && error.issues.length === 0) throw new CliError('USAGE', error.message, { cause: error });
    throw error;
  }
}
