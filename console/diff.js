// A line diff (longest common subsequence) of two texts, as rows for a side-by-side view, and
// those rows cut down to the changed hunks with their context.
// The lines both texts begin and end with are kept as they are; past MAX_CELLS, what lies between
// falls back to one block replaced by the other.

const MAX_CELLS = 4_000_000;

/** Rows of `{ kind: 'same' | 'changed' | 'removed' | 'added', left, right }` (line objects or null). */
export function sideBySide(oldText, newText) {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  // Only the lines between a common start and end need the LCS: a spec of 3,000 lines with one
  // line changed was past MAX_CELLS, and shown as every line removed and added.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end += 1;
  const middleA = a.slice(start, a.length - end);
  const middleB = b.slice(start, b.length - end);
  const same = (i, j) => ({ kind: 'same', left: { number: i + 1, text: a[i] }, right: { number: j + 1, text: b[j] } });
  const ops = [
    ...a.slice(0, start).map((_, i) => same(i, i)),
    ...(middleA.length * middleB.length > MAX_CELLS ? fallback(middleA, middleB, start) : lcsOps(middleA, middleB, start)),
    ...a.slice(a.length - end).map((_, k) => same(a.length - end + k, b.length - end + k)),
  ];
  const rows = [];
  let removed = [];
  let added = [];
  const flush = () => {
    const count = Math.max(removed.length, added.length);
    for (let index = 0; index < count; index += 1) {
      const left = removed[index] ?? null;
      const right = added[index] ?? null;
      rows.push({ kind: left && right ? 'changed' : left ? 'removed' : 'added', left, right });
    }
    removed = [];
    added = [];
  };
  for (const op of ops) {
    if (op.kind === 'same') {
      flush();
      rows.push({ kind: 'same', left: op.left, right: op.right });
    } else if (op.kind === 'removed') removed.push(op.left);
    else added.push(op.right);
  }
  flush();
  return rows;
}

/** The LCS's operations; `offset` lines come before `a` and `b` on both sides (their numbers start after them). */
function lcsOps(a, b, offset) {
  const n = a.length;
  const m = b.length;
  // lengths[i][j]: the LCS of a[i..] and b[j..]
  const lengths = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lengths[i][j] = a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: 'same', left: { number: offset + i + 1, text: a[i] }, right: { number: offset + j + 1, text: b[j] } });
      i += 1;
      j += 1;
    } else if (j < m && (i === n || lengths[i][j + 1] >= lengths[i + 1][j])) {
      ops.push({ kind: 'added', right: { number: offset + j + 1, text: b[j] } });
      j += 1;
    } else {
      ops.push({ kind: 'removed', left: { number: offset + i + 1, text: a[i] } });
      i += 1;
    }
  }
  return ops;
}

function fallback(a, b, offset) {
  return [
    ...a.map((text, index) => ({ kind: 'removed', left: { number: offset + index + 1, text } })),
    ...b.map((text, index) => ({ kind: 'added', right: { number: offset + index + 1, text } })),
  ];
}

/**
 * The rows around the changes: each run of `same` rows longer than twice `context` keeps
 * `context` rows on each side of a change and becomes one `{ kind: 'skipped', count }` row.
 */
export function hunks(rows, context = 3) {
  const out = [];
  let index = 0;
  while (index < rows.length) {
    if (rows[index].kind !== 'same') {
      out.push(rows[index]);
      index += 1;
      continue;
    }
    let end = index;
    while (end < rows.length && rows[end].kind === 'same') end += 1;
    const keepBefore = index === 0 ? 0 : context; // after a change
    const keepAfter = end === rows.length ? 0 : context; // before a change
    if (end - index > keepBefore + keepAfter) {
      out.push(...rows.slice(index, index + keepBefore));
      out.push({ kind: 'skipped', count: end - index - keepBefore - keepAfter });
      out.push(...rows.slice(end - keepAfter, end));
    } else out.push(...rows.slice(index, end));
    index = end;
  }
  return out;
}

/**
 * How many schema differences a verdict's list stands for: an entry with `omitted` stands for
 * that many values of one enum place that the API does not name (docs/versions.md).
 */
export function differenceCount(differences) {
  return differences.reduce((sum, difference) => sum + (Number.isSafeInteger(difference.omitted) ? difference.omitted : 1), 0);
}

/** What one difference of a verdict says of its values: `{ before, after }`, or `{ omitted }` (a count, not values). */
export function differenceValues(difference) {
  return Number.isSafeInteger(difference.omitted) ? { omitted: difference.omitted } : { before: difference.before, after: difference.after };
}
