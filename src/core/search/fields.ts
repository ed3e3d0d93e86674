// What of a spec is searched, field by field, and how much each field weighs.
import type { ToolSpec } from '../contracts.js';
import { tokenize } from './tokens.js';

/** The searched fields, in the order their term counts are packed. */
export const FIELDS = ['name', 'description', 'tags', 'parameters', 'parameter_descriptions'] as const;
export type SearchField = (typeof FIELDS)[number];

/**
 * BM25F per field: `weight` multiplies the field's (length-normalised) term frequency,
 * `b` is how much the field's length normalises it. A name or a tag says what the tool is
 * in a word or two, so its terms weigh most and its length hardly matters; a description
 * is prose. Chosen from what the fields are, not fitted to a benchmark (docs/search.md).
 */
export const FIELD_WEIGHTS: Readonly<Record<SearchField, { readonly weight: number; readonly b: number }>> = Object.freeze({
  name: { weight: 3, b: 0.3 },
  description: { weight: 1, b: 0.75 },
  tags: { weight: 2, b: 0.3 },
  parameters: { weight: 1.5, b: 0.5 },
  parameter_descriptions: { weight: 0.5, b: 0.75 },
});

/** At most this many schema nodes are read for terms (a huge schema stays cheap to index). */
const MAX_SCHEMA_NODES = 500;

/** Property names and the descriptions/titles of the input schema's nodes, depth first. */
function schemaText(schema: unknown): { names: string[]; descriptions: string[] } {
  const names: string[] = [];
  const descriptions: string[] = [];
  const stack: unknown[] = [schema];
  let seen = 0;
  while (stack.length > 0 && seen < MAX_SCHEMA_NODES) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    seen++;
    if (Array.isArray(node)) {
      for (let index = node.length - 1; index >= 0; index--) stack.push(node[index]);
      continue;
    }
    const object = node as Record<string, unknown>;
    if (typeof object.description === 'string') descriptions.push(object.description);
    if (typeof object.title === 'string') descriptions.push(object.title);
    const properties = object.properties;
    if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
      const keys = Object.keys(properties);
      names.push(...keys);
      for (let index = keys.length - 1; index >= 0; index--) stack.push((properties as Record<string, unknown>)[keys[index] as string]);
    }
    for (const key of ['items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'additionalProperties', '$defs', 'definitions']) {
      const child = object[key];
      if (key === '$defs' || key === 'definitions') {
        if (typeof child === 'object' && child !== null) stack.push(...Object.values(child));
      } else if (child !== undefined) {
        stack.push(child);
      }
    }
  }
  return { names, descriptions };
}

/** The terms of each field of a spec, in `FIELDS` order. */
export function specTerms(spec: Pick<ToolSpec, 'tool_name' | 'description' | 'tags' | 'input_schema'>): string[][] {
  const { names, descriptions } = schemaText(spec.input_schema);
  return [
    // Stop words are kept (as stop terms) where a word names the tool, never in prose.
    tokenize(spec.tool_name, { stopWords: 'mark' }),
    tokenize(spec.description ?? '', { identifiers: false, stopWords: 'drop' }),
    tokenize(spec.tags.join(' '), { stopWords: 'mark' }),
    tokenize(names.join(' '), { stopWords: 'mark' }),
    tokenize(descriptions.join(' '), { identifiers: false, stopWords: 'drop' }),
  ];
}

/** The text an embedder is given for a spec: what a person would read to choose it. */
export function embeddingText(spec: Pick<ToolSpec, 'tool_name' | 'description' | 'tags' | 'input_schema'>): string {
  const { names } = schemaText(spec.input_schema);
  const parts = [spec.tool_name, spec.description ?? ''];
  if (spec.tags.length > 0) parts.push(`tags: ${spec.tags.join(', ')}`);
  if (names.length > 0) parts.push(`parameters: ${names.join(', ')}`);
  return parts.filter((part) => part !== '').join('\n');
}
