// compareSchemas: a table of schema pairs, each with the verdict and the differences the JSON
// Schema specification (draft 2020-12, Validation and Core; draft-07 where it differs) makes
// the answer: does `after` accept every instance `before` accepted? One test per pair.
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compareSchemas, compareToolSchemas, InMemoryToolRegistry, SCHEMA_DIFFERENCE_TYPES } from '../../src/index.js';
import type { JsonObject } from '../../src/core/contracts.js';
import { compileSchema } from '../../src/runtime/schema-validator.js';

type Breaking = boolean | 'undecidable';
/** [what, before, after, compatible, [type, path, breaking][]] */
type Pair = [string, unknown, unknown, boolean, [string, string, Breaking][]];

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });
const closed = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => obj(properties, { additionalProperties: false, ...extra });

const D07 = 'http://json-schema.org/draft-07/schema#';

const PAIRS: Pair[] = [
  // --- identity and boolean schemas (2020-12 §4.3.2) ---
  ['identical schemas', obj({ a: { type: 'string' } }), obj({ a: { type: 'string' } }), true, []],
  ['same schema, other key order', { type: 'string', minLength: 1 }, { minLength: 1, type: 'string' }, true, []],
  ['true to {}', true, {}, true, []],
  ['false to true', false, true, true, [['schema-changed', '', false]]],
  ['true to false', true, false, false, [['schema-changed', '', true]]],
  ['a schema to true', { type: 'string' }, true, true, [['schema-changed', '', false]]],
  ['true to a typed schema', true, { type: 'string' }, false, [['type-removed', '/type', true]]],
  ['a schema to false', { type: 'string' }, false, false, [['schema-changed', '', true]]],
  ['false to a schema', false, { type: 'number' }, true, [['schema-changed', '', false]]],
  // --- type (Validation §6.1.1) ---
  ['string to number', { type: 'string' }, { type: 'number' }, false, [['type-removed', '/type', true], ['type-added', '/type', false]]],
  ['string to [string, null]', { type: 'string' }, { type: ['string', 'null'] }, true, [['type-added', '/type', false]]],
  ['[string, null] to string', { type: ['string', 'null'] }, { type: 'string' }, false, [['type-removed', '/type', true]]],
  ['integer to number (integers are numbers)', { type: 'integer' }, { type: 'number' }, true, [['type-added', '/type', false]]],
  ['number to integer', { type: 'number' }, { type: 'integer' }, false, [['type-removed', '/type', true]]],
  ['no type to object', {}, { type: 'object' }, false, [['type-removed', '/type', true]]],
  ['object to no type', { type: 'object' }, {}, true, [['schema-changed','',false]]],
  ['type list reordered', { type: ['null', 'string'] }, { type: ['string', 'null'] }, true, []],
  ['[number, integer] to number', { type: ['number', 'integer'] }, { type: 'number' }, true, []],
  ['boolean to [boolean, string]', { type: 'boolean' }, { type: ['boolean', 'string'] }, true, [['type-added', '/type', false]]],
  ['array to object', { type: 'array' }, { type: 'object' }, false, [['type-removed', '/type', true], ['type-added', '/type', false]]],
  // --- properties (§10.3.2.1) and additionalProperties (§10.3.2.3) ---
  ['property added to a closed object', closed({ a: { type: 'string' } }), closed({ a: { type: 'string' }, b: { type: 'number' } }), true, [['property-added', '/properties/b', false]]],
  ['property added to an open object narrows what b may hold', obj({ a: { type: 'string' } }), obj({ a: { type: 'string' }, b: { type: 'number' } }), false, [['property-added', '/properties/b', true]]],
  ['property added to an open object with an empty schema', obj({}), obj({ b: {} }), true, [['property-added', '/properties/b', false]]],
  ['property added to an open object with true', obj({}), obj({ b: true }), true, [['property-added', '/properties/b', false]]],
  ['property removed from an open object', obj({ a: { type: 'string' }, b: { type: 'number' } }), obj({ a: { type: 'string' } }), true, [['property-removed', '/properties/b', false]]],
  ['property removed from a closed object', closed({ a: { type: 'string' }, b: { type: 'number' } }), closed({ a: { type: 'string' } }), false, [['property-removed', '/properties/b', true]]],
  ['property added where additionalProperties is a wider schema', obj({}, { additionalProperties: { type: ['string', 'number'] } }), obj({ b: { type: 'string' } }, { additionalProperties: { type: ['string', 'number'] } }), false, [['property-added', '/properties/b', true]]],
  ['property added where additionalProperties is the same schema', obj({}, { additionalProperties: { type: 'string' } }), obj({ b: { type: 'string' } }, { additionalProperties: { type: 'string' } }), true, [['property-added', '/properties/b', false]]],
  ['property type widened', obj({ a: { type: 'string' } }), obj({ a: { type: ['string', 'null'] } }), true, [['type-added', '/properties/a/type', false]]],
  ['property type narrowed', obj({ a: { type: ['string', 'null'] } }), obj({ a: { type: 'string' } }), false, [['type-removed', '/properties/a/type', true]]],
  ['additionalProperties true to false', obj({ a: {} }), obj({ a: {} }, { additionalProperties: false }), false, [['additional-properties-changed', '/additionalProperties', true]]],
  ['additionalProperties false to true', closed({ a: {} }), obj({ a: {} }), true, [['additional-properties-changed', '/additionalProperties', false]]],
  ['additionalProperties absent to true', obj({}), obj({}, { additionalProperties: true }), true, []],
  ['additionalProperties schema narrowed', obj({}, { additionalProperties: { type: ['string', 'null'] } }), obj({}, { additionalProperties: { type: 'string' } }), false, [['additional-properties-changed', '/additionalProperties', true]]],
  ['additionalProperties schema widened', obj({}, { additionalProperties: { type: 'string' } }), obj({}, { additionalProperties: {} }), true, [['additional-properties-changed', '/additionalProperties', false]]],
  ['additionalProperties false to a schema', closed({}), obj({}, { additionalProperties: { type: 'string' } }), true, [['additional-properties-changed', '/additionalProperties', false]]],
  ['a property name with / and ~ in the pointer', obj({ 'a/b~c': { type: 'string' } }), obj({ 'a/b~c': { type: 'number' } }), false, [['type-removed', '/properties/a~1b~0c/type', true], ['type-added', '/properties/a~1b~0c/type', false]]],
  ['patternProperties value narrowed', obj({}, { patternProperties: { '^x': { type: 'string' } } }), obj({}, { patternProperties: { '^x': { type: 'number' } } }), false, [['type-removed','/patternProperties/^x/type',true],['type-added','/patternProperties/^x/type',false]]],
  ['property added beside patternProperties', obj({}, { patternProperties: { '^x': {} } }), obj({ xa: { type: 'string' } }, { patternProperties: { '^x': {} } }), false, [['property-added','/properties/xa',true]]],
  // --- required (§6.5.3) ---
  ['required added', obj({ a: { type: 'string' } }), obj({ a: { type: 'string' } }, { required: ['a'] }), false, [['required-added', '/required', true]]],
  ['required removed', obj({ a: { type: 'string' } }, { required: ['a'] }), obj({ a: { type: 'string' } }), true, [['required-removed', '/required', false]]],
  ['required reordered', obj({ a: {}, b: {} }, { required: ['a', 'b'] }), obj({ a: {}, b: {} }, { required: ['b', 'a'] }), true, []],
  ['one required swapped for another', obj({ a: {}, b: {} }, { required: ['a'] }), obj({ a: {}, b: {} }, { required: ['b'] }), false, [['required-added', '/required', true], ['required-removed', '/required', false]]],
  ['required added with a new optional property on a closed object', closed({ a: {} }), closed({ a: {}, b: {} }, { required: ['b'] }), false, [['property-added', '/properties/b', false], ['required-added', '/required', true]]],
  // --- enum (§6.1.2) and const (§6.1.3) ---
  ['enum widened', { enum: ['a', 'b'] }, { enum: ['a', 'b', 'c'] }, true, [['enum-value-added', '/enum', false]]],
  ['enum narrowed', { enum: ['a', 'b', 'c'] }, { enum: ['a', 'b'] }, false, [['enum-value-removed', '/enum', true]]],
  ['enum reordered', { enum: ['a', 'b'] }, { enum: ['b', 'a'] }, true, []],
  ['enum added', { type: 'string' }, { type: 'string', enum: ['a'] }, false, [['enum-added', '/enum', true]]],
  ['enum removed', { type: 'string', enum: ['a'] }, { type: 'string' }, true, [['enum-removed', '/enum', false]]],
  ['enum value swapped', { enum: [1, 2] }, { enum: [1, 3] }, false, [['enum-value-removed', '/enum', true], ['enum-value-added', '/enum', false]]],
  ['enum of objects compared as JSON', { enum: [{ a: 1, b: 2 }] }, { enum: [{ b: 2, a: 1 }] }, true, []],
  ['const changed', { const: 'a' }, { const: 'b' }, false, [['const-changed', '/const', true]]],
  ['const added', { type: 'string' }, { type: 'string', const: 'x' }, false, [['const-added', '/const', true]]],
  ['const removed', { type: 'string', const: 'x' }, { type: 'string' }, true, [['const-removed', '/const', false]]],
  ['const to an enum holding it', { const: 'a' }, { enum: ['a', 'b'] }, true, [['enum-value-added', '/enum', false]]],
  ['enum to a const it held', { enum: ['a', 'b'] }, { const: 'a' }, false, [['enum-value-removed', '/const', true]]],
  ['const null kept', { const: null }, { const: null }, true, []],
  ['enum of integers to type integer', { enum: [1, 2] }, { type: 'integer' }, true, [['enum-removed', '/enum', false]]],
  ['enum with a string to type integer', { enum: [1, 'a'] }, { type: 'integer' }, false, [['enum-value-removed','/enum',true],['enum-removed','/enum',false]]],
  // --- numeric bounds (§6.2) ---
  ['maximum lowered', { type: 'number', maximum: 10 }, { type: 'number', maximum: 5 }, false, [['bound-tightened', '/maximum', true]]],
  ['maximum raised', { type: 'number', maximum: 5 }, { type: 'number', maximum: 10 }, true, [['bound-loosened', '/maximum', false]]],
  ['maximum added', { type: 'number' }, { type: 'number', maximum: 10 }, false, [['bound-tightened', '/maximum', true]]],
  ['maximum removed', { type: 'number', maximum: 10 }, { type: 'number' }, true, [['bound-loosened', '/maximum', false]]],
  ['minimum raised', { type: 'integer', minimum: 0 }, { type: 'integer', minimum: 1 }, false, [['bound-tightened', '/minimum', true]]],
  ['minimum lowered', { type: 'integer', minimum: 1 }, { type: 'integer', minimum: 0 }, true, [['bound-loosened', '/minimum', false]]],
  ['exclusiveMinimum added (draft 2020-12 and draft-07: a number)', { type: 'number' }, { type: 'number', exclusiveMinimum: 0 }, false, [['bound-tightened', '/exclusiveMinimum', true]]],
  ['exclusiveMaximum raised', { type: 'number', exclusiveMaximum: 1 }, { type: 'number', exclusiveMaximum: 2 }, true, [['bound-loosened', '/exclusiveMaximum', false]]],
  ['exclusiveMinimum as a draft-04 boolean is undecidable', { type: 'number', minimum: 0 }, { type: 'number', minimum: 0, exclusiveMinimum: true }, false, [['keyword-changed', '/exclusiveMinimum', 'undecidable']]],
  ['multipleOf 4 to 2 (every multiple of 4 is one of 2)', { type: 'integer', multipleOf: 4 }, { type: 'integer', multipleOf: 2 }, true, [['multiple-of-changed', '/multipleOf', false]]],
  ['multipleOf 2 to 4', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 4 }, false, [['multiple-of-changed', '/multipleOf', true]]],
  ['multipleOf 2 to 3', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 3 }, false, [['multiple-of-changed', '/multipleOf', true]]],
  ['multipleOf added', { type: 'number' }, { type: 'number', multipleOf: 0.5 }, false, [['multiple-of-changed', '/multipleOf', true]]],
  ['multipleOf removed', { type: 'number', multipleOf: 0.5 }, { type: 'number' }, true, [['multiple-of-changed', '/multipleOf', false]]],
  ['a numeric bound on a string schema does not apply', { type: 'string' }, { type: 'string', maximum: 3 }, true, []],
  // --- string bounds (§6.3) ---
  ['maxLength lowered', { type: 'string', maxLength: 10 }, { type: 'string', maxLength: 5 }, false, [['bound-tightened', '/maxLength', true]]],
  ['maxLength raised', { type: 'string', maxLength: 5 }, { type: 'string', maxLength: 10 }, true, [['bound-loosened', '/maxLength', false]]],
  ['minLength added', { type: 'string' }, { type: 'string', minLength: 1 }, false, [['bound-tightened', '/minLength', true]]],
  ['minLength removed', { type: 'string', minLength: 1 }, { type: 'string' }, true, [['bound-loosened', '/minLength', false]]],
  ['pattern changed is undecidable', { type: 'string', pattern: '^a' }, { type: 'string', pattern: '^[ab]' }, false, [['pattern-changed', '/pattern', 'undecidable']]],
  ['pattern added', { type: 'string' }, { type: 'string', pattern: '^a' }, false, [['pattern-added', '/pattern', true]]],
  ['pattern removed', { type: 'string', pattern: '^a' }, { type: 'string' }, true, [['pattern-removed', '/pattern', false]]],
  ['format added', { type: 'string' }, { type: 'string', format: 'email' }, false, [['format-added', '/format', true]]],
  ['format changed is undecidable', { type: 'string', format: 'date' }, { type: 'string', format: 'date-time' }, false, [['format-changed', '/format', 'undecidable']]],
  ['format removed', { type: 'string', format: 'uri' }, { type: 'string' }, true, [['format-removed', '/format', false]]],
  // --- arrays: items (2020-12 §10.3.1.2), prefixItems (§10.3.1.1), draft-07 tuples ---
  ['items type narrowed', { type: 'array', items: { type: ['string', 'number'] } }, { type: 'array', items: { type: 'string' } }, false, [['type-removed', '/items/type', true]]],
  ['items type widened', { type: 'array', items: { type: 'string' } }, { type: 'array', items: { type: ['string', 'number'] } }, true, [['type-added', '/items/type', false]]],
  ['items added', { type: 'array' }, { type: 'array', items: { type: 'string' } }, false, [['items-changed', '/items', true]]],
  ['items removed', { type: 'array', items: { type: 'string' } }, { type: 'array' }, true, [['items-changed', '/items', false]]],
  ['maxItems lowered', { type: 'array', maxItems: 3 }, { type: 'array', maxItems: 2 }, false, [['bound-tightened', '/maxItems', true]]],
  ['minItems lowered', { type: 'array', minItems: 2 }, { type: 'array', minItems: 1 }, true, [['bound-loosened', '/minItems', false]]],
  ['uniqueItems added', { type: 'array' }, { type: 'array', uniqueItems: true }, false, [['unique-items-added', '/uniqueItems', true]]],
  ['uniqueItems removed', { type: 'array', uniqueItems: true }, { type: 'array' }, true, [['unique-items-removed', '/uniqueItems', false]]],
  ['prefixItems item narrowed (2020-12)', { type: 'array', prefixItems: [{ type: ['string', 'null'] }] }, { type: 'array', prefixItems: [{ type: 'string' }] }, false, [['type-removed', '/prefixItems/0/type', true]]],
  ['draft-07 tuple item widened', { $schema: D07, type: 'array', items: [{ type: 'string' }] }, { $schema: D07, type: 'array', items: [{ type: ['string', 'null'] }] }, true, [['type-added', '/items/0/type', false]]],
  ['draft-07 additionalItems false added', { $schema: D07, type: 'array', items: [{ type: 'string' }] }, { $schema: D07, type: 'array', items: [{ type: 'string' }], additionalItems: false }, false, [['items-changed', '/additionalItems', true]]],
  ['2020-12 items false after prefixItems', { type: 'array', prefixItems: [{}] }, { type: 'array', prefixItems: [{}], items: false }, false, [['items-changed', '/items', true]]],
  ['nested array of objects, property narrowed', { type: 'array', items: obj({ n: { type: 'number' } }) }, { type: 'array', items: obj({ n: { type: 'integer' } }) }, false, [['type-removed', '/items/properties/n/type', true]]],
  ['contains added', { type: 'array' }, { type: 'array', contains: { type: 'string' } }, false, [['keyword-changed', '/contains', true]]],
  // --- anyOf / oneOf / allOf (§10.2.1) and not (§10.2.1.4) ---
  ['anyOf branch added', { anyOf: [{ type: 'string' }] }, { anyOf: [{ type: 'string' }, { type: 'number' }] }, true, [['type-added','/type',false]]],
  ['anyOf branch removed (anyOf of types: a type array)', { anyOf: [{ type: 'string' }, { type: 'number' }] }, { anyOf: [{ type: 'string' }] }, false, [['type-removed','/type',true]]],
  ['anyOf branches reordered', { anyOf: [{ type: 'string' }, { type: 'number' }] }, { anyOf: [{ type: 'number' }, { type: 'string' }] }, true, []],
  ['anyOf branch removed but covered by another', { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'string' }] }, { anyOf: [{ type: 'string' }] }, true, [['branch-removed','/anyOf',false]]],
  ['anyOf branch narrowed', { anyOf: [{ type: 'string' }, { type: 'number' }] }, { anyOf: [{ type: 'string', maxLength: 2 }, { type: 'number' }] }, false, [['bound-tightened','/maxLength',true]]],
  ['allOf branch added', { allOf: [{ type: 'object' }] }, { allOf: [{ type: 'object' }, { required: ['a'] }] }, false, [['required-added','/required',true]]],
  ['allOf branch removed', { allOf: [{ type: 'object' }, { required: ['a'] }] }, { allOf: [{ type: 'object' }] }, true, [['required-removed','/required',false]]],
  ['allOf added around the same schema', { type: 'string' }, { type: 'string', allOf: [{ minLength: 1 }] }, false, [['bound-tightened','/minLength',true]]],
  ['oneOf of disjoint types gains a disjoint branch', { oneOf: [{ type: 'string' }, { type: 'number' }] }, { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] }, true, [['type-added','/type',false]]],
  ['oneOf gains an overlapping branch (a value may match two)', { oneOf: [{ type: 'string' }, { type: 'number' }] }, { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'string', minLength: 1 }] }, false, [['branch-added','/oneOf',true]]],
  ['oneOf with a discriminator gains a variant', { oneOf: [obj({ kind: { const: 'a' } }, { required: ['kind'] })] }, { oneOf: [obj({ kind: { const: 'a' } }, { required: ['kind'] }), obj({ kind: { const: 'b' } }, { required: ['kind'] })] }, true, [['branch-added','/oneOf',false]]],
  ['oneOf removed', { oneOf: [{ type: 'string' }, { type: 'number' }] }, {}, true, [['schema-changed','',false]]],
  ['not added', { type: 'string' }, { type: 'string', not: { const: '' } }, false, [['not-changed', '/not', true]]],
  ['not removed', { type: 'string', not: { const: '' } }, { type: 'string' }, true, [['not-changed', '/not', false]]],
  ['not widened (refuses more)', { not: { type: 'string', maxLength: 1 } }, { not: { type: 'string' } }, false, [['not-changed', '/not', true]]],
  ['not narrowed (refuses less)', { not: { type: 'string' } }, { not: { type: 'string', maxLength: 1 } }, true, [['not-changed', '/not', false]]],
  // --- local $ref (Core §8.2.3.1), draft 2020-12 $defs and draft-07 definitions ---
  ['$ref target narrowed ($defs)', { $defs: { s: { type: ['string', 'null'] } }, $ref: '#/$defs/s' }, { $defs: { s: { type: 'string' } }, $ref: '#/$defs/s' }, false, [['type-removed', '/$defs/s/type', true]]],
  ['$ref target widened (draft-07 definitions)', { definitions: { s: { type: 'string' } }, $ref: '#/definitions/s' }, { definitions: { s: {} }, $ref: '#/definitions/s' }, true, [['schema-changed','/definitions/s',false]]],
  ['$ref inlined with the same schema', obj({ a: { $ref: '#/$defs/s' } }, { $defs: { s: { type: 'string' } } }), obj({ a: { type: 'string' } }), true, []],
  ['inline schema moved behind a $ref and narrowed', obj({ a: { type: 'string' } }), obj({ a: { $ref: '#/$defs/s' } }, { $defs: { s: { type: 'string', maxLength: 3 } } }), false, [['bound-tightened', '/$defs/s/maxLength', true]]],
  ['recursive $ref: a required field deep in the tree', { $defs: { n: obj({ next: { $ref: '#/$defs/n' } }) }, $ref: '#/$defs/n' }, { $defs: { n: obj({ next: { $ref: '#/$defs/n' }, v: {} }, { required: ['v'] }) }, $ref: '#/$defs/n' }, false, [['property-added', '/$defs/n/properties/v', false], ['required-added', '/$defs/n/required', true]]],
  ['recursive $ref unchanged', { $defs: { n: obj({ next: { $ref: '#/$defs/n' } }) }, $ref: '#/$defs/n' }, { $defs: { n: obj({ next: { $ref: '#/$defs/n' } }) }, $ref: '#/$defs/n' }, true, []],
  ['a remote $ref is undecidable', obj({ a: { $ref: 'https://example.com/a.json' } }), obj({ a: { $ref: 'https://example.com/b.json' } }), false, [['ref-unresolved', '/properties/a', 'undecidable']]],
  ['a $ref to a missing target is undecidable', obj({ a: { $ref: '#/$defs/x' } }), obj({ a: { $ref: '#/$defs/y' } }, { $defs: {} }), false, [['ref-unresolved', '/properties/a', 'undecidable']]],
  // --- nesting and annotations ---
  ['deeply nested narrowing', obj({ a: obj({ b: obj({ c: obj({ d: { type: 'number' } }) }) }) }), obj({ a: obj({ b: obj({ c: obj({ d: { type: 'integer' } }) }) }) }), false, [['type-removed', '/properties/a/properties/b/properties/c/properties/d/type', true]]],
  ['deeply nested widening', obj({ a: obj({ b: { type: 'string', maxLength: 3 } }) }), obj({ a: obj({ b: { type: 'string' } }) }), true, [['bound-loosened', '/properties/a/properties/b/maxLength', false]]],
  ['description changed', { type: 'string', description: 'old' }, { type: 'string', description: 'new' }, true, [['annotation-changed', '/description', false]]],
  ['title, default and examples changed', { type: 'number', title: 'a', default: 1, examples: [1] }, { type: 'number', title: 'b', default: 2, examples: [2] }, true, [['annotation-changed', '/title', false], ['annotation-changed', '/default', false], ['annotation-changed', '/examples', false]]],
  ['$schema changed (draft-07 to 2020-12)', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' }, { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }, true, [['annotation-changed', '/$schema', false]]],
  ['dependentRequired: another name required along', { type: 'object', dependentRequired: { a: ['b'] } }, { type: 'object', dependentRequired: { a: ['c'] } }, false, [['keyword-changed', '/dependentRequired/a', true]]],
  ['dependentSchemas: a dependency removed', { type: 'object', dependentSchemas: { a: { required: ['b'] }, c: { required: ['d'] } } }, { type: 'object', dependentSchemas: { a: { required: ['b'] } } }, true, [['keyword-changed', '/dependentSchemas/c', false]]],
  ['an assertion keyword not modelled changed is undecidable', { type: 'object', propertyNames: { maxLength: 3 } }, { type: 'object', propertyNames: { maxLength: 4 } }, false, [['keyword-changed', '/propertyNames', 'undecidable']]],
  ['then narrowed under the same if (a conjunct of the values the if accepts)', { if: { type: 'string' }, then: { minLength: 1 } }, { if: { type: 'string' }, then: { minLength: 2 } }, false, [['bound-tightened','/then/minLength',true]]],
  ['a realistic tool input: optional filter added to a closed object', closed({ query: { type: 'string', minLength: 1 }, limit: { type: 'integer', maximum: 50 } }, { required: ['query'] }), closed({ query: { type: 'string', minLength: 1 }, limit: { type: 'integer', maximum: 100 }, filter: { type: 'string' } }, { required: ['query'] }), true, [['bound-loosened', '/properties/limit/maximum', false], ['property-added', '/properties/filter', false]]],
];

describe('compareSchemas: schema pairs from the JSON Schema specification', () => {
  it('has at least 100 pairs', () => {
    expect(PAIRS.length).toBeGreaterThanOrEqual(100);
  });

  it.each(PAIRS)('%s', (_what, before, after, compatible, expected) => {
    const result = compareSchemas(before, after);
    expect(result.differences.map((d) => [d.type, d.path, d.breaking])).toEqual(expected);
    expect(result.compatible).toBe(compatible);
    for (const difference of result.differences) expect(SCHEMA_DIFFERENCE_TYPES).toContain(difference.type);
  });
});

describe('compareSchemas: the answer', () => {
  it('is deeply frozen and leaves the given schemas alone', () => {
    const before = obj({ a: { type: 'string' } });
    const after = obj({ a: { type: 'number' } });
    const result = compareSchemas(before, after);
    expect(Object.isFrozen(result) && Object.isFrozen(result.differences) && Object.isFrozen(result.differences[0])).toBe(true);
    expect(Object.isFrozen(before) || Object.isFrozen(after.properties.a)).toBe(false);
  });

  it('judges a schema again after its caller changed it (only a frozen schema is remembered)', () => {
    const before = { description: 'v1', properties: { a: { $ref: '#/$defs/X' } }, $defs: { X: { type: 'integer' } } };
    const after = { description: 'v2', properties: { a: { $ref: '#/$defs/X' } }, $defs: { X: { type: 'integer' } } };
    expect(compareSchemas(before, after).compatible).toBe(true);
    after.$defs.X.type = 'string';
    expect(compareSchemas(before, after).compatible).toBe(false);
    const frozen = Object.freeze({ ...before, $defs: Object.freeze({ X: Object.freeze({ type: 'integer' }) }) });
    expect(compareSchemas(frozen, after).compatible).toBe(false);
    expect(compareSchemas(frozen, before).compatible).toBe(true);
  });

  it('is a TypeError for something that is not a schema', () => {
    expect(() => compareSchemas('string', {})).toThrow(TypeError);
    expect(() => compareSchemas({}, [])).toThrow(TypeError);
    expect(() => compareSchemas(null, {})).toThrow(TypeError);
  });
});

describe('compareToolSchemas: inputs must not narrow, outputs must not widen', () => {
  const spec = (input: unknown, output: unknown) => ({ input_schema: input, output_schema: output });

  it('a wider output breaks consumers; a narrower one does not', () => {
    const wider = compareToolSchemas(spec({}, { type: 'string' }), spec({}, { type: ['string', 'null'] }));
    expect(wider.compatible).toBe(false);
    expect(wider.differences).toMatchObject([{ type: 'type-added', path: '/output_schema/type', breaking: true }]);
    const narrower = compareToolSchemas(spec({}, { type: ['string', 'null'] }), spec({}, { type: 'string' }));
    expect(narrower.compatible).toBe(true);
    expect(narrower.differences).toMatchObject([{ type: 'type-removed', path: '/output_schema/type', breaking: false }]);
  });

  it('a new required input field breaks callers; paths start at /input_schema', () => {
    const result = compareToolSchemas(spec(obj({ a: {} }), {}), spec(obj({ a: {} }, { required: ['a'] }), {}));
    expect(result.differences).toMatchObject([{ type: 'required-added', path: '/input_schema/required', breaking: true }]);
  });

  it('an undecidable output change counts as breaking', () => {
    const result = compareToolSchemas(spec({}, { type: 'string', pattern: 'a' }), spec({}, { type: 'string', pattern: 'b' }));
    expect(result.compatible).toBe(false);
    expect(result.differences[0]?.breaking).toBe('undecidable');
  });
});

// Issue 38: each reproduced cause of an unsound verdict, with the example. Each was
// `compatible` (or reported nothing) before the fix.
describe('compareSchemas: the unsound verdicts of issue 38', () => {
  const spec = (input: unknown, output: unknown) => ({ input_schema: input, output_schema: output });
  const outputVerdict = (before: unknown, after: unknown) => compareToolSchemas(spec({}, before), spec({}, after));
  const item = (idType: string) => ({ type: 'object', properties: { id: { type: idType } }, required: ['id'] });
  /** The same schema text on both sides around a $ref whose target changes `id` from integer to string. */
  const withItem = (idType: string, body: Record<string, unknown>) => ({ ...body, $defs: { Item: item(idType) } });
  const ref = { $ref: '#/$defs/Item' };

  it.each([
    ['a pydantic Optional (anyOf [$ref, null])', obj({ item: { anyOf: [ref, { type: 'null' }] } })],
    ['under if/then', { if: { type: 'object' }, then: ref }],
    ['under patternProperties', obj({}, { patternProperties: { '^item': ref } })],
    ['under not', { not: ref }],
    ['under contains', { type: 'array', contains: ref }],
    ['under unevaluatedProperties', obj({}, { unevaluatedProperties: ref })],
    ['under items', { type: 'array', items: ref }],
  ])('1. a $ref in text that is the same on both sides is followed: %s', (_what, body) => {
    const result = compareSchemas(withItem('integer', body), withItem('string', body));
    expect(result.compatible).toBe(false);
    expect(result.differences.length).toBeGreaterThan(0);
    expect(outputVerdict(withItem('integer', body), withItem('string', body)).compatible).toBe(false);
  });

  it('1. a $ref whose text is the same on both sides but whose target moved is followed', () => {
    const before = { properties: { a: { $ref: '#/$defs/X' } }, $defs: { X: { type: 'integer' } } };
    const after = { properties: { a: { $ref: '#/$defs/X' } }, $defs: { X: { type: 'string' } } };
    expect(compareSchemas(before, after)).toMatchObject({ compatible: false, differences: [{ path: '/$defs/X/type', breaking: true }, { path: '/$defs/X/type' }] });
  });

  it('2. enum/const do not hide a type widening', () => {
    expect(outputVerdict({ type: 'string' }, { enum: ['a', 1] }).compatible).toBe(false);
    const typed = compareSchemas({ type: 'string', enum: ['a', 1] }, { enum: ['a', 1] });
    expect(typed.differences.map((d) => [d.type, d.breaking])).toEqual([['enum-value-added', false]]);
    expect(outputVerdict({ type: 'string', enum: ['a', 1] }, { enum: ['a', 1] }).compatible).toBe(false);
    // 5 was accepted (not a boolean) and is refused now.
    expect(compareSchemas({ not: { type: 'boolean' } }, { not: { enum: [5] } }).compatible).toBe(false);
  });

  it.each([
    [11, 10],
    [3, 11],
  ])('3. multipleOf %d -> %d (neither divides the other) breaks inputs and outputs', (before, after) => {
    const a = { type: 'integer', multipleOf: before };
    const b = { type: 'integer', multipleOf: after };
    expect(compareSchemas(a, b).differences).toEqual([expect.objectContaining({ type: 'multiple-of-changed', breaking: true })]);
    expect(outputVerdict(a, b).compatible).toBe(false);
  });

  it('4. oneOf branches with a const on a required property are disjoint only under type object', () => {
    const k = (value: number, typed: boolean) => ({ ...(typed ? { type: 'object' } : {}), properties: { k: { const: value } }, required: ['k'] });
    // 5 matched the one branch (not an object: properties and required do not apply); now it matches both.
    expect(compareSchemas({ oneOf: [k(1, false)] }, { oneOf: [k(1, false), k(2, false)] }).compatible).toBe(false);
    expect(compareSchemas({ oneOf: [k(1, true)] }, { oneOf: [k(1, true), k(2, true)] }).compatible).toBe(true);
  });

  it('5. inside not, a $ref pair compared elsewhere is compared again, with the direction flipped', () => {
    const schema = (maxLength: number) => obj({ a: { $ref: '#/$defs/S' }, b: { not: { $ref: '#/$defs/S' } } }, { $defs: { S: { type: 'string', maxLength } } });
    // S wider: a accepts more, b (not S) accepts less ("abcd" was a valid b, is not now).
    const result = compareSchemas(schema(3), schema(5));
    expect(result.compatible).toBe(false);
    expect(result.differences).toContainEqual(expect.objectContaining({ type: 'not-changed', path: '/properties/b/not', breaking: true }));
  });

  it('6. under unevaluatedProperties/unevaluatedItems false, removing a property or a prefixItem breaks', () => {
    expect(compareSchemas(obj({ a: {}, b: {} }, { unevaluatedProperties: false }), obj({ a: {} }, { unevaluatedProperties: false })).compatible).toBe(false);
    expect(compareSchemas({ type: 'array', prefixItems: [{}, {}], unevaluatedItems: false }, { type: 'array', prefixItems: [{}], unevaluatedItems: false }).compatible).toBe(false);
    // With an in-place applicator beside it, any change is undecidable.
    const applied = (props: Record<string, unknown>) => ({ allOf: [{ properties: props }], unevaluatedProperties: false });
    expect(compareSchemas(applied({ a: {}, b: {} }), applied({ a: {} })).differences).toEqual([expect.objectContaining({ type: 'keyword-changed', breaking: 'undecidable' })]);
    // A $ref beside it is such an applicator: {a: 1} passed, the target no longer evaluates `a`. The old code: compatible both ways.
    const referred = (props: Record<string, unknown>) => ({ $defs: { B: { properties: props } }, $ref: '#/$defs/B', unevaluatedProperties: false });
    expect(compareSchemas(referred({ a: {} }), referred({ b: {} })).compatible).toBe(false);
    expect(compareToolSchemas({ input_schema: {}, output_schema: referred({ a: {} }) }, { input_schema: {}, output_schema: referred({ b: {} }) }).compatible).toBe(false);
  });

  it('7. the divides test of multipleOf is exact (3 -> 1.0000000001 breaks)', () => {
    expect(compareSchemas({ type: 'number', multipleOf: 3 }, { type: 'number', multipleOf: 1.0000000001 }).compatible).toBe(false);
    expect(compareSchemas({ type: 'number', multipleOf: 1e-7 }, { type: 'number', multipleOf: 3e-8 }).compatible).toBe(false);
    expect(compareSchemas({ type: 'integer', multipleOf: 12 }, { type: 'integer', multipleOf: 4 }).compatible).toBe(true);
  });

  it('multipleOf between decimal fractions: exact division is no proof for ajv, which divides in floating point', () => {
    // ajv (the runtime) accepts -16.35 under multipleOf 0.01 (-1635 exactly) and refuses it under
    // 0.001 (-16349.999999999998): the old code said compatible. The same for 0.3 -> 0.1 and -599.4.
    expect(compareSchemas({ type: 'number', multipleOf: 0.01 }, { type: 'number', multipleOf: 0.001 }).differences).toEqual([
      { type: 'multiple-of-changed', path: '/multipleOf', before: 0.01, after: 0.001, breaking: 'undecidable' },
    ]);
    expect(compareSchemas({ type: 'number', multipleOf: 0.3 }, { type: 'number', multipleOf: 0.1 }).compatible).toBe(false);
    // Outputs: every value of the new multipleOf 0.01 must pass the old 0.001 in ajv: not proved either.
    expect(compareToolSchemas({ input_schema: {}, output_schema: { type: 'number', multipleOf: 0.001 } }, { input_schema: {}, output_schema: { type: 'number', multipleOf: 0.01 } }).compatible).toBe(false);
    // From an integer multipleOf, the exact test holds in ajv too: 2 -> 0.5 and 10 -> 0.1 widen.
    expect(compareSchemas({ type: 'number', multipleOf: 2 }, { type: 'number', multipleOf: 0.5 }).compatible).toBe(true);
    expect(compareSchemas({ type: 'number', multipleOf: 10 }, { type: 'number', multipleOf: 0.1 }).compatible).toBe(true);
  });

  it('8. a nested $id scopes the $refs under it', () => {
    const schema = (inner: string) => ({
      $defs: {
        A: { $id: 'https://example.com/a.json', $defs: { B: { type: inner } }, type: 'object', properties: { id: { $ref: '#/$defs/B' } } },
        B: { type: 'integer' },
      },
      $ref: '#/$defs/A',
    });
    // The root's B is unchanged; the B that A's ref reaches (A's own) is not.
    expect(compareSchemas(schema('integer'), schema('string')).compatible).toBe(false);
    expect(compareSchemas(schema('integer'), schema('integer')).compatible).toBe(true);
    // An $anchor, and a ref by the nested resource's URI.
    const anchored = (t: string) => ({ $defs: { X: { $anchor: 'x', type: t } }, properties: { a: { $ref: '#x' }, b: { $ref: 'https://example.com/a.json#/$defs/B' } }, allOf: [{ $defs: { A: { $id: 'https://example.com/a.json', $defs: { B: { type: 'string' } } } } }] });
    expect(compareSchemas(anchored('integer'), anchored('number')).compatible).toBe(true);
    expect(compareSchemas(anchored('number'), anchored('integer')).compatible).toBe(false);
  });

  it("each document is read in its own draft: draft-07 ignores a $ref's siblings and the keywords of 2020-12", () => {
    const draft07 = 'http://json-schema.org/draft-07/schema#';
    const reffed = (schema: string, types: string[]) => ({ $schema: schema, definitions: { A: { type: types } }, $ref: '#/definitions/A', type: 'string' });
    // Draft-07 validated 5 (type beside $ref is ignored); now A refuses it. In 2020-12, type applies and nothing changes.
    expect(compareSchemas(reffed(draft07, ['string', 'number']), reffed(draft07, ['string'])).compatible).toBe(false);
    expect(compareSchemas(reffed('https://json-schema.org/draft/2020-12/schema', ['string', 'number']), reffed('https://json-schema.org/draft/2020-12/schema', ['string'])).compatible).toBe(true);
    // prefixItems means nothing to draft-07: ['x'] was valid before.
    const before = { $schema: draft07, type: 'array', prefixItems: [{ type: 'number' }], maxItems: 1 };
    expect(compareSchemas(before, { $schema: draft07, type: 'array', items: { type: 'number' } }).compatible).toBe(false);
    expect(compareSchemas({ type: 'array', prefixItems: [{ type: 'number' }], items: false }, { type: 'array', items: { type: 'number' } }).compatible).toBe(true);
  });

  it("draft-07: ajv (the runtime) applies a $ref's siblings the specification ignores, so the verdict holds under both readings", () => {
    const draft07 = 'http://json-schema.org/draft-07/schema#';
    const field = (extra: Record<string, unknown>) => ({ $schema: draft07, definitions: { S: { type: 'string' } }, type: 'object', properties: { a: { $ref: '#/definitions/S', ...extra } } });
    // ajv refuses {a: 'abcd'} after the sibling maxLength came: inputs break; the old code said compatible, no differences.
    expect(compareSchemas(field({}), field({ maxLength: 3 }))).toMatchObject({ compatible: false, differences: [expect.objectContaining({ type: 'bound-tightened', breaking: true })] });
    // The sibling dropped: ajv now lets 'abcd' out, which consumers were never sent.
    expect(compareToolSchemas({ input_schema: {}, output_schema: field({ maxLength: 3 }) }, { input_schema: {}, output_schema: field({}) }).compatible).toBe(false);
    // Found by a fuzz with ajv's draft-07 validator as the judge: null was valid, ajv's after refuses it.
    const typed = (extra: Record<string, unknown>) => ({ $schema: draft07, definitions: { B: { type: ['integer', 'null'] } }, ...extra });
    expect(compareSchemas(typed({ type: 'null' }), typed({ $ref: '#/definitions/B', type: 'integer' })).compatible).toBe(false);
    // A sibling that is the same on both sides, or an annotation beside the ref, changes nothing.
    expect(compareSchemas(field({ maxLength: 3 }), field({ maxLength: 3, description: 'the a' }))).toMatchObject({ compatible: true });
    expect(compareSchemas(field({ maxLength: 3 }), field({ maxLength: 4 })).compatible).toBe(true);
  });

  it('integer bounds from 2^53 on: no endless count of a one-value range, no bound moved by an inexact +1 (found by a fuzz)', () => {
    const big = 2 ** 53;
    // The old code counted 2^53, 2^53 + 1 (= 2^53)... forever: compareSchemas never returned,
    // nor did a merge import under 'backward' that met such a schema.
    expect(compareSchemas({ type: 'integer', minimum: big, maximum: big }, { const: 'x' }).compatible).toBe(false);
    expect(compareSchemas({ type: 'integer', exclusiveMinimum: big, maximum: big }, { const: 'x' }).compatible).toBe(false);
    // exclusiveMinimum 2^53 is not minimum 2^53 (floor(2^53) + 1 is 2^53 in doubles): ajv refuses 2^53 after.
    expect(compareSchemas({ type: 'integer', minimum: big }, { type: 'integer', exclusiveMinimum: big }).compatible).toBe(false);
    expect(compareSchemas({ type: 'integer', maximum: -big }, { type: 'integer', exclusiveMaximum: -big }).compatible).toBe(false);
    // Within the safe integers the normal form still holds: minimum 1 is exclusiveMinimum 0.
    expect(compareSchemas({ type: 'integer', minimum: 1 }, { type: 'integer', exclusiveMinimum: 0 }).compatible).toBe(true);
  });

  it("a default counts for inputs: the runtime fills it in (ajv's useDefaults) before it validates", () => {
    const o = (a: Record<string, unknown>, extra: Record<string, unknown> = {}) => obj({ a }, extra);
    // {} was valid; the runtime now makes it {a: 5} and refuses it. The old code: compatible.
    expect(compareSchemas(o({ type: 'string' }), o({ type: 'string', default: 5 })).differences).toEqual([
      { type: 'annotation-changed', path: '/properties/a/default', before: null, after: 5, breaking: 'undecidable' },
    ]);
    // A removed default may have been what let {} past `required`.
    expect(compareSchemas(o({ type: 'string', default: 'x' }, { required: ['a'] }), o({ type: 'string' }, { required: ['a'] })).compatible).toBe(false);
    // A default its schema accepts changes nothing (pydantic's Optional: default null); outputs get no defaults.
    expect(compareSchemas(o({ type: 'string', default: 'x' }), o({ type: 'string', default: 'y' })).compatible).toBe(true);
    expect(compareSchemas(o({ type: 'string' }), o({ anyOf: [{ type: 'string' }, { type: 'null' }], default: null })).compatible).toBe(true);
    expect(compareToolSchemas({ input_schema: {}, output_schema: o({ type: 'string' }) }, { input_schema: {}, output_schema: o({ type: 'string', default: 5 }) }).compatible).toBe(true);
    // The filled-in default meets its object's own keywords: {b: 1} passed maxProperties 1, {b: 1, a: 'x'} does not. The old code: compatible.
    const counted = (a: Record<string, unknown>) => ({ type: 'object', properties: { a, b: {} }, maxProperties: 1 });
    expect(compareSchemas(counted({ type: 'string' }), counted({ type: 'string', default: 'x' })).compatible).toBe(false);
    // A property with a default that goes no longer fills one in, and required then refuses {} (the old code: compatible).
    expect(compareSchemas(obj({ a: { type: 'string', default: 'x' } }, { required: ['a'] }), obj({}, { required: ['a'] })).compatible).toBe(false);
    // A new property with a default its schema accepts, under an object that looks at nothing else, stays provable.
    const open = (properties: Record<string, unknown>) => ({ type: 'object', properties, additionalProperties: false });
    expect(compareSchemas(open({}), open({ a: { type: 'string', default: 'x' } })).compatible).toBe(true);
  });

  it('a default ajv does not fill in (under anyOf/oneOf/not/if/contains) decides nothing the walk may rely on', () => {
    // {} passed `required` with `a` filled in, and is refused
    // once that default sits in a branch (one-branch, nullable, or a $ref reached from one). The old code: compatible.
    const filled = obj({ a: { default: 1 } }, { required: ['a'] });
    expect(compareSchemas(filled, { anyOf: [{ properties: { a: { default: 1 } } }], required: ['a'] }).compatible).toBe(false);
    const A = { type: 'object', properties: { a: { default: 1 } }, required: ['a'] };
    expect(compareSchemas(obj({ o: { $ref: '#/$defs/A' } }, { $defs: { A } }), obj({ o: { anyOf: [{ $ref: '#/$defs/A' }, { type: 'null' }] } }, { $defs: { A } })).compatible).toBe(false);
    // pydantic's Optional[Model] whose fields have defaults they need not fill stays permissive.
    const M = (x: number) => ({ type: 'object', properties: { x: { type: 'integer', default: x } } });
    const optional = (x: number) => obj({ m: { anyOf: [{ $ref: '#/$defs/M' }, { type: 'null' }], default: null } }, { $defs: { M: M(x) } });
    expect(compareSchemas(optional(0), optional(1)).compatible).toBe(true);
    // The same for a draft-07 tuple entry's default: [5] became [5, 1] and passed minItems 2.
    const d07 = 'http://json-schema.org/draft-07/schema#';
    expect(compareSchemas({ $schema: d07, items: [{}, { default: 1 }], minItems: 2 }, { $schema: d07, anyOf: [{ items: [{}, { default: 1 }] }], minItems: 2 }).compatible).toBe(false);
  });

  it("a default beside a $ref is filled in too (pydantic's {$ref: Color, default: 'red'})", () => {
    const color = (extra: Record<string, unknown>, outer: Record<string, unknown> = {}) => obj({ c: { $ref: '#/$defs/Color', ...extra } }, { $defs: { Color: { enum: ['red', 'blue'] } }, ...outer });
    // {} passed `required` with c filled in. The old code: compatible.
    expect(compareSchemas(color({ default: 'red' }, { required: ['c'] }), color({}, { required: ['c'] })).compatible).toBe(false);
    // A default the target refuses: {} is now {c: 'green'}, refused. The old code: compatible.
    expect(compareSchemas(color({}), color({ default: 'green' })).compatible).toBe(false);
    expect(compareSchemas(color({ default: 'red' }), color({ default: 'blue' })).compatible).toBe(true);
  });

  it('a filled-in default meets the keywords of every enclosing object and array, not only its own object', () => {
    const item = (a: Record<string, unknown>) => ({ type: 'object', properties: { a } });
    // [{}, {a: 'x'}] was valid; the runtime makes it [{a: 'x'}, {a: 'x'}], which uniqueItems refuses. The old code: compatible.
    const unique = (a: Record<string, unknown>) => ({ type: 'array', items: item(a), uniqueItems: true });
    expect(compareSchemas(unique({ type: 'string' }), unique({ type: 'string', default: 'x' })).compatible).toBe(false);
    expect(compareSchemas({ type: 'array', items: item({}), uniqueItems: true }, unique({ type: 'string', default: 'x' })).compatible).toBe(false);
    // {o: {}} was valid; the root's pattern then sees {o: {a: 'x'}} past maxProperties 0. The old code: compatible.
    const nested = (a: Record<string, unknown>) => obj({ o: item(a) }, { patternProperties: { '^o$': { maxProperties: 0 } } });
    expect(compareSchemas(nested({ type: 'string' }), nested({ type: 'string', default: 'x' })).compatible).toBe(false);
    // A default under `then` (or dependentSchemas) fills the same object: {} passed maxProperties 0, {b: 'x'} does not. The old code: compatible.
    const then = (b: Record<string, unknown>) => ({ if: true, then: obj({ b }), maxProperties: 0 });
    expect(compareSchemas(then({ type: 'string' }), then({ type: 'string', default: 'x' })).compatible).toBe(false);
    // One $ref target reached where nothing looks again (y) and where uniqueItems does (z): judged at both.
    const O = (a: Record<string, unknown>) => obj({ y: { $ref: '#/$defs/O' }, z: { type: 'array', items: { $ref: '#/$defs/O' }, uniqueItems: true } }, { $defs: { O: item(a) } });
    expect(compareSchemas(O({ type: 'string' }), O({ type: 'string', default: 'x' })).compatible).toBe(false);
    // With nothing above that looks again, the nested default stays provable.
    expect(compareSchemas(obj({ o: item({ type: 'string' }) }), obj({ o: item({ type: 'string', default: 'x' }) })).compatible).toBe(true);
  });

  it("ajv fills a schema's defaults after its $ref, enum, const and combinators, and after what ran before it on the value: where the order decides, undecidable", () => {
    // Each pair was compatible for the old code, and ajv with useDefaults (the runtime) takes {} before and refuses it after.
    const P = { properties: { a: { default: 1 } } };
    // allOf branches reordered: the enum (required) now looks before the default is filled in.
    expect(compareSchemas({ allOf: [P, { enum: [{ a: 1 }] }] }, { allOf: [{ enum: [{ a: 1 }] }, P] }).compatible).toBe(false);
    expect(compareSchemas({ allOf: [P, { required: ['a'] }] }, { allOf: [{ required: ['a'] }, P] }).compatible).toBe(false);
    // `required` moved into an allOf (or a $ref's target) beside the default: it runs first.
    expect(compareSchemas({ ...P, required: ['a'] }, { ...P, allOf: [{ required: ['a'] }] }).compatible).toBe(false);
    const R = { $defs: { R: { required: ['a'] } } };
    expect(compareSchemas({ ...R, ...P, required: ['a'] }, { ...R, ...P, $ref: '#/$defs/R' }).compatible).toBe(false);
    // The order ajv keeps (the default filled in by the branch before the one that requires it) stays provable.
    expect(compareSchemas({ ...P, required: ['a'] }, { ...P, required: ['a'], description: 'the a' }).compatible).toBe(true);
  });

  it('a default is judged with the defaults ajv fills into it, and against an enum or const beside it, as the runtime fills them', () => {
    // p's new default {} gets x: 5 filled in, which x's type refuses. The old code: compatible.
    const p = (extra: Record<string, unknown>) => obj({ p: { type: 'object', properties: { x: { type: 'string', default: 5 } }, ...extra } });
    expect(compareSchemas(p({}), p({ default: {} })).compatible).toBe(false);
    expect(compareSchemas(p({}), p({ default: { x: 'y' } })).compatible).toBe(true);
    // {} is in both enums, but after gets a: 1 filled in and refused by a's type. The old code: compatible.
    expect(compareSchemas({ enum: [{}] }, { enum: [{}], properties: { a: { type: 'string', default: 1 } } }).compatible).toBe(false);
    // A property whose schema with a default became true or {}: nothing fills k in, and required refuses {}. The old code: compatible.
    const k = (schema: unknown) => obj({ k: schema }, { required: ['k'] });
    for (const loose of [true, {}]) expect(compareSchemas(k({ type: 'integer', default: 100 }), k(loose)).compatible).toBe(false);
    // The same for a schema that was only a default (found by the fuzz at seed 16). The old code: compatible.
    expect(compareSchemas(k({ default: 'a' }), k(true)).compatible).toBe(false);
    expect(compareSchemas(k({ type: 'integer' }), k(true)).compatible).toBe(true);
    // A property that had to be absent (false, or what normalizes to it) now gets a default its schema refuses: {} is refused. The old code: compatible.
    const a = (schema: unknown) => obj({ a: schema });
    expect(compareSchemas(a(false), a({ type: 'number', maximum: 10, default: 11 })).compatible).toBe(false);
    expect(compareSchemas(a({ not: {} }), a({ not: {}, default: 1 })).compatible).toBe(false);
    expect(compareSchemas(a(false), a({ type: 'number', maximum: 10, default: 1 })).compatible).toBe(true);
  });

  it('draft-07 read as written: an allOf branch holding a $ref is not folded beside other keywords, which would then be ignored (found by a fuzz)', () => {
    // Folded, {type: 'object', $ref: B} read as draft-07 is B alone ({}), so '' seemed allowed before. The old code: compatible both ways.
    const d07 = 'http://json-schema.org/draft-07/schema#';
    const object = { $schema: d07, allOf: [{ allOf: [{ $ref: '#/definitions/B' }], properties: { a: { $ref: '#/definitions/A', default: 0.5 } }, type: 'object' }], definitions: { A: { $id: 'https://tool-registry.invalid/a.json', type: 'object' }, B: {} }, patternProperties: {} };
    const empty = { $schema: d07, allOf: [{ enum: [''] }] };
    expect(compareToolSchemas({ input_schema: {}, output_schema: object }, { input_schema: {}, output_schema: empty }).compatible).toBe(false);
    expect(compareSchemas(empty, object).compatible).toBe(false);
  });

  it('contains beside typed prefixItems: ajv lets [] through, so a change there is undecidable (found by the fuzz)', () => {
    const before = { type: 'array', prefixItems: [{ type: 'integer' }], contains: { const: 'ab' } };
    expect(compareSchemas(before, { type: 'array', contains: { const: 'ab' } }).differences).toEqual([expect.objectContaining({ path: '/contains', breaking: 'undecidable' })]);
  });

  it('the same ajv quirk beside the tuple items of draft-07 and 2019-09 (the old code said compatible)', () => {
    // ajv's draft-07 and 2019-09 validators accept [] before (typed tuple items beside contains) and refuse it after.
    for (const draft of ['http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema']) {
      const before = { $schema: draft, type: 'array', items: [{ const: null }], contains: { type: 'number' } };
      expect(compareSchemas(before, { $schema: draft, type: 'array', contains: { type: 'number' } }).differences).toEqual([expect.objectContaining({ path: '/contains', breaking: 'undecidable' })]);
      // Under a not, the value-level check (found by a fuzz with ajv's 2019-09 validator).
      const negated = (first: unknown) => ({ $schema: draft, not: { type: 'array', items: [first], maxItems: 0, contains: { type: 'number' } } });
      expect(compareSchemas(negated({}), negated({ const: null })).compatible).toBe(false);
    }
  });

  it('a recursive schema ends, and a ref loop without a descent is undecidable', () => {
    const list = (t: string) => ({ $defs: { n: obj({ v: { type: t }, next: { $ref: '#/$defs/n' } }) }, $ref: '#/$defs/n' });
    expect(compareSchemas(list('integer'), list('number')).compatible).toBe(true);
    expect(compareSchemas(list('number'), list('integer')).compatible).toBe(false);
    const loop = (m: number) => ({ $defs: { a: { $ref: '#/$defs/a', minimum: m } }, $ref: '#/$defs/a' });
    expect(compareSchemas(loop(1), loop(0)).compatible).toBe(false);
  });
});

// Issue 38: changes that break no one, which were refused. Each is compatible in every
// direction where it holds (equivalent forms: both ways, for inputs and outputs).
describe('compareSchemas: the safe changes of issue 38 are compatible', () => {
  const spec = (schema: unknown) => ({ input_schema: schema, output_schema: schema });
  /** Compatible for inputs and outputs, both ways: the two mean the same. */
  const equivalent = (a: unknown, b: unknown) => {
    expect(compareToolSchemas(spec(a), spec(b)).compatible).toBe(true);
    expect(compareToolSchemas(spec(b), spec(a)).compatible).toBe(true);
  };
  /** `after` accepts more: compatible for inputs; the reverse is compatible for outputs. */
  const widens = (before: unknown, after: unknown) => {
    expect(compareSchemas(before, after).compatible).toBe(true);
    expect(compareToolSchemas({ input_schema: {}, output_schema: after }, { input_schema: {}, output_schema: before }).compatible).toBe(true);
    // ...and not the other way: it is a real widening.
    expect(compareSchemas(after, before).compatible).toBe(false);
  };
  const item = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] };

  it('a field made nullable with anyOf [S, null] (pydantic Optional), S inline', () => {
    widens(obj({ n: { type: 'integer', minimum: 1, title: 'N' } }), obj({ n: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], default: null, title: 'N' } }));
  });
  it('a field made nullable with anyOf [$ref, null] (pydantic Optional[Model])', () => {
    widens(obj({ item: { $ref: '#/$defs/Item' } }, { $defs: { Item: item } }), obj({ item: { anyOf: [{ $ref: '#/$defs/Item' }, { type: 'null' }], default: null } }, { $defs: { Item: item } }));
  });
  it('propertyNames removed only widens (a conjunct on names; the old code: undecidable)', () => widens({ type: 'object', propertyNames: { maxLength: 3 } }, { type: 'object' }));
  it('a type array is an anyOf of types', () => equivalent({ type: ['string', 'null'], maxLength: 3 }, { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }] }));
  it('a one-branch anyOf is its branch', () => equivalent({ anyOf: [{ type: 'string', minLength: 1 }] }, { type: 'string', minLength: 1 }));
  it('a one-branch allOf is its branch', () => equivalent({ allOf: [item] }, item));
  it('a one-branch oneOf is its branch', () => equivalent({ oneOf: [{ type: 'integer' }], description: 'n' }, { type: 'integer' }));
  it('nested allOf flattened', () => {
    equivalent({ allOf: [{ allOf: [{ type: 'object' }, { required: ['a'] }] }, { properties: { a: { type: 'string' } } }] }, { allOf: [{ type: 'object' }, { required: ['a'] }, { properties: { a: { type: 'string' } } }] });
    equivalent({ allOf: [{ type: 'object' }, { required: ['a'] }, { properties: { a: { type: 'string' } } }] }, { type: 'object', required: ['a'], properties: { a: { type: 'string' } } });
  });
  it('oneOf becomes anyOf over disjoint types', () => {
    equivalent({ oneOf: [{ type: 'string' }, { type: 'integer' }] }, { anyOf: [{ type: 'string' }, { type: 'integer' }] });
    equivalent({ oneOf: [{ type: 'string' }, { type: 'object', properties: { a: { $ref: '#/$defs/I' } } }], $defs: { I: item } }, { anyOf: [{ type: 'string' }, { type: 'object', properties: { a: { $ref: '#/$defs/I' } } }], $defs: { I: item } });
  });
  it('an enum replaced by the equal integer range', () => equivalent({ enum: [1, 2, 3] }, { type: 'integer', minimum: 1, maximum: 3 }));
  it('integer maximum 5.5 is 5', () => equivalent({ type: 'integer', maximum: 5.5 }, { type: 'integer', maximum: 5 }));
  it('minimum 1 is exclusiveMinimum 0 on integers', () => equivalent({ type: 'integer', minimum: 1 }, { type: 'integer', exclusiveMinimum: 0 }));
  it('multipleOf 1 is integer', () => equivalent({ type: 'number', multipleOf: 1 }, { type: 'integer' }));
  it('minItems 0 (and other no-op keywords) added', () => {
    equivalent({ type: 'array', items: { type: 'string' } }, { type: 'array', items: { type: 'string' }, minItems: 0 });
    equivalent({ type: 'object' }, { type: 'object', required: [], properties: {}, additionalProperties: true, minProperties: 0 });
  });
  it('a wider pattern that contains the old one literally', () => {
    widens({ type: 'string', pattern: '^old$' }, { type: 'string', pattern: '^(old|other)$' });
    widens({ type: 'string', pattern: '^old$' }, { type: 'string', pattern: '^(?:other|old)$' });
    widens({ type: 'string', pattern: '^old$' }, { type: 'string', pattern: 'old' });
    // Not provable literally: undecidable, never compatible.
    expect(compareSchemas({ type: 'string', pattern: '^old$' }, { type: 'string', pattern: '^o.*$' }).differences).toEqual([expect.objectContaining({ breaking: 'undecidable' })]);
    // A backreference renumbers inside a new group: not compared.
    expect(compareSchemas({ type: 'string', pattern: '^(a)\\1$' }, { type: 'string', pattern: '^((a)\\1|b)$' }).compatible).toBe(false);
  });
  it('a property removed where additionalProperties still accepts it', () => {
    expect(compareSchemas(closed({ a: { type: 'string' }, b: { type: 'string' } }, { additionalProperties: { type: 'string' } }), obj({ a: { type: 'string' } }, { additionalProperties: { type: 'string' } })).compatible).toBe(true);
  });
  it('a property removed where patternProperties still accepts it', () => {
    expect(compareSchemas(closed({ x_a: { type: 'string', maxLength: 3 } }, { patternProperties: { '^x_': { type: 'string' } } }), closed({}, { patternProperties: { '^x_': { type: 'string' } } })).compatible).toBe(true);
    expect(compareSchemas(closed({ y: { type: 'string' } }, { patternProperties: { '^x_': { type: 'string' } } }), closed({}, { patternProperties: { '^x_': { type: 'string' } } })).compatible).toBe(false);
  });
  it('a property removed into a pattern added to a closed object', () => {
    const before = closed({ name: { type: 'string' }, n_1: { type: 'integer' } });
    expect(compareSchemas(before, closed({ name: { type: 'string' } }, { patternProperties: { '^n_': { type: 'number' } } })).compatible).toBe(true);
    // The new pattern also applies to a listed property, and narrows it.
    expect(compareSchemas(closed({ n_1: { type: 'number' } }), closed({ n_1: { type: 'number' } }, { patternProperties: { '^n_': { type: 'integer' } } })).compatible).toBe(false);
  });
  it('a new anyOf branch that only widens', () => {
    widens({ anyOf: [{ type: 'string', minLength: 1 }, item] }, { anyOf: [{ type: 'string', minLength: 1 }, item, { type: 'array' }] });
    widens({ type: 'string' }, { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#' } }] });
  });
  it('an enum value added, and an enum that the new type covers', () => {
    widens({ enum: ['a', 'b'] }, { enum: ['a', 'b', 'c'] });
    widens({ enum: ['a', 'b'] }, { type: 'string' });
  });
});

// The audit of the packed package (round 8): schemas a careless or hostile author registers.
describe('compareSchemas: hostile schemas give a verdict, undecidable or a clear error', () => {
  const ajv = new Ajv2020.default({ strict: false, logger: false });
  const compiles = (schema: unknown) => {
    try {
      ajv.compile(schema as object);
      return true;
    } catch {
      return false;
    }
  };

  it('a side ajv cannot compile validates nothing at run time: never compatible (the old code said compatible)', () => {
    const cases: [unknown, unknown, string][] = [
      [obj({ a: { type: 'string' } }), { type: 'object', properties: [{ type: 'string' }] }, '/properties'],
      [{ items: { type: 'string' } }, { items: 5 }, '/items'],
      [{ anyOf: [{ type: 'string' }] }, { anyOf: 5 }, '/anyOf'],
      [{ type: 'string' }, { type: 5 }, '/type'],
      [{ required: ['a'] }, { required: 'b' }, '/required'],
      [{ additionalProperties: { type: 'string' } }, { additionalProperties: 5 }, '/additionalProperties'],
      [{ type: 'array' }, { type: 'array', uniqueItems: 'yes' }, '/uniqueItems'],
      [{}, { patternProperties: [] }, '/patternProperties'],
      [{ $defs: { A: 5 }, properties: { a: { $ref: '#/$defs/A' } } }, { $defs: { A: 'x' }, properties: { a: { $ref: '#/$defs/A' } } }, '/$defs/A'],
      [{ type: 'bogus' }, { type: 'string' }, '/type'],
    ];
    // A $schema the runtime does not compile with (it knows draft-07, 2019-09 and 2020-12).
    for (const draft of ['http://json-schema.org/draft-04/schema#', 'https://example.com/my-meta-schema']) cases.push([{ type: 'string' }, { $schema: draft, type: 'string' }, '/$schema']);
    // An $id with a fragment, an anchor that is not a name: ajv's 2020-12 meta-schema refuses both.
    cases.push([obj({ a: { type: 'string' } }), obj({ a: { $id: '#a', type: 'string' } }), '/properties/a/$id']);
    cases.push([obj({ a: { type: 'string' } }), obj({ a: { $anchor: '1a', type: 'string' } }), '/properties/a/$anchor']);
    cases.push([{ type: 'string' }, { type: 'string', contentEncoding: 5 }, '/contentEncoding'], [obj({ a: { type: 'string' } }), obj({ a: { $dynamicRef: 'x' } }), '/properties/a/$dynamicRef']);
    for (const [before, after, pointer] of cases) {
      expect(compiles(before) && compiles(after), JSON.stringify([before, after])).toBe(false);
      const result = compareSchemas(before, after);
      expect(result.compatible, JSON.stringify([before, after])).toBe(false);
      expect(result.differences).toContainEqual(expect.objectContaining({ type: 'keyword-changed', path: pointer, breaking: 'undecidable' }));
      // Outputs too: a consumer cannot be promised anything by a schema that does not compile.
      expect(compareToolSchemas({ input_schema: {}, output_schema: after as object }, { input_schema: {}, output_schema: before as object }).compatible).toBe(false);
    }
  });

  it('an enum is looked up in a set, not scanned for each value of the other side (two 100,000-value enums took the old code minutes)', () => {
    // Counts the reads of the lists' entries: one pass over each per document, not one per value.
    const counted = (list: unknown[]) => {
      let reads = 0;
      const proxy = new Proxy(list, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
      return [proxy, () => reads] as const;
    };
    const values = Array.from({ length: 2_000 }, (_, i) => `v${i}`);
    const [before, readsBefore] = counted(values);
    const [after, readsAfter] = counted([...values].reverse());
    expect(compareSchemas({ enum: before }, { enum: after }).compatible).toBe(true);
    expect(readsBefore() + readsAfter()).toBeLessThan(20 * values.length);
    expect(compareSchemas({ enum: values }, { enum: values.slice(1).reverse() }).differences).toEqual([expect.objectContaining({ type: 'enum-value-removed', before: 'v0', breaking: true })]);
    const objects = values.map((v) => ({ v, n: [v] }));
    expect(compareSchemas({ enum: objects }, { enum: [...objects].reverse().map(({ n, v }) => ({ n, v })) }).compatible).toBe(true);
  });

  it('names 100 values of an enum place per type and verdict, and counts the rest in one entry (two 90,000-value enums were 180,000 differences, 21 MB)', () => {
    const values = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const other = compareSchemas({ enum: values('v', 250) }, { enum: values('w', 250) });
    expect(other.compatible).toBe(false);
    expect(other.differences).toHaveLength(202);
    expect(other.differences.slice(99, 102)).toEqual([
      { type: 'enum-value-removed', path: '/enum', before: 'v99', after: null, breaking: true },
      { type: 'enum-value-removed', path: '/enum', before: null, after: null, breaking: true, omitted: 150 },
      { type: 'enum-value-added', path: '/enum', before: null, after: 'w0', breaking: false },
    ]);
    expect(other.differences[201]).toEqual({ type: 'enum-value-added', path: '/enum', before: null, after: null, breaking: false, omitted: 150 });
    // The verdict counts every value: only added ones (inputs widen) stay compatible.
    const added = compareSchemas({ enum: values('v', 10) }, { enum: values('v', 400) });
    expect([added.compatible, added.differences.length, added.differences.at(-1)?.omitted]).toEqual([true, 101, 290]);
    // Each verdict is its own group: 150 values the format may refuse (undecidable), 150 refused.
    const mixed = compareSchemas({ type: 'string', enum: values('v', 300) }, { type: 'string', enum: values('v', 150), format: 'email' });
    expect(mixed.differences.filter((difference) => difference.omitted !== undefined)).toEqual([
      { type: 'enum-value-removed', path: '/enum', before: null, after: null, breaking: 'undecidable', omitted: 50 },
      { type: 'enum-value-removed', path: '/enum', before: null, after: null, breaking: true, omitted: 50 },
    ]);
    expect(mixed.differences).toHaveLength(202);
    // 1,000 values named in all of a schema's places; past them each place's are only counted
    // (9,000 enums of 10 other values, a 620 KB spec, were also 180,000 differences, 21 MB).
    const places = (prefix: string) => ({ type: 'object', properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, { enum: values(prefix, 100) }])) });
    const spread = compareSchemas(places('v'), places('w'));
    expect([spread.compatible, spread.differences.length, spread.differences.filter((difference) => difference.omitted === undefined).length]).toEqual([false, 5 * 200 + 15 * 2, 1_000]);
    expect(spread.differences.slice(1_000, 1_002)).toEqual([
      { type: 'enum-value-removed', path: '/properties/p5/enum', before: null, after: null, breaking: true, omitted: 100 },
      { type: 'enum-value-added', path: '/properties/p5/enum', before: null, after: null, breaking: false, omitted: 100 },
    ]);
  });

  it('a refused version counts the values left out in its message', async () => {
    const values = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const registry = new InMemoryToolRegistry();
    await registry.register({ tool_name: 'pick', version: '1.0.0', input_schema: { enum: values('v', 300) }, output_schema: {} });
    await registry.setPolicy({ compatibility: 'backward' });
    const refused = registry.register({ tool_name: 'pick', version: '2.0.0', input_schema: { enum: values('w', 300) }, output_schema: {} });
    await expect(refused).rejects.toMatchObject({ code: 'COMPATIBILITY_FAILED', message: expect.stringContaining('enum-value-removed at /input_schema/enum and 295 more)') });
    await expect(refused).rejects.toMatchObject({ context: { differences: expect.arrayContaining([expect.objectContaining({ omitted: 200 })]) } });
  });

  it('judges each pair of $ref targets once: properties that start chains into the same refs (each walked 64 refs of its chain)', () => {
    // Counted by the reads of the chain's `$ref`s; the same text is equivalent, however long the chain.
    let reads = 0;
    const chain = (description: string) => {
      const defs = Object.fromEntries(
        Array.from({ length: 3_000 }, (_, i) => {
          const node = {};
          const ref = `#/$defs/d${i + 1}`;
          if (i === 2_999) return [`d${i}`, { type: 'string' }];
          Object.defineProperty(node, '$ref', {
            enumerable: true,
            get: () => {
              reads++;
              return ref;
            },
          });
          return [`d${i}`, node];
        }),
      );
      return { type: 'object', description, $defs: defs, properties: Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`p${i}`, { $ref: `#/$defs/d${i}` }])) };
    };
    const before = chain('one');
    const after = chain('two');
    reads = 0;
    const result = compareSchemas(before, after);
    expect(result).toEqual({ compatible: true, differences: [{ type: 'annotation-changed', path: '/description', before: 'one', after: 'two', breaking: false }] });
    expect(reads).toBeLessThan(40 * 3_000);
  });

  it('refs that fan out under oneOf/anyOf end, undecidable (the old code never ended: 3^64 steps)', () => {
    let reads = 0;
    const branches = [{ $ref: '#/$defs/A' }, { $ref: '#/$defs/A' }, { $ref: '#/$defs/A' }];
    const counted = {};
    Object.defineProperty(counted, 'oneOf', {
      enumerable: true,
      get() {
        // The old code's walk would not end: stop it, as a failure.
        if (++reads > 20_000_000) throw new Error('runaway validation');
        return branches;
      },
    });
    const result = compareSchemas({ enum: [1] }, { $defs: { A: counted }, $ref: '#/$defs/A' });
    expect(result.compatible).toBe(false);
    expect(result.differences).toContainEqual(expect.objectContaining({ breaking: 'undecidable' }));
    expect(reads).toBeLessThan(5_000_000);
    const fan = { $defs: { A: { anyOf: branches } }, $ref: '#/$defs/A' };
    expect(compareSchemas({ enum: [1] }, fan).differences).toContainEqual(expect.objectContaining({ breaking: 'undecidable' }));
  });

  it('work that grows with the product of two lists is bounded, then undecidable (20,000 names by 2,000 patterns took 80 s)', () => {
    // Counted by the reads the walk makes: it stops reading once its budget is spent.
    let patternListings = 0;
    const patterns = new Proxy(Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`^p${i}$`, { type: 'string' }])), {
      ownKeys(target) {
        patternListings++;
        return Reflect.ownKeys(target);
      },
    });
    const properties = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    const result = compareSchemas({ properties, patternProperties: patterns, additionalProperties: false }, { patternProperties: patterns, additionalProperties: false });
    expect(patternListings).toBeLessThan(2_000);
    expect(result.compatible).toBe(false);
    expect(result.differences).toContainEqual(expect.objectContaining({ path: '/properties/p4999', breaking: 'undecidable' }));
    // oneOf branches: each pair was checked for disjointness, 4.5 million reads of their type.
    let typeReads = 0;
    const branch = (i: number) => {
      const one = { properties: { k: { const: i } }, required: ['k'] };
      Object.defineProperty(one, 'type', {
        enumerable: true,
        get: () => {
          typeReads++;
          return 'object';
        },
      });
      return one;
    };
    const branches = Array.from({ length: 1_500 }, (_, i) => branch(i));
    compareSchemas({ oneOf: branches }, { oneOf: [...branches].reverse() });
    expect(typeReads).toBeLessThan(100 * branches.length);
    // Matching 3,000 anyOf branches in another order spends the budget (4.5 million pairs):
    // the rest go by position, so the verdict is no longer compatible (the price of the bound).
    const many = Array.from({ length: 3_000 }, (_, i) => ({ type: 'object', properties: { k: { const: i } }, required: ['k'] }));
    expect(compareSchemas({ anyOf: many }, { anyOf: [...many].reverse() }).compatible).toBe(false);
  });

  it('a cycle, or nesting deeper than a spec may, is a TypeError naming the schema and the place', () => {
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.properties = { self: cyclic };
    expect(() => compareSchemas({}, cyclic)).toThrow(/^compareSchemas\(\): after holds a cycle, which no JSON text does \(at '\/properties\/self'\)$/);
    let deep: unknown = { type: 'string' };
    for (let i = 0; i < 2_000; i++) deep = { not: deep };
    expect(() => compareSchemas(deep, {})).toThrow(/^compareSchemas\(\): before is nested deeper than 256 levels \(at '\/not\/not/);
    expect(() => compareToolSchemas({ input_schema: {}, output_schema: {} }, { input_schema: {}, output_schema: deep })).toThrow(/after\.output_schema is nested deeper than 256 levels/);
    // As deep as a registered spec may be (255 levels): compared.
    let deepest: unknown = { type: 'string' };
    let other: unknown = { type: 'integer' };
    for (let i = 0; i < 255; i++) {
      deepest = { not: deepest };
      other = { not: other };
    }
    expect(compareSchemas(deepest, other).compatible).toBe(false);
    // A node shared by two places is no cycle.
    const shared = { type: 'string' };
    expect(compareSchemas({ anyOf: [shared, { type: 'null' }], not: shared }, { anyOf: [shared, { type: 'null' }], not: shared }).compatible).toBe(true);
  });
});

describe('compareSchemas: unsound verdicts of a hostile acceptance test (the runtime validator as the judge)', () => {
  /** The runtime's verdict on `value` as a call's arguments: refused when the schema does not compile or its check throws. */
  const accepts = (schema: unknown, value: unknown): boolean => {
    try {
      return compileSchema(schema as JsonObject, true)(structuredClone(value)) === undefined;
    } catch {
      return false;
    }
  };
  const outputVerdict = (before: unknown, after: unknown) => compareToolSchemas({ input_schema: {}, output_schema: before }, { input_schema: {}, output_schema: after });

  it.each([
    'http://json-schema.org/draft/2020-12/schema',
    'http://json-schema.org/draft/2020-12/schema#',
    'http://json-schema.org/draft/2019-09/schema',
    'https://json-schema.org/draft-07/schema#',
    'https://json-schema.org/draft-07/schema',
  ])('a $schema in the scheme ajv does not know (%s) is refused by the runtime: never compatible (it said compatible)', (draft) => {
    const plain = { type: 'string' };
    const declared = { $schema: draft, type: 'string' };
    expect(accepts(plain, 'x')).toBe(true);
    expect(accepts(declared, 'x')).toBe(false);
    const result = compareSchemas(plain, declared);
    expect(result.compatible).toBe(false);
    expect(result.differences).toContainEqual(expect.objectContaining({ type: 'keyword-changed', path: '/$schema', breaking: 'undecidable' }));
    expect(outputVerdict(declared, plain).compatible).toBe(false);
  });

  it('the spellings ajv knows still compare as before', () => {
    for (const draft of ['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#', 'http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft/2019-09/schema']) {
      expect(accepts({ $schema: draft, type: 'string' }, 'x')).toBe(true);
      expect(compareSchemas({ type: 'string' }, { $schema: draft, type: 'string' }).compatible, draft).toBe(true);
    }
  });

  it.each([
    // ajv cannot compile these: resolving a ref that only names itself overflows its stack.
    ['a property that is a $ref to itself', { properties: { a: { $ref: '#/properties/a' } } }],
    ['a $defs entry that is a $ref to itself', { $defs: { A: { $ref: '#/$defs/A' } }, properties: { a: { $ref: '#/$defs/A' } } }],
    ['two $defs that refer to each other', { $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } }, properties: { a: { $ref: '#/$defs/A' } } }],
    // ajv compiles these, but with allErrors it follows every branch: any value overflows the stack.
    ['an anyOf branch that is the root again', { anyOf: [{ type: 'string' }, { $ref: '#' }] }],
    ['an allOf branch that is the root again', { allOf: [{ type: 'string' }, { $ref: '#' }] }],
    ['a $ref beside type that is the root again', { type: 'string', not: { $ref: '#/$defs/N' }, $defs: { N: { not: { $ref: '#' } } } }],
  ])('a $ref cycle that never descends into the value refuses every value at run time: never compatible (it said compatible): %s', (_what, looping) => {
    const plain = { type: 'string' };
    expect(accepts(plain, 'x')).toBe(true);
    expect(accepts(looping, 'x')).toBe(false);
    expect(compareSchemas(plain, looping).compatible).toBe(false);
    expect(outputVerdict(looping, plain).compatible).toBe(false);
    // The same text on both sides refuses the same values: no change.
    expect(compareSchemas(looping, structuredClone(looping)).compatible).toBe(true);
  });

  it('a $ref cycle nothing reaches, or one that descends into the value, is no obstacle', () => {
    const unreached = { type: 'string', $defs: { A: { $ref: '#/$defs/A' } } };
    expect(accepts(unreached, 'x')).toBe(true);
    expect(compareSchemas({ type: 'string' }, unreached).compatible).toBe(true);
    const tree = { type: 'object', properties: { v: { type: 'string' }, kids: { type: 'array', items: { $ref: '#' } } } };
    const wider = { type: 'object', properties: { v: { type: ['string', 'null'] }, kids: { type: 'array', items: { $ref: '#' } } } };
    expect(compareSchemas(tree, wider).compatible).toBe(true);
  });
});
