// Human output (aligned tables, key/value blocks) and JSON output.
import { canonicalJson } from '../index.js';
import type { ChangeEvent, HistoryEntry, ImportStep, LintFinding, ToolRegistration, ToolRegistrySnapshot } from '../index.js';
import { displayWidth } from './display-width.js';
import { escapeControls } from './errors.js';
import type { Progress } from './progress.js';

/**
 * JSON as the command prints it: 2-space indent and a final newline. C1 and bidirectional
 * controls, which JSON may carry raw, are escaped as well (the same value, parsed): raw in a
 * terminal they would act on it (see escapeControls). The indentation's newlines stay.
 */
export function toJson(value: unknown): string {
  return `${escapeControls(JSON.stringify(value, null, 2), '\n')}\n`;
}

/**
 * Control characters would break a table row; they are shown JSON-escaped. A value that is
 * not a string (a row edited by hand so that it breaks the contract) is shown as JSON, so
 * the operator sees it rather than a crash; `verify` names such rows.
 */
export function cell(text: string): string {
  const value: unknown = text;
  if (typeof value !== 'string') return JSON.stringify(value) ?? String(value);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return escapeControls(JSON.stringify(value).slice(1, -1));
  // Only C1 or bidirectional controls: escaped alone, so a cell that is JSON already (`upstream pending`) is not escaped twice.
  return escapeControls(value);
}

/** A version or date as a cell: `-` for null, nothing for absent. */
function nullable(value: string | null | undefined): string {
  if (value === undefined) return '';
  return value === null ? '-' : cell(value);
}

/** Tags as a cell: `-` for none; see `cell` for values that are not what the contract says. */
function tagsCell(tags: readonly string[]): string {
  const value: unknown = tags;
  if (!Array.isArray(value)) return value === undefined ? '-' : cell(value as string);
  return value.length === 0 ? '-' : (value as string[]).map(cell).join(', ');
}

/** A schema as indented JSON (`-` when a hand-edited row has none). */
function schemaBlock(schema: unknown): string {
  return indent(escapeControls(JSON.stringify(schema, null, 2) ?? '-', '\n'), '  ');
}

// Cells are aligned by the columns a terminal gives them (displayWidth, string-width's rules):
// CJK and emoji 2, combining marks and joiners 0, an emoji ZWJ sequence one wide character;
// counting code points misaligned them.

let graphemes: Intl.Segmenter | undefined;

/**
 * `text` in at most `columns` terminal columns: when it is wider, as many whole graphemes as
 * fit before a `…`, so no cut splits a surrogate pair, a base from its marks or an emoji sequence.
 */
export function truncateToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  // Created on first use: the command's other paths never pay for it.
  graphemes ??= new Intl.Segmenter('und', { granularity: 'grapheme' });
  let kept = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const width = displayWidth(segment);
    if (used + width > columns - 1) break;
    kept += segment;
    used += width;
  }
  return `${kept}…`;
}

/** Columns separated by two spaces, each as wide on screen as its widest cell; no trailing spaces. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(displayWidth(header), ...rows.map((row) => displayWidth(row[column] ?? ''))),
  );
  const line = (row: readonly string[]): string =>
    row
      .map((text, column) => text + ' '.repeat((widths[column] ?? 0) - displayWidth(text)))
      .join('  ')
      .trimEnd();
  return [headers, ...rows].map(line).join('\n') + '\n';
}

/** `key: value` lines with the values aligned. */
export function formatFields(fields: readonly (readonly [string, string])[]): string {
  const keyWidth = Math.max(...fields.map(([key]) => displayWidth(key) + 1));
  return fields.map(([key, value]) => `${key}:${' '.repeat(keyWidth - displayWidth(key) - 1)}  ${value}`.trimEnd()).join('\n') + '\n';
}

/** The DEPRECATED cell of `list`: `-`, `yes`, or `yes (sunset …)`. */
function deprecatedCell(registration: ToolRegistration): string {
  const { deprecation } = registration;
  if (deprecation === null) return '-';
  return deprecation.sunset === null ? 'yes' : `yes (sunset ${cell(deprecation.sunset)})`;
}

/** The table of `list`: name, version, enabled, deprecated, created_at, tags. */
export function formatRegistrations(registrations: readonly ToolRegistration[]): string {
  return formatTable(
    ['NAME', 'VERSION', 'ENABLED', 'DEPRECATED', 'CREATED_AT', 'TAGS'],
    registrations.map((registration) => [
      cell(registration.spec.tool_name),
      nullable(registration.spec.version),
      registration.enabled ? 'yes' : 'no',
      deprecatedCell(registration),
      nullable(registration.created_at),
      tagsCell(registration.spec.tags),
    ]),
  );
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n');
}

/** What `get` prints: every field of the registration, schemas as indented JSON. */
export function formatRegistration(registration: ToolRegistration): string {
  const { spec } = registration;
  return (
    formatFields([
      ['name', cell(spec.tool_name)],
      ['version', nullable(spec.version)],
      ['enabled', registration.enabled ? 'yes' : 'no'],
      ['created_at', nullable(registration.created_at)],
      ...(registration.deprecation === null
        ? []
        : ([
            ['deprecated', cell(registration.deprecation.message)],
            ['replacement', nullable(registration.deprecation.replacement)],
            ['sunset', nullable(registration.deprecation.sunset)],
          ] as const)),
      ['description', nullable(spec.description)],
      ['tags', tagsCell(spec.tags)],
    ]) +
    `input_schema:\n${schemaBlock(spec.input_schema)}\n` +
    `output_schema:\n${schemaBlock(spec.output_schema)}\n`
  );
}

/** The plan of `import --dry-run`, one row per tool. */
export function formatPlan(steps: readonly ImportStep[]): string {
  return formatTable(
    ['ACTION', 'NAME', 'AT', 'FROM', 'TO'],
    steps.map((step) => [
      step.action,
      cell(step.tool_name),
      step.path ?? '',
      nullable(step.from_version),
      nullable(step.to_version),
    ]),
  );
}

/**
 * Writes the snapshot tool by tool, so that thousands of tools can show progress; the text
 * is exactly `toJson(snapshot)`.
 */
export function writeSnapshotJson(
  snapshot: ToolRegistrySnapshot,
  write: (text: string) => void,
  progress: Progress,
): void {
  const { tools } = snapshot;
  if (tools.length === 0) {
    write(toJson(snapshot));
    return;
  }
  let chunk = '{\n  "tools": [\n';
  tools.forEach((tool, index) => {
    chunk += indent(escapeControls(JSON.stringify(tool, null, 2), '\n'), '    ') + (index === tools.length - 1 ? '\n' : ',\n');
    if (chunk.length > 1 << 16) {
      write(chunk);
      chunk = '';
    }
    progress.update(`exporting: ${index + 1} / ${tools.length} tools`);
  });
  write(`${chunk}  ]\n}\n`);
}

/** The table of `lint`: one row per finding; a request-level finding shows `(request)` and `-`. */
export function formatFindings(findings: readonly LintFinding[]): string {
  return formatTable(
    ['TOOL', 'PROVIDER', 'SEVERITY', 'RULE', 'PATH', 'MESSAGE'],
    findings.map((found) => [
      found.tool_name === null ? '(request)' : cell(found.tool_name),
      found.provider,
      found.severity,
      found.rule,
      found.path === '' ? '-' : cell(found.path),
      cell(found.message),
    ]),
  );
}
/** The table of `history`: one row per distinct spec, oldest first; CURRENT marks the live one. */
export function formatHistory(entries: readonly HistoryEntry[], currentCanonical: string | undefined): string {
  return formatTable(
    ['VERSION', 'FINGERPRINT', 'FIRST_REGISTERED_AT', 'CURRENT'],
    entries.map((entry) => [
      nullable(entry.spec.version),
      entry.fingerprint.slice(0, 12),
      cell(entry.first_registered_at),
      currentCanonical !== undefined && canonicalJson(entry.spec) === currentCanonical ? 'yes' : '',
    ]),
  );
}

/** What `get NAME --version V` prints: the history entry's fields and schemas. */
export function formatHistoryEntry(entry: HistoryEntry, isCurrent: boolean): string {
  const { spec } = entry;
  return (
    formatFields([
      ['name', cell(spec.tool_name)],
      ['version', nullable(spec.version)],
      ['current', isCurrent ? 'yes' : 'no'],
      ['fingerprint', entry.fingerprint],
      ['first_registered_at', cell(entry.first_registered_at)],
      ['description', nullable(spec.description)],
      ['tags', tagsCell(spec.tags)],
    ]) +
    `input_schema:\n${schemaBlock(spec.input_schema)}\n` +
    `output_schema:\n${schemaBlock(spec.output_schema)}\n`
  );
}

/** The table of `changes`: one row per event. */
export function formatChanges(events: readonly ChangeEvent[]): string {
  return formatTable(
    ['REVISION', 'AT', 'ACTION', 'NAME', 'VERSION'],
    events.map((event) => [String(event.revision), cell(event.at), event.rollback === true ? `${event.action} (rollback)` : event.action, cell(event.tool_name), nullable(event.version)]),
  );
}
