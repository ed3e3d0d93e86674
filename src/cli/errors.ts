// Errors the command itself raises, and how every error is printed: `error CODE: message`
// on one line, then the details (zod issues with their paths) one per line.
// The library is imported only when an error may be one of its own: `--help`, `--version` and
// usage errors start without loading it.
import type { RegistryIssue } from '../index.js';

/** Codes the command adds to the library's. */
/**
 * `LINT_FAILED`: `lint` found an error finding (exit 1). `CHECK_FAILED`: `check` found a spec
 * `register` would refuse (exit 1). `USAGE`: a combination of arguments the command cannot carry out (exit 2, like a usage error).
 */
export type CliErrorCode =
  | 'DATABASE_NOT_FOUND'
  // the library's code, raised by the command when a file it must write cannot be opened for writing
  | 'READ_ONLY'
  | 'IO_ERROR'
  | 'VERIFY_FAILED'
  | 'USAGE'
  | 'LINT_FAILED'
  | 'CHECK_FAILED'
  // the gateway's (`upstream ...`): see GatewayError in src/mcp/gateway/sync.ts; UPSTREAM_EXISTS: `add` of a name taken
  | 'UPSTREAM_EXISTS'
  | 'UPSTREAM_NOT_FOUND'
  | 'UPSTREAM_TOOL_NOT_FOUND'
  | 'UPSTREAM_UNAVAILABLE'
  | 'VARIABLE_MISSING';

/** Exit codes: 0 success, 1 a registry error, 2 a usage error. */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

/** An expected failure of the command: printed without a stack, exit 1. */
export class CliError extends Error {
  readonly code: CliErrorCode;
  /** Printed one per line under the error line, indented. */
  readonly details: readonly string[];

  constructor(code: CliErrorCode, message: string, options: { details?: readonly string[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CliError';
    this.code = code;
    this.details = options.details ?? [];
  }
}

/**
 * Characters a terminal acts on rather than shows: C0 and C1 controls and DEL (escape
 * sequences, CR, backspace, OSC 8 links; U+009B is an 8-bit CSI) and the bidirectional
 * controls (U+202E would show a tool's text reversed; U+2066-U+2069, U+200E/F, U+061C) and
 * U+2028/U+2029. Tool data printed to a terminal must not carry them raw.
 */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One such character as a JSON escape (`\n`, `\u001b`, `\u202e`), so what it was stays visible. */
function escapeControl(char: string): string {
  const short = JSON.stringify(char).slice(1, -1);
  return short.length === 2 ? short : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every terminal control JSON-escaped; `keep` (such as a newline) is left as it is. */
export function escapeControls(text: string, keep = ''): string {
  return text.replace(TERMINAL_CONTROL, (char) => (keep.includes(char) ? char : escapeControl(char)));
}

/** Error messages are printed on one line: a newline inside one would split it. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

/** PROVIDER_INCOMPATIBLE carries lint findings: one line each, `  TOOL PATH: message [rule]`. */
function findingLines(findings: unknown): string[] {
  if (!Array.isArray(findings)) return [];
  return (findings as { tool_name: string | null; path: string; rule: string; message: string }[]).map(
    (found) => `  ${found.tool_name ?? '(request)'} ${found.path === '' ? '-' : found.path}: ${oneLine(found.message)} [${found.rule}]`,
  );
}

function issueLines(issues: readonly RegistryIssue[]): string[] {
  return issues.map((issue) => `  at ${issue.pathText === '' ? '(root)' : issue.pathText}: ${oneLine(issue.message)}`);
}

/** The lines to print on stderr for an error, and its exit code. */
export async function describeError(error: unknown): Promise<{ lines: string[]; exitCode: number }> {
  if (error instanceof CliError) {
    return {
      lines: [`error ${error.code}: ${oneLine(error.message)}`, ...error.details.map((line) => `  ${oneLine(line)}`)].map((line) => escapeControls(line)),
      exitCode: error.code === 'USAGE' ? EXIT_USAGE : EXIT_ERROR,
    };
  }
  // A registry error was thrown by the library, so it is loaded already: this import costs nothing then.
  const { ToolRegistryError } = await import('../index.js');
  if (error instanceof ToolRegistryError) {
    const issues = (error as { issues?: readonly RegistryIssue[] }).issues ?? [];
    return {
      lines: [`error ${error.code}: ${oneLine(error.message)}`, ...issueLines(issues), ...findingLines(error.context.findings)].map((line) => escapeControls(line)),
      exitCode: EXIT_ERROR,
    };
  }
  // A bug or an environment failure we did not foresee: the stack helps whoever reports it.
  const message = error instanceof Error ? error.message : String(error);
  const stack = error instanceof Error && error.stack !== undefined ? error.stack.split('\n').slice(1) : [];
  return { lines: [`error INTERNAL: ${oneLine(message)}`, ...stack].map((line) => escapeControls(line)), exitCode: EXIT_ERROR };
}

/** `ENOENT` -> `no such file or directory (ENOENT)`, for IO_ERROR messages. */
export function describeSystemError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const reasons: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EISDIR: 'it is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on device',
    // A standard output opened for reading only (`1<file`).
    EBADF: 'bad file descriptor',
    EIO: 'input/output error',
    // The reader of a pipe went away (`token create | head -0`).
    EPIPE: 'broken pipe',
  };
  if (typeof code === 'string') return `${reasons[code] ?? (error as Error).message} (${code})`;
  return error instanceof Error ? error.message : String(error);
}
