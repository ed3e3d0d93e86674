// A tiny element builder: text always goes in as text nodes (never HTML), so a tool's
// description or a problem's detail cannot inject markup.

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

/** A table that scrolls sideways on a narrow screen, reachable by keyboard. */
export function scroller(label, content) {
  return h('div', { class: 'scroller', role: 'region', 'aria-label': label, tabindex: '0' }, content);
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
