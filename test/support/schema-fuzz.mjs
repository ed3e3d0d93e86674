// Generated schema pairs judged by ajv (issue 38): the soundness check of compareSchemas, shared by
// test/versions/schema-compare.property.test.ts and bench/compat-fuzz.mjs. Plain ESM so that the
// bench runs it over dist/ and the test over src/ (the compare functions are passed in).
//
// A family is a random base schema and a few random edits of it (each variant is 0-3 edits
// away: bounds, types, enum/const, multipleOf, properties/required/additionalProperties/
// patternProperties, items/prefixItems, anyOf/oneOf/allOf/not, if/then, $ref/$defs with a
// nested $id, unevaluated*, and rewrites that keep the meaning). Every ordered pair of one
// family's variants is a pair to judge, so N variants cost N ajv compiles for N(N-1) pairs.
// Values are sampled from every variant (valid-looking values and mutations of them) and
// checked with ajv under every variant: a `compatible` input verdict with a value valid
// before and refused after is unsound; so is a `compatible` output verdict with a value valid
// after and refused before. Numbers stay below 1e21 in magnitude: above it ajv's multipleOf
// (the quotient against its parseInt) refuses every value, which the specification does not say.
import { performance } from 'node:perf_hooks';
import Ajv2020 from 'ajv/dist/2020.js';
import { random } from '../../bench/lib/random.mjs';

const NAMES = ['a', 'b', 'k', 'id'];
const clone = (value) => JSON.parse(JSON.stringify(value));
const STRINGS = ['', 'a', 'ab', 'abc', 'old', 'other', 'x1', 'é', 'A'];
const NUMBERS = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, -1, 0.5, 1.5, 2.5, 5.5, 33, 1.0000000001, 100];
const PATTERNS = ['^old$', '^(old|other)$', 'old', '^a', '^(?:a|ab)$', '^[ab]+$'];
const MULTIPLES = [1, 2, 3, 4, 10, 11, 0.5, 1.0000000001];

/** A JSON Schema generator, an editor and a value sampler over one seeded stream of numbers. */
class Gen {
  constructor(seed) {
    this.next = random(seed);
  }
  int(n) {
    return Math.floor(this.next() * n);
  }
  chance(p) {
    return this.next() < p;
  }
  pick(list) {
    return list[this.int(list.length)];
  }

  leaf() {
    switch (this.int(11)) {
      case 0: {
        const s = { type: 'string' };
        if (this.chance(0.4)) s.minLength = this.int(3);
        if (this.chance(0.4)) s.maxLength = 1 + this.int(4);
        if (this.chance(0.25)) s.pattern = this.pick(PATTERNS);
        return s;
      }
      case 1: {
        const s = { type: 'integer' };
        if (this.chance(0.5)) s.minimum = this.int(4) - 1;
        if (this.chance(0.5)) s.maximum = 2 + this.int(10);
        if (this.chance(0.3)) s.multipleOf = this.pick(MULTIPLES);
        return s;
      }
      case 2: {
        const s = { type: 'number' };
        if (this.chance(0.4)) s[this.chance(0.5) ? 'minimum' : 'exclusiveMinimum'] = this.pick([0, 0.5, 1]);
        if (this.chance(0.4)) s[this.chance(0.5) ? 'maximum' : 'exclusiveMaximum'] = this.pick([5, 5.5, 10]);
        if (this.chance(0.3)) s.multipleOf = this.pick(MULTIPLES);
        return s;
      }
      case 3:
        return { type: 'boolean' };
      case 4:
        return { type: this.pick([['string', 'null'], ['integer', 'string'], ['null', 'boolean']]) };
      case 5:
        return { enum: this.sub([...STRINGS.slice(0, 4), 1, 2, 5, null, true], 1 + this.int(3)) };
      case 6:
        return { const: this.pick(['a', 1, 5, null, 'old']) };
      case 7:
        return this.chance(0.5) ? {} : { type: 'null' };
      case 8:
        return { type: 'string', enum: this.sub(['a', 'b', 1], 2) };
      case 9:
        return this.chance(0.5) ? true : { not: { type: this.pick(['string', 'boolean', 'integer']) } };
      default:
        return { $ref: `#/$defs/${this.pick(['A', 'B'])}` };
    }
  }

  sub(list, n) {
    const out = [];
    for (const v of list) if (out.length < n && this.chance(0.5)) out.push(v);
    return out.length > 0 ? out : [list[0]];
  }

  schema(depth) {
    if (depth <= 0 || this.chance(0.35)) return this.leaf();
    switch (this.int(8)) {
      case 0:
      case 1:
      case 2: {
        const s = { type: 'object', properties: {} };
        if (this.chance(0.2)) delete s.type;
        for (const name of NAMES) if (this.chance(0.4)) s.properties[name] = this.schema(depth - 1);
        const required = Object.keys(s.properties).filter(() => this.chance(0.5));
        if (required.length > 0) s.required = required;
        const closing = this.int(6);
        if (closing === 0) s.additionalProperties = false;
        else if (closing === 1) s.additionalProperties = this.leaf();
        else if (closing === 2) s.unevaluatedProperties = false;
        if (this.chance(0.2)) s.patternProperties = { '^x': this.leaf() };
        if (this.chance(0.1)) s.dependentRequired = { a: [this.pick(NAMES)] };
        if (this.chance(0.1)) s.dependentSchemas = { [this.pick(NAMES)]: this.schema(depth - 1) };
        return s;
      }
      case 3: {
        const s = { type: 'array' };
        if (this.chance(0.3)) s.prefixItems = [this.schema(depth - 1)];
        if (this.chance(0.7)) s.items = this.schema(depth - 1);
        if (this.chance(0.3)) s.maxItems = 1 + this.int(3);
        if (this.chance(0.2)) s.minItems = this.int(2);
        if (this.chance(0.15)) s.contains = this.leaf();
        if (this.chance(0.15)) s.unevaluatedItems = false;
        return s;
      }
      case 4:
        return { anyOf: [this.schema(depth - 1), this.chance(0.5) ? { type: 'null' } : this.schema(depth - 1)] };
      case 5:
        return this.chance(0.5)
          ? { oneOf: [this.schema(depth - 1), this.schema(depth - 1)] }
          : { oneOf: [this.discriminated(1), this.discriminated(2)] };
      case 6:
        return this.chance(0.5) ? { allOf: [this.schema(depth - 1), this.leaf()] } : { not: this.schema(depth - 1) };
      default:
        return { if: this.leaf(), then: this.leaf(), ...(this.chance(0.5) ? { else: this.leaf() } : {}) };
    }
  }

  discriminated(k) {
    const s = { properties: { k: { const: k } }, required: ['k'] };
    if (this.chance(0.5)) s.type = 'object';
    return s;
  }

  /** A root: a schema with $defs A and B (A sometimes a resource of its own, with its own B). */
  root() {
    const body = this.schema(3);
    const s = typeof body === 'object' ? { ...body } : { allOf: [body] };
    s.$defs = { A: this.schema(1), B: this.leaf() };
    if (typeof s.$defs.B === 'object' && s.$defs.B.$ref !== undefined) s.$defs.B = { type: 'integer' };
    if (typeof s.$defs.A === 'object' && JSON.stringify(s.$defs.A).includes('#/$defs/A')) s.$defs.A = { type: 'string' };
    if (this.chance(0.25)) {
      // A nested resource: its '#/$defs/B' is its own B, not the root's.
      s.$defs.A = { $id: 'https://tool-registry.invalid/a.json', $defs: { B: this.leaf() }, type: 'object', properties: { id: { $ref: '#/$defs/B' } }, required: ['id'] };
      if (s.$defs.A.$defs.B.$ref !== undefined) s.$defs.A.$defs.B = { type: 'integer' };
    }
    return s;
  }

  /** Every subschema position of a root: [parent, key] pairs, the root as [null, null]. */
  positions(root) {
    const out = [[null, null]];
    const walk = (node, depth) => {
      if (typeof node !== 'object' || node === null || depth > 6) return;
      const visit = (parent, key) => {
        out.push([parent, key]);
        walk(parent[key], depth + 1);
      };
      for (const key of ['items', 'not', 'if', 'then', 'else', 'contains', 'additionalProperties']) if (typeof node[key] === 'object' && node[key] !== null) visit(node, key);
      for (const key of ['properties', 'patternProperties', '$defs']) if (node[key]) for (const name of Object.keys(node[key])) visit(node[key], name);
      for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) if (Array.isArray(node[key])) node[key].forEach((_, i) => visit(node[key], i));
    };
    walk(root, 0);
    return out;
  }

  /** One random edit somewhere in a copy of `root`. */
  edit(root) {
    const copy = clone(root);
    const [parent, key] = this.pick(this.positions(copy));
    const node = parent === null ? copy : parent[key];
    const changed = this.editNode(node, parent === null);
    if (parent === null) return changed;
    parent[key] = changed;
    return copy;
  }

  editNode(node, isRoot) {
    if (typeof node !== 'object') return this.chance(0.5) ? this.leaf() : !node;
    const s = { ...node };
    const keep = (wrapper) => {
      // The root keeps its $defs where its refs look for them.
      if (!isRoot || s.$defs === undefined) return wrapper;
      const { $defs, ...rest } = s;
      const inner = JSON.parse(JSON.stringify(wrapper).split(JSON.stringify(s)).join(JSON.stringify(rest)));
      return { ...inner, $defs };
    };
    switch (this.int(23)) {
      case 0:
        return isRoot ? { ...this.schema(2), $defs: s.$defs } : this.schema(2);
      case 1:
      case 2: {
        const key = this.pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);
        if (key in s && this.chance(0.4)) delete s[key];
        else s[key] = Math.max(0, (typeof s[key] === 'number' ? s[key] : 2) + this.pick([-1, 1, 0.5, -0.5, 2]));
        return s;
      }
      case 3:
        if ('multipleOf' in s && this.chance(0.3)) delete s.multipleOf;
        else s.multipleOf = this.pick(MULTIPLES);
        return s;
      case 4: {
        const types = Array.isArray(s.type) ? s.type : typeof s.type === 'string' ? [s.type] : [];
        const t = this.pick(['string', 'integer', 'number', 'null', 'boolean', 'object', 'array']);
        if (this.chance(0.3)) delete s.type;
        else s.type = types.includes(t) ? types.filter((x) => x !== t) : [...types, t];
        return s;
      }
      case 5: {
        if ('const' in s) return this.chance(0.5) ? { ...s, const: this.pick(['a', 1, 5, null]) } : (({ const: c, ...rest }) => ({ ...rest, enum: [c, this.pick(['a', 5, 'b'])] }))(s);
        const values = Array.isArray(s.enum) ? s.enum : [];
        const v = this.pick(['a', 'b', 'c', 1, 2, 3, 5, null]);
        s.enum = values.some((x) => x === v) ? values.filter((x) => x !== v) : [...values, v];
        if (s.enum.length === 0) s.enum = [v];
        return s;
      }
      case 6: {
        const properties = { ...(s.properties ?? {}) };
        const name = this.pick(NAMES);
        if (name in properties && this.chance(0.5)) delete properties[name];
        else properties[name] = this.leaf();
        s.properties = properties;
        if (s.type === undefined && this.chance(0.5)) s.type = 'object';
        return s;
      }
      case 7: {
        const name = this.pick(NAMES);
        const required = Array.isArray(s.required) ? s.required : [];
        s.required = required.includes(name) ? required.filter((n) => n !== name) : [...required, name];
        return s;
      }
      case 8: {
        const options = [undefined, false, true, this.leaf()];
        const v = this.pick(options);
        if (v === undefined) delete s.additionalProperties;
        else s.additionalProperties = v;
        return s;
      }
      case 9:
        return keep({ anyOf: [s, { type: 'null' }] });
      case 10:
        return keep(this.pick([{ anyOf: [s] }, { allOf: [s] }, { oneOf: [s] }, { allOf: [{ allOf: [s] }] }]));
      case 11: {
        const branches = s.anyOf ?? s.oneOf ?? s.allOf;
        if (Array.isArray(branches) && branches.length > 0) return isRoot ? { ...this.pick(branches), $defs: s.$defs } : this.pick(branches);
        return keep({ allOf: [s, this.leaf()] });
      }
      case 12:
        // Rewrites that keep the meaning.
        if (Array.isArray(s.type) && !Object.keys(s).some((k) => k !== 'type' && k !== '$defs')) return { ...(s.$defs ? { $defs: s.$defs } : {}), anyOf: s.type.map((t) => ({ type: t })) };
        if (s.type === 'integer' && typeof s.minimum === 'number') return (({ minimum, ...rest }) => ({ ...rest, exclusiveMinimum: minimum - 1 }))(s);
        if (s.type === 'integer' && typeof s.maximum === 'number') return { ...s, maximum: s.maximum + 0.5 };
        if (s.type === 'integer' && s.multipleOf === undefined) return { ...s, type: 'number', multipleOf: 1 };
        if (s.type === 'array') return { ...s, minItems: s.minItems ?? 0 };
        if (Array.isArray(s.oneOf)) return (({ oneOf, ...rest }) => ({ ...rest, anyOf: oneOf }))(s);
        if (Array.isArray(s.enum) && s.enum.every((v) => Number.isInteger(v))) return { type: 'integer', minimum: Math.min(...s.enum), maximum: Math.max(...s.enum) };
        return { ...s, minLength: s.minLength ?? 0 };
      case 13:
        if (isRoot) return s;
        return { $ref: `#/$defs/${this.pick(['A', 'B'])}` };
      case 14:
        s.pattern = this.pick(PATTERNS);
        if (s.type === undefined) s.type = 'string';
        return s;
      case 15:
        if ('unevaluatedProperties' in s) delete s.unevaluatedProperties;
        else if (s.properties !== undefined) s.unevaluatedProperties = false;
        else if ('unevaluatedItems' in s) delete s.unevaluatedItems;
        else if (s.type === 'array') s.unevaluatedItems = false;
        return s;
      case 16:
        if (s.if !== undefined && this.chance(0.5)) s.then = this.leaf();
        else if (s.if !== undefined) delete s.if;
        else Object.assign(s, { if: this.leaf(), then: this.leaf() });
        return s;
      case 17:
        if (Array.isArray(s.prefixItems) && this.chance(0.5)) s.prefixItems = s.prefixItems.slice(0, -1);
        else s.prefixItems = [...(s.prefixItems ?? []), this.leaf()];
        if (s.type === undefined) s.type = 'array';
        return s;
      case 18:
        if (s.not !== undefined) return this.chance(0.5) ? (({ not: _not, ...rest }) => rest)(s) : { ...s, not: this.leaf() };
        return { ...s, not: this.leaf() };
      case 19:
        if (s.patternProperties !== undefined) delete s.patternProperties;
        else s.patternProperties = { [this.pick(['^x', '^a', '^k'])]: this.leaf() };
        return s;
      case 20:
        if (Array.isArray(s.anyOf)) return { ...s, anyOf: [...s.anyOf, this.leaf()] };
        if (Array.isArray(s.oneOf)) return { ...s, oneOf: [...s.oneOf, this.chance(0.5) ? this.leaf() : this.discriminated(3)] };
        return keep({ anyOf: [s, this.leaf()] });
      case 21: {
        const key = this.pick(['dependentRequired', 'dependentSchemas']);
        const map = { ...(s[key] ?? {}) };
        const name = this.pick(NAMES);
        if (name in map && this.chance(0.4)) delete map[name];
        else map[name] = key === 'dependentRequired' ? this.sub(NAMES, 2) : this.leaf();
        s[key] = map;
        return s;
      }
      default:
        if (s.contains !== undefined) delete s.contains;
        else s.contains = this.leaf();
        return s;
    }
  }

  /** A value for a schema of this grammar (valid more often than not) or a mutation of one. */
  value(schema, root, depth = 0) {
    if (depth > 4 || typeof schema !== 'object' || schema === null || this.chance(0.08)) return this.any(depth);
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.split('/').pop();
      const defs = schema.$ref.startsWith('#') ? root.$defs : undefined;
      return this.value(defs?.[name] ?? (root.$defs?.A?.$defs?.[name]) ?? true, root, depth + 1);
    }
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum)) return this.pick(schema.enum);
    for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(schema[key]) && this.chance(0.7)) return this.value(this.pick(schema[key]), root, depth + 1);
    const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === 'string' ? [schema.type] : ['string', 'integer', 'object', 'null', 'array', 'boolean', 'number'];
    switch (this.pick(types)) {
      case 'string':
        return this.pick(STRINGS);
      case 'integer':
        return this.pick(NUMBERS.filter(Number.isInteger));
      case 'number':
        return this.pick(NUMBERS);
      case 'boolean':
        return this.chance(0.5);
      case 'null':
        return null;
      case 'array': {
        const out = [];
        const n = this.int(4);
        for (let i = 0; i < n; i++) out.push(this.value(Array.isArray(schema.prefixItems) && i < schema.prefixItems.length ? schema.prefixItems[i] : (schema.items ?? true), root, depth + 1));
        return out;
      }
      default: {
        const out = {};
        const properties = schema.properties ?? {};
        for (const [name, sub] of Object.entries(properties)) {
          if ((Array.isArray(schema.required) && schema.required.includes(name)) || this.chance(0.6)) out[name] = this.value(sub, root, depth + 1);
        }
        if (this.chance(0.3)) out[this.pick(['x1', 'zz', ...NAMES])] = this.any(depth + 1);
        return out;
      }
    }
  }

  any(depth) {
    const kind = this.int(depth > 2 ? 5 : 7);
    if (kind === 0) return null;
    if (kind === 1) return this.chance(0.5);
    if (kind === 2) return this.pick(NUMBERS);
    if (kind === 3 || kind === 4) return this.pick(STRINGS);
    if (kind === 5) return [this.any(depth + 1)];
    return { [this.pick(NAMES)]: this.any(depth + 1) };
  }

  /** A value changed a little: a property dropped, added or changed, an item added, a number moved. */
  mutate(value) {
    if (Array.isArray(value)) return this.chance(0.5) ? [...value, this.any(2)] : value.slice(1);
    if (typeof value === 'object' && value !== null) {
      const out = { ...value };
      const keys = Object.keys(out);
      if (keys.length > 0 && this.chance(0.5)) {
        const key = this.pick(keys);
        if (this.chance(0.5)) delete out[key];
        else out[key] = this.mutate(out[key]);
      } else out[this.pick(NAMES)] = this.any(2);
      return out;
    }
    if (typeof value === 'number') return value + this.pick([1, -1, 0.5, 10]);
    if (typeof value === 'string') return this.pick([`${value}x`, value.slice(1), 'old', 5]);
    return this.any(1);
  }
}

/** Frozen, as a registry's stored specs are (compareSchemas keeps what it learns of a frozen schema). */
function freeze(value) {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) freeze(inner);
  }
  return value;
}

function newAjv() {
  // addUsedSchema: false and code.optimize: false make a compile about 4x cheaper; nothing else changes.
  return new Ajv2020.default({ strict: false, validateFormats: false, allErrors: false, addUsedSchema: false, code: { optimize: false } });
}

function judge(validator, value) {
  try {
    return validator(value) === true;
  } catch {
    return undefined;
  }
}

/** Fewer keywords, same failure: tries dropping keywords and replacing subschemas with true, on both sides at once and on each. */
export function shrinkPair(pair, fails) {
  let current = pair;
  for (let round = 0; round < 30; round++) {
    let improved = false;
    for (const candidate of reductions(current)) {
      if (fails(candidate)) {
        current = candidate;
        improved = true;
        break;
      }
    }
    if (!improved) break;
  }
  return current;
}

function* reductions(pair) {
  const sides = [0, 1];
  const paths = new Set();
  const collect = (node, path) => {
    if (typeof node !== 'object' || node === null) return;
    paths.add(JSON.stringify(path));
    for (const [key, value] of Object.entries(node)) collect(value, [...path, key]);
  };
  collect(pair.before, []);
  collect(pair.after, []);
  const at = (root, path) => path.reduce((node, key) => (node === undefined || node === null ? undefined : node[key]), root);
  const without = (root, path) => {
    if (path.length === 0) return true;
    const copy = clone(root);
    const parent = at(copy, path.slice(0, -1));
    if (parent === undefined || parent === null || !(path[path.length - 1] in parent)) return undefined;
    if (Array.isArray(parent)) {
      if (parent.length <= 1) return undefined;
      parent.splice(Number(path[path.length - 1]), 1);
    } else delete parent[path[path.length - 1]];
    return copy;
  };
  for (const text of [...paths].sort((x, y) => x.length - y.length)) {
    const path = JSON.parse(text);
    const both = { before: without(pair.before, path), after: without(pair.after, path) };
    if (both.before !== undefined && both.after !== undefined) yield { ...pair, ...both };
    for (const side of sides) {
      const key = side === 0 ? 'before' : 'after';
      const one = without(pair[key], path);
      if (one !== undefined) yield { ...pair, [key]: one };
    }
  }
}

/**
 * Runs the fuzz: `families` random bases, `variants` schemas each, every ordered pair of a
 * family judged by `compareSchemas` (inputs) and `compareToolSchemas` (outputs), values by ajv.
 * Returns the counts and the unsound verdicts found (each shrunk, with its counterexample).
 */
export function fuzzCompatibility({ seed = 38, pairs = 10_000, variants = 14, valuesPerVariant = 10, compareSchemas, compareToolSchemas, maxUnsound = 3 }) {
  const gen = new Gen(seed);
  let ajv = newAjv();
  const stats = {
    pairs: 0,
    families: 0,
    compiles: 0,
    input: { compatible: 0, breaking: 0, undecidable: 0, confirmed: 0, unsoundCount: 0, unsound: [] },
    output: { compatible: 0, breaking: 0, undecidable: 0, confirmed: 0, unsoundCount: 0, unsound: [] },
    compileMs: 0,
    compareMs: 0,
  };
  const compile = (schema) => {
    const started = performance.now();
    try {
      return ajv.compile(schema);
    } catch {
      return undefined;
    } finally {
      stats.compileMs += performance.now() - started;
    }
  };
  const verdicts = (before, after) => {
    const started = performance.now();
    const input = compareSchemas(before, after);
    const output = compareToolSchemas({ input_schema: {}, output_schema: before }, { input_schema: {}, output_schema: after });
    stats.compareMs += performance.now() - started;
    return { input, output };
  };
  for (let f = 0; stats.pairs < pairs; f++) {
    if (f % 50 === 49) ajv = newAjv();
    stats.families++;
    const base = gen.root();
    const schemas = [base];
    while (schemas.length < variants) {
      let s = base;
      const edits = 1 + gen.int(3);
      for (let e = 0; e < edits; e++) s = gen.edit(s);
      schemas.push(s);
    }
    for (const schema of schemas) freeze(schema);
    const texts = schemas.map((s) => JSON.stringify(s));
    const validators = schemas.map(compile);
    stats.compiles += schemas.length;
    const values = [];
    for (const schema of schemas) {
      for (let i = 0; i < valuesPerVariant; i++) {
        const v = gen.value(schema, schema);
        values.push(v, gen.mutate(v));
      }
    }
    const valid = validators.map((validator) => values.map((v) => (validator === undefined ? undefined : judge(validator, v))));
    for (let i = 0; i < schemas.length; i++) {
      for (let j = 0; j < schemas.length; j++) {
        // Pairs of the same text are not counted: they say nothing.
        if (i === j || texts[i] === texts[j] || validators[i] === undefined || validators[j] === undefined) continue;
        stats.pairs++;
        const { input, output } = verdicts(schemas[i], schemas[j]);
        for (const [direction, verdict, from, to] of [
          ['input', input, i, j],
          ['output', output, j, i],
        ]) {
          const bucket = stats[direction];
          const counterexample = values.findIndex((_, x) => valid[from][x] === true && valid[to][x] === false);
          if (verdict.compatible) {
            bucket.compatible++;
            if (counterexample !== -1) bucket.unsoundCount++;
            if (counterexample !== -1 && bucket.unsound.length < maxUnsound) {
              bucket.unsound.push(shrunk(direction, schemas[i], schemas[j], values[counterexample], { compareSchemas, compareToolSchemas, gen }));
            }
          } else {
            if (verdict.differences.some((d) => d.breaking === true)) bucket.breaking++;
            else bucket.undecidable++;
            if (counterexample !== -1) bucket.confirmed++;
          }
        }
      }
    }
  }
  return stats;
}

/** The unsound pair, shrunk while it stays compatible and ajv still tells a counterexample. */
function shrunk(direction, before, after, value, { compareSchemas, compareToolSchemas, gen }) {
  const ajv = newAjv();
  const find = (pair) => {
    const verdict = direction === 'input' ? compareSchemas(pair.before, pair.after) : compareToolSchemas({ input_schema: {}, output_schema: pair.before }, { input_schema: {}, output_schema: pair.after });
    if (!verdict.compatible) return undefined;
    let from;
    let to;
    try {
      from = ajv.compile(direction === 'input' ? pair.before : pair.after);
      to = ajv.compile(direction === 'input' ? pair.after : pair.before);
    } catch {
      return undefined;
    }
    const candidates = [pair.value, value];
    for (let i = 0; i < 20; i++) candidates.push(gen.value(direction === 'input' ? pair.before : pair.after, direction === 'input' ? pair.before : pair.after));
    return candidates.find((v) => judge(from, v) === true && judge(to, v) === false);
  };
  let found;
  const result = shrinkPair({ before, after, value }, (pair) => {
    found = find(pair);
    if (found === undefined) return false;
    pair.value = found;
    return true;
  });
  return { direction, before: result.before, after: result.after, value: result.value };
}
