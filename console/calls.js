// The Calls screen (#/calls): the audit log of MCP tool calls, newest first, from
// GET /v1/calls (admin scope), with the API's filters in the address and paging by `before`.
// Every value from a row goes in as isolated text: a caller chooses the tool name it sends.
import { ApiError, base, call, query } from './api.js';
import { box, formatTime, h, text, visibleControls } from './dom.js';

export const CALLS_PAGE = 100;
const FILTERS = ['tool', 'token', 'since'];

/** The filters (tool, token name, since) and the page (before) of the address: the API's own parameters. */
function filtersOf(params) {
  const filters = {};
  for (const name of FILTERS) {
    const value = (params.get(name) ?? '').trim();
    if (value !== '') filters[name] = value;
  }
  // As it is, for the API to check: one that is not a row id (a hand-edited address) was dropped, and the newest page shown as if asked for.
  const before = (params.get('before') ?? '').trim();
  if (before !== '') filters.before = before;
  return filters;
}

function dash(value) {
  return value === null || value === undefined ? '—' : text(value);
}

function callRow(record) {
  return h('tr', {},
    h('th', { scope: 'row' }, formatTime(record.at)),
    h('td', { 'data-label': 'Tool' }, text(record.tool)),
    h('td', { 'data-label': 'Version' }, dash(record.version)),
    h('td', { 'data-label': 'Token' }, dash(record.token)),
    h('td', { 'data-label': 'Persona' }, dash(record.persona)),
    h('td', { 'data-label': 'Upstream' }, dash(record.upstream)),
    h('td', { 'data-label': 'Duration' }, `${record.duration_ms} ms`),
    h('td', { 'data-label': 'Outcome' }, h('span', { class: record.outcome === 'ok' ? 'badge on' : 'badge fail' }, text(record.outcome))));
}

/**
 * Renders the screen. `ui` is the app's: `show(main, title, ...children)`, `heading(text)`,
 * `href(namespace, parts, params)`.
 */
export async function callsScreen(main, route, signal, ui) {
  const filters = filtersOf(route.params);
  let page;
  let refused = null; // a filter the API refuses (400, "since" not a date): said next to the form, which keeps what was typed
  try {
    page = await call(`${base(route.namespace)}/calls${query({ ...filters, limit: CALLS_PAGE })}`, { signal });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    refused = error;
    page = { calls: [], next_before: null };
  }
  if (signal.aborted) return;
  const calls = Array.isArray(page?.calls) ? page.calls : [];
  const inputs = Object.fromEntries(FILTERS.map((name) => [name, h('input', { id: `calls-${name}`, name, type: 'search', value: filters[name] ?? '', autocomplete: 'off' })]));
  const labels = { tool: 'Tool', token: 'Token', since: 'Since (ISO 8601)' };
  const go = (params) => {
    location.hash = ui.href(route.namespace, ['calls'], params);
  };
  const form = h('form', { class: 'filters', role: 'search', onsubmit: (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const name of FILTERS) if (inputs[name].value.trim() !== '') params.set(name, inputs[name].value.trim());
    go(params);
  } },
  FILTERS.map((name) => h('div', { class: 'field' }, h('label', { for: `calls-${name}` }, labels[name]), inputs[name])),
  h('button', { type: 'submit' }, 'Apply'));

  const same = () => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (filters[name] !== undefined) params.set(name, filters[name]);
    return params;
  };
  const paging = [];
  if (filters.before !== undefined) paging.push(h('a', { href: ui.href(route.namespace, ['calls'], same()) }, 'Newest calls'));
  if (page?.next_before !== null && page?.next_before !== undefined) {
    const older = same();
    older.set('before', String(page.next_before));
    paging.push(h('a', { href: ui.href(route.namespace, ['calls'], older), rel: 'next' }, 'Older calls'));
  }
  const table = h('table', { class: 'calls stack' },
    h('caption', { class: 'visually-hidden' }, 'Calls'),
    h('thead', {}, h('tr', {}, ['At', 'Tool', 'Version', 'Token', 'Persona', 'Upstream', 'Duration', 'Outcome'].map((title) => h('th', { scope: 'col' }, title)))),
    h('tbody', {}, calls.map(callRow)));
  ui.show(main, 'Calls',
    ui.heading(route.namespace === 'default' ? 'Calls' : `Calls in ${route.namespace}`),
    h('p', {}, 'Every MCP tools/call answered in this namespace, newest first: who, which tool, how long, how it ended. Never its arguments or result.'),
    form,
    refused === null ? [] : [h('p', { class: 'error', role: 'alert' }, 'The filters were refused: ', text(visibleControls(refused.message)))],
    h('p', { class: 'count', role: 'status' }, refused !== null ? 'No calls shown.' : calls.length === 0 ? 'No calls match.' : `Showing ${calls.length} call${calls.length === 1 ? '' : 's'}${filters.before === undefined ? '' : ' (older page)'}.`),
    // show() takes nodes only (replaceChildren would write a null as "null").
    ...(calls.length === 0 ? [] : [box(table)]),
    ...(paging.length === 0 ? [] : [h('nav', { class: 'actions', 'aria-label': 'Pages of calls' }, paging)]));
}
