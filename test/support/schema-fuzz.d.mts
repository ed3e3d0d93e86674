// Types of schema-fuzz.mjs.
export interface Unsound {
  readonly direction: 'input' | 'output';
  readonly before: unknown;
  readonly after: unknown;
  /** Valid before and refused after (input), or valid after and refused before (output), by ajv. */
  readonly value: unknown;
}

export interface DirectionStats {
  /** Pairs judged compatible in this direction. */
  compatible: number;
  /** Judged incompatible with at least one difference `breaking: true`. */
  breaking: number;
  /** Judged incompatible with only undecidable differences. */
  undecidable: number;
  /** Incompatible verdicts for which a sampled value showed the break (provably right). */
  confirmed: number;
  /** Compatible verdicts with a counterexample. */
  unsoundCount: number;
  /** The first of them, shrunk (at most maxUnsound). */
  unsound: Unsound[];
}

export interface FuzzStats {
  pairs: number;
  families: number;
  compiles: number;
  input: DirectionStats;
  output: DirectionStats;
  compileMs: number;
  compareMs: number;
}

interface Comparison {
  readonly compatible: boolean;
  readonly differences: readonly { readonly breaking: boolean | 'undecidable' }[];
}

export function fuzzCompatibility(options: {
  readonly seed?: number;
  /** Judge at least this many pairs of different schemas (default 10,000). */
  readonly pairs?: number;
  readonly variants?: number;
  readonly valuesPerVariant?: number;
  readonly compareSchemas: (before: unknown, after: unknown) => Comparison;
  readonly compareToolSchemas: (before: { input_schema: unknown; output_schema: unknown }, after: { input_schema: unknown; output_schema: unknown }) => Comparison;
  /** The runtime's compileSchema (src/runtime/schema-validator.ts): the judge. */
  readonly compileSchema: (schema: never, applyDefaults: boolean) => (value: unknown) => unknown;
  /** How often a generated subschema gets a `default` (0.15). */
  readonly defaults?: number;
  /** How often a family is draft-07 (0.2). */
  readonly draft07?: number;
  /** Defaults only in every other family (the others compile one validator per schema, not two). */
  readonly defaultsInEveryOtherFamily?: boolean;
  readonly maxUnsound?: number;
}): FuzzStats;

export function shrinkPair<T extends { before: unknown; after: unknown }>(pair: T, fails: (candidate: T) => boolean): T;

/** A schema in draft-07's words (definitions, tuple items, dependencies). */
export function toDraft07(schema: unknown): unknown;
