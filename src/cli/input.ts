// Reads the JSON a command is given: a file, or `-` for standard input.
import { readFile } from 'node:fs/promises';
import { SnapshotInvalidError, ValidationError, inexactNumberIssues } from '../index.js';
import type { RegistryIssue } from '../index.js';
import { CliError, describeSystemError } from './errors.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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
 *   (`snapshot`) when it is not JSON, or holds a number JavaScript would change (such as
 *   18446744073709551615 or 1e400), with the number's path.
 */
export async function readJsonInput(source: string, kind: InputKind, stdin: NodeJS.ReadableStream): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = source === '-' ? await readAll(stdin) : await readFile(source);
  } catch (error) {
    throw new CliError('IO_ERROR', `cannot read ${inputName(source)}: ${describeSystemError(error)}`, { cause: error });
  }
  // JSON text is UTF-8 (RFC 8259). A lenient decode would store U+FFFD in place of every byte
  // that is not (a file saved as Windows-1252 or UTF-16): refused instead.
  let decoded: string;
  try {
    decoded = UTF8.decode(bytes);
  } catch {
    const message = `${inputName(source)} is not UTF-8 text (JSON must be); save it as UTF-8`;
    throw kind === 'spec' ? new ValidationError(message, []) : new SnapshotInvalidError(message, []);
  }
  // Editors on Windows like to start UTF-8 files with a byte-order mark; JSON.parse does not.
  const text = decoded.replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const reason = text.trim() === '' ? 'it is empty' : (error as Error).message;
    const message = `${inputName(source)} is not JSON: ${reason}`;
    throw kind === 'spec' ? new ValidationError(message, []) : new SnapshotInvalidError(message, []);
  }
  const issues = inexactNumberIssues(text);
  if (issues.length > 0) {
    const first = issues[0] as RegistryIssue;
    const message = `${inputName(source)}: ${first.pathText}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`;
    const context = { path: first.pathText };
    throw kind === 'spec' ? new ValidationError(message, issues, context) : new SnapshotInvalidError(message, issues, context);
  }
  return value;
}
