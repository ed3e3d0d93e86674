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
// checked under every variant by the runtime's own validator (its compileSchema: its ajv
// options, the draft its `$schema` names, and for inputs ajv's useDefaults filling defaults
// into a copy of each value, as a call's arguments are checked): a `compatible` input verdict
// with a value valid before and refused after is unsound; so is a `compatible` output verdict
// with a value valid after and refused before (outputs are checked without defaults).
// Defaults are generated at every depth (`defaults`), and some families are draft-07 (`draft07`). Numbers stay below 1e21 in magnitude: above it ajv's multipleOf
// (the quotient against its parseInt) refuses every value, which the specification does not say.
import { performance } from 'node:perf_hooks';
import { random } from '../../bench/lib/random.mjs';

const NAMES = ['a', 'b', 'k', 'id'];
const clone = (value) => JSON.parse(JSON.stringify(value));
const isRecord = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const STRINGS = ['', 'a', 'ab', 'abc', 'old', 'other', 'x1', 'é', 'A'];
const NUMBERS = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, -1, 0.5, 1.5, 2.5, 5.5, 33, 1.0000000001, 100];
const PATTERNS = ['^old$', '^(old|other)$', 'old', '^a', '^(?:a|ab)$', '^[ab]+$'];
const MULTIPLES = [1, 2, 3, 4, 10, 11, 0.5, 1.0000000001];
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/**
 * The same schema in draft-07's words: `definitions`, a tuple `items` with `additionalItems`,
 * `dependencies`. What draft-07 has no word for (unevaluated*) stays, as an annotation there.
 */
export function toDraft07(node) {
  if (Array.isArray(node)) return node.map(toDraft07);
  if (typeof node !== 'object' || node === null) return node;
  const map = (object) => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, toDraft07(v)]));
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (value === undefined) continue;
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'required') out[key] = value;
    else if (key === '$defs' || key === 'definitions') out.definitions = { ...out.definitions, ...map(value) };
    else if (key === '$ref' && typeof value === 'string') out.$ref = value.replace('#/$defs/', '#/definitions/');
    else if (key === 'properties' || key === 'patternProperties') out[key] = map(value);
    else if (key === 'prefixItems') {
      out.items = toDraft07(value);
      if (node.items !== undefined && !Array.isArray(node.items)) out.additionalItems = toDraft07(node.items);
    } else if (key === 'items' && Array.isArray(node.prefixItems)) continue;
    else if (key === 'dependentSchemas') out.dependencies = { ...out.dependencies, ...map(value) };
    else if (key === 'dependentRequired') out.dependencies = { ...value, ...out.dependencies };
    else if (key === 'dependencies') out.dependencies = { ...out.dependencies, ...Object.fromEntries(Object.entries(value).map(([k, v]) => [k, Array.isArray(v) ? v : toDraft07(v)])) };
    else out[key] = typeof value === 'object' && value !== null ? toDraft07(value) : value;
  }
  return out;
}

/** A JSON Schema generator, an editor and a value sampler over one seeded stream of numbers. */
class Gen {
  /** `defaults`: how often a subschema gets a `default`; `draft07`: how often a family is draft-07. */
  constructor(seed, { defaults = 0, draft07 = 0 } = {}) {
    this.next = random(seed);
    this.defaults = defaults;
    this.draft07 = draft07;
    this.root07 = false;
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

  /** A `default` beside some schemas: mostly a value of the schema, sometimes any value. */
  withDefault(s) {
    if (typeof s !== 'object' || s === null || this.defaults === 0 || !this.chance(this.defaults)) return s;
    const value = this.chance(0.75) ? this.value(s, { $defs: { A: { type: 'object' }, B: { type: 'integer' } } }, 2) : this.any(2);
    return { ...s, default: value === undefined ? null : value };
  }

  leaf() {
    return this.withDefault(this.bareLeaf());
  }

  bareLeaf() {
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
    return this.withDefault(this.bareSchema(depth));
  }

  bareSchema(depth) {
    if (depth <= 0 || this.chance(0.35)) return this.bareLeaf();
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
    this.root07 = this.draft07 > 0 && this.chance(this.draft07);
    return this.root07 ? { $schema: DRAFT_07, ...toDraft07(s) } : s;
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
      for (const key of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']) if (isRecord(node[key])) for (const name of Object.keys(node[key])) visit(node[key], name);
      if (isRecord(node.dependencies)) for (const name of Object.keys(node.dependencies)) if (!Array.isArray(node.dependencies[name])) visit(node.dependencies, name);
      for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']) if (Array.isArray(node[key])) node[key].forEach((_, i) => visit(node[key], i));
    };
    walk(root, 0);
    return out;
  }

  /** One random edit somewhere in a copy of `root`. */
  edit(root) {
    // A draft-07 root is edited with its definitions named as 2020-12 names them, then put back in draft-07's words.
    const copy = root.$schema === DRAFT_07 ? JSON.parse(JSON.stringify(root).replaceAll('"definitions":', '"$defs":').replaceAll('#/definitions/', '#/$defs/')) : clone(root);
    const [parent, key] = this.pick(this.positions(copy));
    const node = parent === null ? copy : parent[key];
    const changed = this.editNode(node, parent === null);
    // A draft-07 family mostly stays in draft-07's words (else its new 2020-12 keywords are annotations there).
    const draft07 = (root) => (this.root07 && this.chance(0.9) ? { ...toDraft07(root), $schema: DRAFT_07 } : root);
    if (parent === null) return draft07(changed);
    parent[key] = changed;
    return draft07(copy);
  }

  editNode(node, isRoot) {
    if (typeof node !== 'object') return this.chance(0.5) ? this.leaf() : !node;
    const s = { ...node };
    if (this.defaults > 0 && this.chance(this.defaults / 2)) {
      // The order ajv fills defaults and checks in: a keyword moved into an allOf branch (first
      // or last) or out of one, allOf branches reordered, a $ref beside the rest.
      const keys = Object.keys(s).filter((k) => k !== '$defs' && k !== 'definitions' && k !== '$schema' && k !== 'default');
      const order = this.int(5);
      if (order === 0 && keys.length > 0) {
        const key = this.pick(keys);
        const { [key]: moved, ...rest } = s;
        const branches = Array.isArray(rest.allOf) ? rest.allOf : [];
        return { ...rest, allOf: this.chance(0.5) ? [{ [key]: moved }, ...branches] : [...branches, { [key]: moved }] };
      }
      if (order === 1 && Array.isArray(s.allOf) && s.allOf.length > 1) return { ...s, allOf: [...s.allOf].reverse() };
      if (order === 2 && Array.isArray(s.allOf)) {
        const { allOf, ...rest } = s;
        return allOf.reduce((out, branch) => (typeof branch === 'object' ? { ...branch, ...out } : out), rest);
      }
      if (order === 3 && !isRoot && s.$ref === undefined) return { ...s, $ref: `#/$defs/${this.pick(['A', 'B'])}` };
      // uniqueItems compares items a default may have been filled into.
      if (order === 4 && (s.type === 'array' || s.items !== undefined)) return { ...s, uniqueItems: s.uniqueItems !== true };
      // A default added, changed or removed (the runtime fills it in for inputs).
      if ('default' in s && this.chance(0.4)) delete s.default;
      else {
        const { default: _old, ...rest } = s;
        const value = this.chance(0.6) ? this.value(rest, { $defs: {} }, 2) : this.any(2);
        s.default = value === undefined ? null : value;
      }
      return s;
    }
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
      const defs = schema.$ref.startsWith('#') ? (root.$defs ?? root.definitions) : undefined;
      const nested = root.$defs?.A ?? root.definitions?.A;
      return this.value(defs?.[name] ?? nested?.$defs?.[name] ?? nested?.definitions?.[name] ?? true, root, depth + 1);
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
        const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
        const rest = Array.isArray(schema.items) ? (schema.additionalItems ?? true) : (schema.items ?? true);
        for (let i = 0; i < n; i++) out.push(this.value(i < tuple.length ? tuple[i] : rest, root, depth + 1));
        return out;
      }
      default: {
        const out = {};
        const properties = schema.properties ?? {};
        for (const [name, sub] of Object.entries(properties)) {
          // A property with a default is often left out, required or not: the runtime fills it in.
          if (typeof sub === 'object' && sub !== null && 'default' in sub && this.chance(0.5)) continue;
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

/**
 * The runtime's judges of one schema: `input` with defaults filled in (ajv's useDefaults, as
 * the runtime checks a call's arguments), `output` without (as it checks a result); the same
 * function when the schema has no default. `compileSchema` is the runtime's own
 * (src/runtime/schema-validator.ts), so the options and the draft (by `$schema`) are its.
 * Undefined when it does not compile.
 */
function judges(compileSchema, schema) {
  try {
    if (!JSON.stringify(schema).includes('"default":')) {
      const check = compileSchema(schema, false);
      return { input: check, output: check };
    }
    const input = compileSchema(schema, true);
    // Each value is checked on a copy, as the runtime checks its own copy of a call's arguments: defaults are filled into it.
    return { input: (value) => input(globalThis.structuredClone(value)), output: compileSchema(schema, false) };
  } catch {
    return undefined;
  }
}

/** true, false, or undefined when it cannot tell (the check ran out of its pattern time, as on a loaded machine: no verdict). */
function judge(check, value) {
  try {
    const issues = check(value);
    if (issues === undefined) return true;
    return issues.some((issue) => issue.message.startsWith('could not be checked')) ? undefined : false;
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
export function fuzzCompatibility({ seed = 38, pairs = 10_000, variants = 14, valuesPerVariant = 10, compareSchemas, compareToolSchemas, compileSchema, defaults = 0.15, draft07 = 0.2, defaultsInEveryOtherFamily = false, maxUnsound = 3 }) {
  const gen = new Gen(seed, { defaults, draft07 });
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
      return judges(compileSchema, schema);
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
    stats.families++;
    // defaultsInEveryOtherFamily: the others have none, so their schemas need one validator each, not two.
    gen.defaults = defaultsInEveryOtherFamily && f % 2 === 1 ? 0 : defaults;
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
    // Variants of the same text share their validators.
    const compiled = new Map();
    const validators = texts.map((text, i) => {
      if (!compiled.has(text)) {
        compiled.set(text, compile(schemas[i]));
        stats.compiles++;
      }
      return compiled.get(text);
    });
    const values = [];
    for (const schema of schemas) {
      for (let i = 0; i < valuesPerVariant; i++) {
        const v = gen.value(schema, schema);
        values.push(v, gen.mutate(v));
      }
    }
    // Per direction: inputs are judged with defaults filled in, outputs without.
    const valid = {
      input: validators.map((validator) => values.map((v) => (validator === undefined ? undefined : judge(validator.input, v)))),
      output: validators.map((validator) => (validator === undefined ? [] : validator.output === validator.input ? undefined : values.map((v) => judge(validator.output, v)))),
    };
    valid.output = valid.output.map((row, i) => row ?? valid.input[i]);
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
          const counterexample = values.findIndex((_, x) => valid[direction][from][x] === true && valid[direction][to][x] === false);
          if (verdict.compatible) {
            bucket.compatible++;
            if (counterexample !== -1) bucket.unsoundCount++;
            if (counterexample !== -1 && bucket.unsound.length < maxUnsound) {
              bucket.unsound.push(shrunk(direction, schemas[i], schemas[j], values[counterexample], { compareSchemas, compareToolSchemas, compileSchema, gen }));
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
function shrunk(direction, before, after, value, { compareSchemas, compareToolSchemas, compileSchema, gen }) {
  const find = (pair) => {
    if (typeof pair.before !== 'object' || typeof pair.after !== 'object') return undefined;
    const verdict = direction === 'input' ? compareSchemas(pair.before, pair.after) : compareToolSchemas({ input_schema: {}, output_schema: pair.before }, { input_schema: {}, output_schema: pair.after });
    if (!verdict.compatible) return undefined;
    const x = judges(compileSchema, direction === 'input' ? pair.before : pair.after);
    const y = judges(compileSchema, direction === 'input' ? pair.after : pair.before);
    if (x === undefined || y === undefined) return undefined;
    const from = x[direction];
    const to = y[direction];
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
