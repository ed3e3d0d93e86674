// JSON text too long for one string, written in pieces. V8's longest string is about 512 MiB
// (`buffer.constants.MAX_STRING_LENGTH`): a snapshot, a history or a page longer than that made
// JSON.stringify throw a RangeError, a 500. For JSON data (what the routes answer) the pieces
// join to exactly JSON.stringify's text.

/** Characters a piece of the stream gathers before it is sent (a tool's JSON alone may be longer). */
const CHUNK_CHARS = 64 * 1024;

/** Arrays and plain objects: what JSON.stringify writes member by member (no `toJSON`). */
function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/** What JSON.stringify leaves out of an object (and writes as `null` in an array). */
const omitted = (value: unknown): boolean => value === undefined || typeof value === 'function' || typeof value === 'symbol';

/**
 * `value`'s JSON text in pieces: each member whole when its text fits in a string, else its own
 * members in turn. Only a single string value whose text is too long cannot be written (a RangeError).
 */
function* pieces(value: unknown, tryWhole = true): Generator<string> {
  if (tryWhole) {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      if (!(error instanceof RangeError) || !isContainer(value)) throw error;
    }
    if (text !== undefined) {
      yield text;
      return;
    }
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) yield ',';
      const member: unknown = value[index];
      if (omitted(member)) yield 'null';
      else yield* pieces(member);
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const key of Object.keys(value as Record<string, unknown>)) {
    const member = (value as Record<string, unknown>)[key];
    if (omitted(member)) continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* pieces(member);
  }
  yield '}';
}

/**
 * The JSON text of `value`, an array or plain object whose own text is too long for a string
 * (JSON.stringify threw a RangeError: not tried again), as a byte stream made as it is read. A failure there (one string value too long) errors the
 * stream: the connection is cut before the body's end, never a body that parses. Undefined
 * when `value` is no array or plain object (nothing to cut).
 */
export function jsonStream(value: unknown): ReadableStream<Uint8Array> | undefined {
  if (!isContainer(value)) return undefined;
  const source = pieces(value, false);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const gathered: string[] = [];
      let size = 0;
      for (;;) {
        const next = source.next();
        if (next.done) {
          if (size > 0) controller.enqueue(encoder.encode(gathered.join('')));
          controller.close();
          return;
        }
        // A long piece goes alone: joined with the gathered ones it could pass the longest string.
        if (next.value.length >= CHUNK_CHARS) {
          if (size > 0) controller.enqueue(encoder.encode(gathered.join('')));
          controller.enqueue(encoder.encode(next.value));
          return;
        }
        gathered.push(next.value);
        size += next.value.length;
        if (size >= CHUNK_CHARS) {
          controller.enqueue(encoder.encode(gathered.join('')));
          return;
        }
      }
    },
    cancel() {
      source.return(undefined);
    },
  });
}
