// A tiny element builder: text always goes in as text nodes (never HTML), so a tool's
// description or a problem's detail cannot inject markup; text from the registry goes in
// bidi-isolated (`text()`), so a U+202E in it cannot reverse what follows.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'class') element.className = value;
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/**
 * Text from the registry (a name, version, tag, description, message, schema text), isolated
 * as `<bdi>`: its own direction (dir=auto), and nothing in it (U+202E RIGHT-TO-LEFT OVERRIDE,
 * an unclosed embedding) reaches the text after it.
 */
export function text(value) {
  return h('bdi', {}, balanced(value));
}

/** Text from the registry where no element can go (an `<option>`, the title): FSI … PDI around it. */
export function isolated(value) {
  return `\u2068${balanced(value)}\u2069`;
}

/**
 * The text with its isolates balanced, so that it cannot end the isolation around it: a PDI
 * (U+2069) that closes no LRI, RLI or FSI of the text itself is shown as the escape `\u2069`,
 * and an isolate the text leaves open is closed at its end. Chromium isolates a `<bdi>` by
 * putting an isolate and a PDI around its text in the paragraph, so a stray PDI inside would
 * close it early ("old\u2069\u202e" reversed the text after it) and an open one would swallow
 * its end.
 */
export function balanced(value) {
  let depth = 0;
  let result = '';
  for (const char of String(value)) {
    if (char === '\u2066' || char === '\u2067' || char === '\u2068') depth += 1;
    else if (char === '\u2069') {
      if (depth === 0) {
        result += '\\u2069';
        continue;
      }
      depth -= 1;
    }
    result += char;
  }
  return result + '\u2069'.repeat(depth);
}

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Bidi controls shown as `\uXXXX` escapes: for text the server wrote around registry text (a lint message, a problem's detail). */
export function visibleControls(value) {
  return String(value).replace(BIDI_CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON for reading (`indent` spaces, 0 for one line) with bidi controls shown as `\uXXXX` escapes: the same JSON, visibly. */
export function jsonText(value, indent = 2) {
  if (value === undefined) return 'nothing';
  return visibleControls(JSON.stringify(value, null, indent));
}

/** A box around a table (its border); the table itself wraps to the page's width. */
export function box(content) {
  return h('div', { class: 'box' }, content);
}

export function formatTime(value) {
  if (value === null || value === undefined) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}

export function versionText(version) {
  return version === null || version === undefined ? '(no version)' : version;
}
