// Optional semantic ranking: the user's embedder turns texts into vectors; tools' vectors are
// cached per spec fingerprint (a spec never changes under its fingerprint), the query's is
// asked for each search; the two rankings (BM25F and cosine similarity) are fused by
// reciprocal rank fusion over the tools that match the query's terms.
import { compareHits } from './search-index.js';
import type { RankKey } from './search-index.js';

import type { EmbedFunction } from '../registry.js';

/** The user's embedder: one vector per text, all of the same length. May be async. */
export type Embed = EmbedFunction;

/** RRF's constant (Cormack et al. 2009): damps the weight of the very first ranks. */
export const RRF_K = 60;

const caches = new WeakMap<Embed, Map<string, Float64Array>>();

/** The vector cache of an embedder (per embedder function, shared by every registry and set that uses it). */
export function vectorCache(embed: Embed): Map<string, Float64Array> {
  let cache = caches.get(embed);
  if (cache === undefined) {
    cache = new Map();
    caches.set(embed, cache);
  }
  return cache;
}

function checkVectors(vectors: unknown, count: number, dimensions: number | undefined): Float64Array[] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw new TypeError(`embed() must return one vector per text (${count}), got ${Array.isArray(vectors) ? `${vectors.length} vectors` : typeof vectors}`);
  }
  return vectors.map((vector: unknown, index) => {
    if (!Array.isArray(vector) && !ArrayBuffer.isView(vector)) throw new TypeError(`embed() returned a non-array vector at [${index}]`);
    const values = Float64Array.from(vector as ArrayLike<number>);
    if ((dimensions !== undefined && values.length !== dimensions) || values.length === 0) {
      throw new TypeError(`embed() returned an invalid vector at [${index}]: it must hold ${dimensions ?? 'some'} finite numbers, got ${values.length}`);
    }
    // Name the bad number: "got 3" for a vector of the right length holding NaN said nothing.
    const bad = values.findIndex((value) => !Number.isFinite(value));
    if (bad !== -1) throw new TypeError(`embed() returned an invalid vector at [${index}]: [${index}][${bad}] must be a finite number, got ${String(values[bad])}`);
    return values;
  });
}

function cosine(a: Float64Array, b: Float64Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let index = 0; index < a.length; index++) {
    const x = a[index] as number;
    const y = b[index] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** What fusion needs of a hit: its rank key, the fingerprint its vector is cached under and the text to embed. */
export interface FusionInput extends RankKey {
  readonly fingerprint: string;
  text(): string;
}

/**
 * The hits re-scored by RRF of their BM25F rank and their cosine rank (ties by name): a
 * new score per hit, in the input's order. Embeds the query and the tools not yet cached.
 */
export async function fuse(hits: readonly FusionInput[], query: string, embed: Embed): Promise<number[]> {
  if (hits.length === 0) return [];
  const cache = vectorCache(embed);
  const missing = hits.filter((hit) => !cache.has(hit.fingerprint));
  const texts = [query, ...missing.map((hit) => hit.text())];
  const [queryVector, ...vectors] = checkVectors(await embed(texts), texts.length, undefined);
  const dimensions = (queryVector as Float64Array).length;
  missing.forEach((hit, index) => {
    const vector = vectors[index] as Float64Array;
    if (vector.length !== dimensions) throw new TypeError(`embed() returned vectors of different lengths (${dimensions} and ${vector.length})`);
    cache.set(hit.fingerprint, vector);
  });
  const byText = hits.map((hit, index) => ({ index, key: hit }));
  byText.sort((a, b) => compareHits(a.key, b.key));
  const similarity = hits.map((hit) => {
    const vector = cache.get(hit.fingerprint) as Float64Array;
    if (vector.length !== dimensions) throw new TypeError(`embed() returned vectors of different lengths (${dimensions} and ${vector.length})`);
    return cosine(queryVector as Float64Array, vector);
  });
  const bySimilarity = hits.map((hit, index) => ({ index, key: { score: similarity[index] as number, name: hit.name } }));
  bySimilarity.sort((a, b) => compareHits(a.key, b.key));
  const fused = new Array<number>(hits.length).fill(0);
  byText.forEach((entry, rank) => {
    fused[entry.index] = 1 / (RRF_K + rank + 1);
  });
  // Added in a second pass, in rank order, so every store sums the same numbers in the same order.
  bySimilarity.forEach((entry, rank) => {
    fused[entry.index] = (fused[entry.index] as number) + 1 / (RRF_K + rank + 1);
  });
  return fused;
}
