// A JSON Schema shown readably: one row per property (nested ones by dotted path), with its
// type, whether it is required, its description and its constraints.
import { box, h, text, visibleControls } from './dom.js';

const CONSTRAINTS = ['format', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems'];
const MAX_DEPTH = 8;

function typeOf(schema) {
  if (schema === true || schema === undefined) return 'any';
  if (schema === false) return 'nothing';
  if (typeof schema !== 'object' || schema === null) return 'any';
  if (schema.const !== undefined) return `constant ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (typeof schema.type === 'string') {
    if (schema.type === 'array') return `array of ${typeOf(schema.items)}`;
    return schema.type;
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(schema[key])) return schema[key].map(typeOf).join(key === 'allOf' ? ' & ' : ' | ');
  }
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop();
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema.properties) return 'object';
  return 'any';
}

function details(schema) {
  if (typeof schema !== 'object' || schema === null) return [];
  const parts = [];
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`);
  for (const key of CONSTRAINTS) if (schema[key] !== undefined) parts.push(`${key} ${JSON.stringify(schema[key])}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts;
}

function rows(schema, prefix, depth, out) {
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    out.push({ path, type: typeOf(property), required: required.has(name), description: property?.description ?? '', details: details(property) });
    rows(property, path, depth + 1, out);
    if (property && typeof property === 'object' && property.type === 'array') rows(property.items, `${path}[]`, depth + 1, out);
  }
}

/** A section for one schema: a summary line and a table of its properties. */
export function schemaView(title, schema, id) {
  const list = [];
  rows(schema, '', 0, list);
  const summary = [`Type: `, text(visibleControls(typeOf(schema)))];
  if (schema && typeof schema === 'object') {
    if (schema.additionalProperties === false) summary.push(' · no other properties allowed');
    if (typeof schema.description === 'string') summary.push(' · ', text(schema.description));
  }
  const table = list.length === 0
    ? h('p', {}, 'No properties declared.')
    : box(h('table', { class: 'schema stack' },
      h('caption', {}, `${title}: properties`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Property'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Required'), h('th', { scope: 'col' }, 'Description'))),
      h('tbody', {}, list.map((row) => h('tr', {},
        // Names and JSON values joined into one text: a U+202E in one would reverse the next ones, so controls show as escapes.
        h('th', { scope: 'row' }, h('code', {}, text(visibleControls(row.path)))),
        h('td', { 'data-label': 'Type' }, text(visibleControls(row.type)), row.details.length > 0 ? h('span', { class: 'muted' }, ' (', text(visibleControls(row.details.join('; '))), ')') : null),
        h('td', { 'data-label': 'Required' }, row.required ? 'required' : 'optional'),
        h('td', { 'data-label': 'Description' }, text(row.description)),
      )))));
  return h('section', { 'aria-labelledby': id },
    h('h3', { id }, title),
    h('p', {}, summary),
    table);
}
