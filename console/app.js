// The operator console: hash-routed screens over the HTTP API. Every screen has a URL
// (#/tools, #/tools/NAME, #/changes, #/import, #/upstreams, #/calls; #/ns/NS/… for another namespace), so a
// link can be shared; the token never goes into one.
import { ApiError, ApprovalStopped, ImportPlans, UnreachableError, approveInBatches, base, call, callAll, follow, query, retryWhenShown, segment, storeToken, storedToken, switchNamespaces, unaddressable, watchStreams } from './api.js';
import { callsScreen } from './calls.js';
import { differenceCount, differenceValues, hunks, sideBySide } from './diff.js';
import { box, formatTime, h, isolated, jsonText, text, versionText, visibleControls } from './dom.js';
import { schemaView } from './schema.js';

const LINT_PROVIDERS = ['mcp', 'openai', 'anthropic', 'gemini', 'gemini-openapi'];
const FEED_BACKLOG = 100;
/** The Changes screen keeps this many events (a tab left open on a busy registry grew without bound); older ones are dropped. */
const FEED_KEPT = 1000;
const TOOL_CHANGES_WINDOW = 1000;
const DIFF_CONTEXT = 3;
const SCREENS = ['tools', 'changes', 'import', 'upstreams', 'calls'];
/** Screens kept when the namespace is switched (the others go to the tools). */
const NAMESPACED_SCREENS = ['changes', 'import', 'upstreams', 'calls'];

const state = {
  /** GET /v1/whoami, or null while signed out. */
  identity: null,
  /** The namespace switch's names (GET /v1/namespaces, or whoami's for a write-only token: switchNamespaces), or null when unknown. */
  namespaces: null,
  signInMessage: null,
  /** A message to show once on the next screen (after an action moved us there). */
  flash: null,
  /** The namespace whose pending count the navigation's badge shows. */
  badgeNamespace: null,
};

let screen = null; // the AbortController of the screen on show
let firstRender = true;
let retryDelay = 1000; // the next retry after the server could not be reached (1 s, doubling to 15 s)

/** An address the console cannot show: rendered as "Not found" with `reason`. */
class NotFound extends Error {
  constructor(reason) {
    super(reason);
    this.name = 'NotFound';
  }
}

// ---------------------------------------------------------------- routes

function parseRoute() {
  const raw = location.hash.replace(/^#/, '');
  const [path, search = ''] = raw.split('?');
  let segments;
  let invalid = null;
  try {
    segments = path.split('/').filter((part) => part !== '').map((part) => decodeURIComponent(part));
  } catch {
    segments = [];
    invalid = 'the address has a malformed %-escape.';
  }
  let namespace = 'default';
  if (segments[0] === 'ns' && segments.length >= 2) namespace = segments.splice(0, 2)[1];
  return { namespace, screen: segments[0] ?? 'tools', name: segments[1], extra: segments.length > 2, invalid, params: new URLSearchParams(search) };
}

function href(namespace, parts, params) {
  const prefix = namespace === 'default' ? '#' : `#/ns/${encodeURIComponent(namespace)}`;
  const search = params ? params.toString() : '';
  return `${prefix}/${parts.map((part) => encodeURIComponent(part)).join('/')}${search === '' ? '' : `?${search}`}`;
}

/** Changes the URL of the screen on show (filters, the compared versions) without a new render. */
function replaceHash(target) {
  history.replaceState(null, '', target);
}

function toolPath(namespace, name) {
  return `${base(namespace)}/tools/${segment(name)}`;
}

// ---------------------------------------------------------------- identity

function canWrite() {
  return (state.identity?.scopes ?? []).includes('write');
}

/** The tools, a tool and the changes need the read scope (a write-only token may only import). */
function canRead() {
  return (state.identity?.scopes ?? []).includes('read');
}

/** The upstream routes (the gateway's governance) and the audit log (GET /v1/calls) need the admin scope. */
function canAdmin() {
  return (state.identity?.scopes ?? []).includes('admin');
}

async function loadIdentity(signal) {
  // A token kept from before sign-in checked it could never be sent: back to the form, not "cannot reach the server" forever.
  const kept = storedToken();
  if (kept !== null && tokenProblem(kept) !== null) {
    storeToken(null);
    state.identity = null;
    state.signInMessage = tokenProblem(kept);
    return;
  }
  try {
    state.identity = await call('/v1/whoami', { signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      state.identity = null;
      if (storedToken() !== null) {
        storeToken(null);
        state.signInMessage = 'That token was not accepted. Check it and sign in again.';
      }
      return;
    }
    // Headers too large: only the token can make ours so (a file pasted whole). Kept, it locked the tab in "Something went wrong", reloads included.
    if (error instanceof ApiError && error.status === 431 && kept !== null) {
      storeToken(null);
      state.identity = null;
      state.signInMessage = `That token cannot be sent: it is ${kept.length.toLocaleString('en')} characters long, and the server refused the request's headers as too large (431). Paste it as tool-registry token create printed it: trg_ and 43 letters, digits, - and _.`;
      return;
    }
    throw error;
  }
  // GET /v1/namespaces needs read: a write-only token's switch comes from whoami alone (it got no switch, its 403 asked each time).
  let listed = null;
  if (canRead()) {
    try {
      const data = await call('/v1/namespaces', { signal });
      const list = Array.isArray(data) ? data : data?.namespaces ?? [];
      listed = list.map((entry) => (typeof entry === 'string' ? entry : entry.name)).filter((name) => typeof name === 'string');
    } catch (error) {
      if (signal.aborted) throw error; // otherwise the switch stays hidden; the rest works
    }
  }
  state.namespaces = switchNamespaces(state.identity, listed);
}

function signOut(message = null) {
  // The data goes now, not when the render's whoami is answered; a held screen is held no more.
  document.getElementById('main').replaceChildren();
  release();
  storeToken(null);
  state.identity = null;
  state.namespaces = null;
  state.signInMessage = message;
  void render();
}

/** The stream that tells this tab its token was revoked or changed, or the server went away: `{ key, controller }`, or null. */
let watch = null;
/**
 * The Changes screen's own feed does the watch's work (a revoke cuts it too, and its reconnect
 * is a 401): a tab holds one stream, never two, so that a token's share of `--max-streams`
 * (a half) is not taken from the feed by its watch. False once the feed stops (403, 404, 410).
 */
let feedWatches = false;

/**
 * While the tab is signed in (or on a server without tokens) and visible, one change-feed stream
 * stays open on every screen, so that a revoke (the server cuts the token's streams) signs the tab
 * out without the user acting, a changed token's screens follow its new scopes, and a server that
 * stops answering is said above the screen. A hidden tab holds none (a browser allows 6
 * connections to a server, shared by its tabs) and checks again when shown.
 */
function watchToken() {
  const token = storedToken();
  const allowed = state.identity?.namespaces;
  const namespace = Array.isArray(allowed) && allowed.length > 0 && !allowed.includes('default') ? allowed[0] : 'default';
  // A token without the read scope is refused the feed: it asks whoami alone (its scopes are part of the key, so gaining read opens the stream).
  const reads = canRead();
  const key = state.identity === null || document.visibilityState === 'hidden' || feedWatches ? null : `${namespace} ${String(reads)} ${token ?? ''}`;
  if (watch?.key === key) return;
  watch?.controller.abort();
  watch = null;
  if (key === null) return;
  const controller = new AbortController();
  watch = { key, controller };
  void watchStreams(namespace, { signal: controller.signal, reads, onCut: () => recheckToken(controller.signal), onLive: () => connectionLost(false) });
}

/** The token's streams ended: a 401 signs the tab out; other scopes or namespaces render the screen again under them. */
async function recheckToken(signal) {
  try {
    const identity = await call('/v1/whoami', { signal });
    connectionLost(false);
    if (signal.aborted || JSON.stringify(identity) === JSON.stringify(state.identity)) return;
    state.identity = null;
    void render();
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof UnreachableError) connectionLost(true);
    else signedOutBy(error);
  }
}

/**
 * A hidden tab's screen is kept out of sight (the `hidden` attribute on main) until whoami, asked
 * when the tab is shown again, says its token still reads it: a token revoked meanwhile showed its
 * data until the stream's 401 came back. Kept rather than dropped, so a filter, a comparison or an
 * import's plan is still there after a look at another tab; one request on each return. Not on a
 * server without tokens (nothing to revoke). The AbortController of that check, or null.
 */
let held = null;
/** What had the focus when the screen was held (hidden, it lost it): given back on release. @type {HTMLElement | null} */
let heldFocus = null;

function holdWhileHidden() {
  const main = document.getElementById('main');
  if (document.visibilityState === 'hidden') {
    held?.abort(); // a check still running when hidden again answers for the last look, not the next
    held = null;
    if (storedToken() === null) return;
    held = new AbortController();
    heldFocus = /** @type {HTMLElement | null} */ (document.activeElement);
    main.hidden = true;
    return;
  }
  if (held === null || held.signal.aborted) return;
  // Signed out meanwhile (a token refused at the form): the sign-in form holds nothing to check.
  if (storedToken() === null) return release();
  const check = held;
  void call('/v1/whoami', { signal: check.signal }).then((identity) => {
    if (check.signal.aborted) return;
    // Other scopes or namespaces: the screen again under them, never the one read before.
    const changed = JSON.stringify(identity) !== JSON.stringify(state.identity);
    if (changed) document.getElementById('main').replaceChildren();
    release();
    if (!changed) return;
    state.identity = null;
    void render();
  }, (error) => {
    if (check.signal.aborted) return;
    if (error instanceof UnreachableError) {
      // It cannot say: the screen as it was (read with the token then), said to be maybe out of date.
      release();
      connectionLost(true);
    } else if (!signedOutBy(error)) release();
  });
}

/** Shows the held screen again (or lets the next one show). */
function release() {
  held?.abort();
  held = null;
  const main = document.getElementById('main');
  if (!main.hidden) return;
  main.hidden = false;
  if (heldFocus !== null && heldFocus.isConnected && main.contains(heldFocus)) heldFocus.focus();
  heldFocus = null;
}

/** The screen on show says itself that the server cannot be reached ("Cannot reach the server"). */
let screenSaysUnreachable = false;

/**
 * Above a screen already shown, whose data may be out of date: the server stopped answering
 * (the watch stream's whoami could not reach it). Not where the screen says so itself (the
 * Cannot reach the server screen, the Changes screen's feed line).
 */
function connectionLost(lost) {
  const banner = document.getElementById('connection');
  const shown = lost && !screenSaysUnreachable && parseRoute().screen !== 'changes';
  banner.hidden = !shown;
  banner.textContent = shown ? `${UNREACHABLE} What this screen shows may be out of date.` : '';
}

/** A 401 anywhere (the token was revoked while the tab was open) signs the tab out: true if it did. */
function signedOutBy(error) {
  if (!(error instanceof ApiError) || error.status !== 401) return false;
  signOut('Your token is no longer accepted. Sign in again.');
  return true;
}

// ---------------------------------------------------------------- chrome

function updateChrome(route) {
  const signedIn = state.identity !== null;
  const nav = document.getElementById('nav');
  nav.hidden = !signedIn;
  for (const [id, target] of [['nav-tools', 'tools'], ['nav-changes', 'changes'], ['nav-import', 'import'], ['nav-upstreams', 'upstreams'], ['nav-calls', 'calls']]) {
    const link = /** @type {HTMLAnchorElement} */ (document.getElementById(id));
    link.href = href(route.namespace, [target]);
    if (route.screen === target) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // Only the screens this token may use: a write-only token's Tools and Changes said only what they need (its landing screen says it once).
  document.getElementById('nav-tools').parentElement.hidden = !canRead();
  document.getElementById('nav-changes').parentElement.hidden = !canRead();
  document.getElementById('nav-import').parentElement.hidden = !canWrite();
  document.getElementById('nav-upstreams').parentElement.hidden = !signedIn || !canAdmin();
  // Once per namespace shown (the Upstreams screen keeps it current): a screen never asks more of the API than it needs.
  // Not for a namespace outside the rule: the address is Not found, and nothing is asked of the API for it.
  if (signedIn && canAdmin() && state.badgeNamespace !== route.namespace && NAMESPACE.test(route.namespace)) void refreshPendingBadge(route.namespace);
  else if (!signedIn || !canAdmin()) state.badgeNamespace = null;
  document.getElementById('nav-calls').parentElement.hidden = !canAdmin();

  const session = document.getElementById('session');
  session.replaceChildren();
  if (!signedIn) return;
  const namespaces = state.namespaces ?? [];
  if (namespaces.length > 1) {
    const go = () => { location.hash = href(select.value, [NAMESPACED_SCREENS.includes(route.screen) ? route.screen : 'tools']); };
    // A pick with the pointer switches at once; the arrow keys only choose (chromium fires change on
    // each one, which switched the screen under a keyboard user at the first press), and Enter switches.
    let keyed = false;
    const select = h('select', { id: 'namespace', 'aria-describedby': 'namespace-hint',
      onkeydown: (event) => { if (event.key === 'Enter') go(); else if (event.key !== 'Tab') keyed = true; },
      onchange: () => { if (!keyed) go(); },
      onpointerdown: () => { keyed = false; },
      onblur: () => { keyed = false; } },
    namespaces.map((name) => h('option', { value: name, selected: name === route.namespace }, name)));
    session.append(h('div', { class: 'field inline' }, h('label', { for: 'namespace' }, 'Namespace'), select,
      h('span', { id: 'namespace-hint', class: 'visually-hidden' }, 'Choose with the arrow keys, then press Enter.')));
  }
  if (state.identity.token !== null && state.identity.token !== undefined) {
    const scopes = (state.identity.scopes ?? []).join(', ');
    session.append(
      h('p', { class: 'who' }, 'Signed in as ', h('strong', {}, text(state.identity.token)), scopes === '' ? '' : ` (${scopes})`),
      h('button', { type: 'button', class: 'secondary', onclick: () => signOut() }, 'Sign out'),
    );
  }
}

function heading(text) {
  return h('h1', { tabindex: '-1' }, text);
}

function show(main, title, ...children) {
  document.title = `${isolated(title)} · Tool registry`;
  // A screen shown was read just now, or says itself that the server cannot be reached.
  screenSaysUnreachable = title === 'Cannot reach the server';
  connectionLost(false);
  const flash = state.flash;
  state.flash = null;
  main.replaceChildren(...(flash ? [h('p', { class: 'notice', role: 'status' }, flash)] : []), ...children.flat());
  if (!firstRender) main.querySelector('h1')?.focus();
  firstRender = false;
}

/** An error as text; its detail may quote registry text, so bidi controls show as escapes (and it goes in with text()). */
function problemText(error) {
  if (!(error instanceof ApiError)) return visibleControls(error instanceof Error ? error.message : String(error));
  return visibleControls(error.code ? `${error.message} (${error.code})` : error.message);
}

/** The issue's words, as they are (a check for them may mind their case). */
const UNREACHABLE = 'The console cannot reach the server, retrying…';

// ---------------------------------------------------------------- sign-in

/**
 * Why a typed token cannot be one, or null. A token is visible ASCII (token create prints
 * `trg_` and base64url); anything else, such as a "…" copied from a shortened display, could not
 * even be sent (fetch refuses a header outside Latin-1, which looked like an unreachable server).
 */
function tokenProblem(token) {
  const at = [...token].findIndex((char) => char < '!' || char > '~');
  if (at === -1) return null;
  const char = [...token][at];
  const code = `U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  return `That is not a token: it has ${visibleControls(JSON.stringify(char))} (${code}) at character ${at + 1}. Paste it as tool-registry token create printed it: trg_ and then letters, digits, - and _.`;
}

function signInScreen(main) {
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, 'aria-describedby': 'token-hint' });
  const message = h('p', { id: 'sign-in-error', class: 'error', role: 'alert' }, state.signInMessage ?? '');
  state.signInMessage = null;
  const form = h('form', { class: 'sign-in', novalidate: true, onsubmit: (event) => {
    event.preventDefault();
    const token = input.value.trim();
    const wrong = token === '' ? 'Enter a token.' : tokenProblem(token);
    if (wrong !== null) {
      message.textContent = wrong;
      input.focus();
      return;
    }
    storeToken(token);
    void render();
  } },
  h('div', { class: 'field' },
    h('label', { for: 'token' }, 'Token'),
    h('p', { id: 'token-hint', class: 'hint' }, 'A token made with tool-registry token create. It stays in this tab only.'),
    input),
  h('button', { type: 'submit' }, 'Sign in'),
  message);
  show(main, 'Sign in', heading('Sign in'), h('p', {}, 'This registry needs a token to be read.'), form);
}

// ---------------------------------------------------------------- tools

function matches(registration, text) {
  if (text === '') return true;
  const spec = registration.spec;
  const haystack = [spec.tool_name, spec.description ?? '', ...(spec.tags ?? [])].join('\n').toLowerCase();
  return text.toLowerCase().split(/\s+/).filter((word) => word !== '').every((word) => haystack.includes(word));
}

/** Tags, each isolated from the next, or a dash. */
function tagsView(tags) {
  if ((tags ?? []).length === 0) return '—';
  return tags.flatMap((tag, index) => (index === 0 ? [text(tag)] : [', ', text(tag)]));
}

/** A deprecation as text with a link to its replacement: "message; use X; sunset D". */
function deprecationView(namespace, deprecation) {
  if (!deprecation) return '—';
  const parts = [deprecation.message ? text(deprecation.message) : 'Deprecated'];
  if (deprecation.replacement) parts.push('; use ', h('a', { href: href(namespace, ['tools', deprecation.replacement]) }, text(deprecation.replacement)));
  if (deprecation.sunset) parts.push('; sunset ', text(deprecation.sunset));
  return h('span', { class: 'deprecation' }, parts);
}

async function toolsScreen(main, route, signal) {
  const tools = await callAll(`${base(route.namespace)}/tools`, { include_disabled: 'true' }, 'tools', signal);
  if (signal.aborted) return; // another screen was asked for meanwhile
  const showDeprecation = tools.some((registration) => registration.deprecation);
  const filter = h('input', { id: 'filter', type: 'search', value: route.params.get('q') ?? '', 'aria-describedby': 'filter-hint', autocomplete: 'off' });
  const which = h('select', { id: 'show' },
    h('option', { value: 'all' }, 'All tools'),
    h('option', { value: 'enabled' }, 'Enabled only'),
    h('option', { value: 'disabled' }, 'Disabled only'));
  which.value = ['enabled', 'disabled'].includes(route.params.get('show')) ? route.params.get('show') : 'all';
  const count = h('p', { role: 'status', class: 'count' });
  const rows = tools.map((registration) => {
    const spec = registration.spec;
    const row = h('tr', {},
      h('th', { scope: 'row' }, h('a', { href: href(route.namespace, ['tools', spec.tool_name]) }, text(spec.tool_name))),
      h('td', { 'data-label': 'Version' }, text(versionText(spec.version))),
      h('td', { 'data-label': 'Enabled' }, h('span', { class: registration.enabled ? 'badge on' : 'badge off' }, registration.enabled ? 'Enabled' : 'Disabled')),
      h('td', { 'data-label': 'Tags' }, tagsView(spec.tags)),
      h('td', { 'data-label': 'Created' }, formatTime(registration.created_at)),
      showDeprecation ? h('td', { 'data-label': 'Deprecation' }, deprecationView(route.namespace, registration.deprecation)) : null);
    return { registration, row };
  });
  const table = h('table', { class: 'tools stack' },
    h('caption', { class: 'visually-hidden' }, 'Tools'),
    h('thead', {}, h('tr', {},
      ['Name', 'Version', 'Enabled', 'Tags', 'Created', ...(showDeprecation ? ['Deprecation'] : [])].map((title) => h('th', { scope: 'col' }, title)))),
    h('tbody', {}, rows.map((entry) => entry.row)));
  const empty = h('p', { hidden: true }, 'No tool matches.');

  const apply = () => {
    let shown = 0;
    for (const { registration, row } of rows) {
      const visible = matches(registration, filter.value.trim()) &&
        (which.value === 'all' || (which.value === 'enabled') === registration.enabled);
      row.hidden = !visible;
      if (visible) shown += 1;
    }
    count.textContent = `Showing ${shown} of ${tools.length} tool${tools.length === 1 ? '' : 's'}.`;
    empty.hidden = shown > 0 || tools.length === 0;
    const params = new URLSearchParams();
    if (filter.value.trim() !== '') params.set('q', filter.value.trim());
    if (which.value !== 'all') params.set('show', which.value);
    replaceHash(href(route.namespace, ['tools'], params));
  };
  filter.addEventListener('input', apply);
  which.addEventListener('change', apply);

  const controls = h('form', { class: 'filters', role: 'search', onsubmit: (event) => event.preventDefault() },
    h('div', { class: 'field' },
      h('label', { for: 'filter' }, 'Filter tools'),
      h('p', { id: 'filter-hint', class: 'hint' }, 'Matches name, description and tags.'),
      filter),
    h('div', { class: 'field' }, h('label', { for: 'show' }, 'Show'), which));
  show(main, 'Tools',
    heading(route.namespace === 'default' ? 'Tools' : `Tools in ${route.namespace}`),
    controls,
    count,
    tools.length === 0 ? h('p', {}, 'No tools are registered yet.') : box(table),
    empty);
  apply();
}

// ---------------------------------------------------------------- one tool

function listOf(data, key) {
  return Array.isArray(data) ? data : data?.[key] ?? [];
}

/** The change feed's events about one tool, from its last TOOL_CHANGES_WINDOW revisions. */
async function toolChanges(namespace, name, signal) {
  const head = await call(`${base(namespace)}/changes${query({ limit: 0 })}`, { signal });
  let since = Math.max(0, head.revision - TOOL_CHANGES_WINDOW);
  let page;
  try {
    page = await call(`${base(namespace)}/changes${query({ since, limit: TOOL_CHANGES_WINDOW })}`, { signal });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'CHANGES_EXPIRED') throw error;
    since = Math.max(0, (error.context.oldest_revision ?? 1) - 1);
    page = await call(`${base(namespace)}/changes${query({ since, limit: TOOL_CHANGES_WINDOW })}`, { signal });
  }
  return page.events.filter((event) => event.tool_name === name).reverse();
}

/** Each provider's lint findings for the tool: one call for every provider (each finding names its provider). */
async function lintFor(namespace, name, signal) {
  try {
    const data = await call(`${base(namespace)}/lint${query({ provider: LINT_PROVIDERS })}`, { signal });
    const findings = listOf(data, 'findings').filter((finding) => finding.tool_name === name);
    return LINT_PROVIDERS.map((provider) => ({ provider, findings: findings.filter((finding) => finding.provider === provider) }));
  } catch (error) {
    if (signal.aborted || error instanceof UnreachableError) throw error;
    return LINT_PROVIDERS.map((provider) => ({ provider, error }));
  }
}

function changeItem(namespace, event, withLink) {
  return h('li', { class: `change ${event.action}`, 'data-revision': event.revision },
    h('time', { datetime: event.at }, formatTime(event.at)),
    ' ',
    h('span', { class: 'revision' }, `#${event.revision}`),
    ' ',
    withLink ? h('a', { href: href(namespace, ['tools', event.tool_name]) }, text(event.tool_name)) : null,
    withLink ? ' ' : null,
    h('span', { class: 'action' }, event.action),
    ' ',
    h('span', { class: 'muted' }, text(versionText(event.version))));
}

/** The API's verdict on two versions (GET …/diff, compareSchemas's result), or why there is none. */
async function verdictFor(namespace, older, newer, signal) {
  if (older.spec.version === null || newer.spec.version === null) return { missing: 'the API compares versions by name, and one of these has none' };
  const data = await call(`${toolPath(namespace, older.spec.tool_name)}/diff${query({ from: older.spec.version, to: newer.spec.version })}`, { signal });
  // The route finds the latest spec of each version: a version registered twice may name another spec.
  if (data.from?.fingerprint !== older.fingerprint || data.to?.fingerprint !== newer.fingerprint) return { missing: 'the API compared other specs of the same versions' };
  return { diff: data };
}

const BREAKING = { true: 'breaking', false: 'not breaking', undecidable: 'undecidable (counted as breaking)' };

function verdictView(result, olderLabel, newerLabel) {
  if (result.error) return h('p', { class: 'error verdict' }, 'No verdict: ', text(problemText(result.error)));
  if (result.missing) return h('p', { class: 'verdict' }, `No verdict: ${result.missing}.`);
  const { diff } = result;
  const count = differenceCount(diff.differences);
  return h('div', { class: `verdict ${diff.compatible ? 'compatible' : 'incompatible'}` },
    h('p', {}, h('strong', {}, diff.compatible ? 'compatible' : 'not compatible'), ` — ${olderLabel} to ${newerLabel}: `,
      diff.compatible
        ? 'every input the old input schema accepted is still accepted, and every output the new output schema allows was allowed before'
        : 'a caller or a consumer of the old version may break',
      `; ${count === 0 ? 'no schema differences' : `${count} schema difference${count === 1 ? '' : 's'}`}.`),
    count === 0 ? null : h('ul', { class: 'differences' }, diff.differences.map((difference) => h('li', { class: difference.breaking === false ? '' : 'breaking' },
      h('code', {}, text(difference.type)), ' at ', h('code', {}, text(visibleControls(difference.path || '/'))), ': ',
      h('strong', {}, BREAKING[String(difference.breaking)] ?? String(difference.breaking)),
      ...valuesView(differenceValues(difference))))));
}

/** A difference's values, or how many values of its place the API left unnamed. */
function valuesView(values) {
  if ('omitted' in values) return [` · and ${values.omitted} more value${values.omitted === 1 ? '' : 's'} of this place, not listed`];
  return [' · before ', h('code', {}, text(jsonText(values.before, 0))), ' · after ', h('code', {}, text(jsonText(values.after, 0)))];
}

function diffView(older, newer, olderLabel, newerLabel) {
  const rows = sideBySide(jsonText(older.spec), jsonText(newer.spec));
  const changed = rows.filter((row) => row.kind !== 'same').length;
  if (changed === 0) return h('p', { class: 'diff-same' }, `Spec ${olderLabel} and spec ${newerLabel} are identical.`);
  const cell = (line, kind, side) => {
    if (line === null) return [h('td', { class: 'number' }), h('td', { class: 'line empty' })];
    const content = kind === 'same' ? line.text : h(side === 'left' ? 'del' : 'ins', {}, line.text);
    return [h('td', { class: 'number' }, String(line.number)), h('td', { class: `line ${kind === 'same' ? 'same' : side === 'left' ? 'removed' : 'added'}` }, content)];
  };
  const row = (entry) => entry.kind === 'skipped'
    ? h('tr', { class: 'skipped' }, h('td', { colspan: '4' }, `⋯ ${entry.count} unchanged line${entry.count === 1 ? '' : 's'}`))
    : h('tr', { class: entry.kind }, cell(entry.left, entry.kind, 'left'), cell(entry.right, entry.kind, 'right'));
  return box(h('table', { class: 'diff' },
    h('caption', {}, `Spec ${olderLabel} (left) against ${newerLabel} (right): ${changed} line${changed === 1 ? '' : 's'} differ, shown with ${DIFF_CONTEXT} lines of context`),
    h('colgroup', {}, h('col', { class: 'number' }), h('col', {}), h('col', { class: 'number' }), h('col', {})),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'number', abbr: 'Line' }, '#'), h('th', { scope: 'col' }, olderLabel),
      h('th', { scope: 'col', class: 'number', abbr: 'Line' }, '#'), h('th', { scope: 'col' }, newerLabel))),
    h('tbody', {}, hunks(rows, DIFF_CONTEXT).map(row))));
}

function historySection(route, history, screenSignal) {
  const label = (entry, index) => `${index + 1}: ${isolated(versionText(entry.spec.version))}`;
  const table = box(h('table', { class: 'history stack' },
    h('caption', { class: 'visually-hidden' }, 'Versions'),
    h('thead', {}, h('tr', {}, ['#', 'Version', 'First registered', 'Fingerprint'].map((title) => h('th', { scope: 'col' }, title)))),
    h('tbody', {}, history.map((entry, index) => h('tr', {},
      h('th', { scope: 'row' }, String(index + 1)),
      h('td', { 'data-label': 'Version' }, text(versionText(entry.spec.version))),
      h('td', { 'data-label': 'First registered' }, formatTime(entry.first_registered_at)),
      h('td', { 'data-label': 'Fingerprint' }, h('code', { title: entry.fingerprint }, (entry.fingerprint ?? '').slice(0, 12))))))));
  const parts = [h('h2', { id: 'history' }, 'History'), table];
  if (history.length < 2) {
    parts.push(h('p', {}, 'Only one version so far: nothing to compare.'));
    return h('section', { 'aria-labelledby': 'history' }, parts);
  }
  const pick = (key, fallback) => {
    const value = Number(route.params.get(key));
    return Number.isInteger(value) && value >= 1 && value <= history.length ? value - 1 : fallback;
  };
  const options = (selected) => history.map((entry, index) => h('option', { value: String(index), selected: index === selected }, label(entry, index)));
  const from = h('select', { id: 'diff-from' }, options(pick('from', history.length - 2)));
  const to = h('select', { id: 'diff-to' }, options(pick('to', history.length - 1)));
  const output = h('div', { class: 'diff-output' });
  let comparing = 0; // the latest comparison asked for: an older one's answer is dropped
  const update = async () => {
    const a = Number(from.value);
    const b = Number(to.value);
    const params = new URLSearchParams({ from: String(a + 1), to: String(b + 1) });
    replaceHash(href(route.namespace, ['tools', route.name], params));
    const mine = (comparing += 1);
    const verdict = a === b ? { missing: 'the same version on both sides' } : await verdictFor(route.namespace, history[a], history[b], screenSignal)
      .catch((error) => ({ error }));
    if (mine !== comparing || screenSignal.aborted || ('error' in verdict && signedOutBy(verdict.error))) return;
    output.replaceChildren(verdictView(verdict, label(history[a], a), label(history[b], b)), diffView(history[a], history[b], label(history[a], a), label(history[b], b)));
  };
  from.addEventListener('change', () => void update());
  to.addEventListener('change', () => void update());
  void update();
  parts.push(
    h('h3', {}, 'Compare two versions'),
    h('div', { class: 'filters' },
      h('div', { class: 'field' }, h('label', { for: 'diff-from' }, 'From version'), from),
      h('div', { class: 'field' }, h('label', { for: 'diff-to' }, 'To version'), to)),
    output);
  return h('section', { 'aria-labelledby': 'history' }, parts);
}

function lintSection(registration, results) {
  const parts = [h('h2', { id: 'lint' }, 'Lint by provider')];
  const disabled = !registration.enabled;
  // GET /v1/lint leaves out a tool past its sunset, as the exports do; a deprecated tool it lints always
  // has its `deprecated` warning, so no finding at all means it was left out (it said "No findings.").
  const sunset = registration.deprecation?.sunset;
  const retired = !disabled && typeof sunset === 'string' && results.every((result) => !result.error && result.findings.length === 0);
  if (disabled) parts.push(h('p', { class: 'hint' }, 'The lint covers enabled tools only; enable this tool to see its findings.'));
  if (retired) parts.push(h('p', { class: 'hint' }, 'The lint, like the exports, leaves out a tool whose deprecation\'s sunset (', text(sunset), ') has passed.'));
  const skipped = disabled ? 'not linted (disabled)' : retired ? 'not linted (past its sunset)' : null;
  parts.push(h('dl', { class: 'lint' }, (skipped !== null ? LINT_PROVIDERS.map((provider) => ({ provider, skipped })) : results).flatMap((result) => [
    h('dt', {}, result.provider),
    h('dd', {}, result.skipped
      ? result.skipped
      : result.error
        ? h('span', { class: 'error' }, 'Could not lint: ', text(problemText(result.error)))
        : result.findings.length === 0
          ? 'No findings.'
          : h('ul', {}, result.findings.map((finding) => h('li', { class: finding.severity },
            h('strong', {}, finding.severity), ' ', h('code', {}, finding.rule), ' at ', h('code', {}, text(visibleControls(finding.path || '/'))), ': ', text(visibleControls(finding.message)))))),
  ])));
  return h('section', { 'aria-labelledby': 'lint' }, parts);
}

/** `?expected_version=V`: the write happens only if the tool still has the version shown. */
function expected(version) {
  return query({ expected_version: version === null ? undefined : version });
}

function preconditionMessage(name, version) {
  return [`Nothing was changed: ${name} is no longer at version `, text(versionText(version)), '. Someone registered a new version or removed it after this page was loaded. Reload to see its current state, then try again.'];
}

function actionsSection(route, registration, rerender) {
  const name = registration.spec.tool_name;
  const version = registration.spec.version;
  const alert = h('div', { class: 'error', role: 'alert' });
  const failed = (error) => {
    if (signedOutBy(error)) return;
    alert.replaceChildren();
    if (error instanceof ApiError && (error.status === 412 || error.code === 'PRECONDITION_FAILED')) {
      alert.append(h('p', {}, preconditionMessage(name, version)), h('button', { type: 'button', class: 'secondary', onclick: rerender }, 'Reload'));
    } else if (error instanceof ApiError && error.status === 403) {
      alert.append(h('p', {}, 'Your token may not change tools: it needs the write scope.'));
    } else if (error instanceof UnreachableError) {
      // The answer may be what was lost (the server made the change): never "may not have been made".
      alert.append(h('p', {}, lostAnswer('change')));
    } else {
      alert.append(h('p', {}, 'The change failed: ', text(problemText(error))));
    }
  };
  const switchTo = async (enable) => {
    try {
      await call(`${toolPath(route.namespace, name)}/${enable ? 'enable' : 'disable'}${expected(version)}`, { method: 'POST' });
      state.flash = `${enable ? 'Enabled' : 'Disabled'} ${name}.`;
      rerender();
    } catch (error) {
      failed(error);
    }
  };
  const dialog = h('dialog', { 'aria-labelledby': 'remove-title', 'aria-describedby': 'remove-text' });
  const removeNow = async () => {
    dialog.close();
    try {
      await call(`${toolPath(route.namespace, name)}${expected(version)}`, { method: 'DELETE' });
      state.flash = `Removed ${name}. Its history is kept.`;
      location.hash = href(route.namespace, ['tools']);
    } catch (error) {
      failed(error);
    }
  };
  dialog.append(
    h('h2', { id: 'remove-title' }, `Remove ${name}?`),
    h('p', { id: 'remove-text' }, 'Version ', text(versionText(version)), ' stops being listed and agents stop seeing it. Its history and changes are kept.'),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'danger', onclick: removeNow }, 'Remove'),
      // Focus starts on Cancel, the action that changes nothing: Enter twice must not remove.
      h('button', { type: 'button', class: 'secondary', autofocus: true, onclick: () => dialog.close() }, 'Cancel')));
  return h('section', { 'aria-labelledby': 'actions', class: 'actions-box' },
    h('h2', { id: 'actions' }, 'Actions'),
    h('div', { class: 'actions' },
      registration.enabled
        ? h('button', { type: 'button', onclick: () => switchTo(false) }, 'Disable')
        : h('button', { type: 'button', onclick: () => switchTo(true) }, 'Enable'),
      h('button', { type: 'button', class: 'danger', onclick: () => dialog.showModal() }, 'Remove')),
    alert,
    dialog);
}

async function toolScreen(main, route, signal) {
  const name = route.name;
  const unreachable = unaddressable(name);
  if (unreachable !== null) throw new NotFound(`${unreachable}.`);
  const path = toolPath(route.namespace, name);
  const [registration, history, changes, lint] = await Promise.all([
    call(path, { signal }).catch((error) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error))),
    call(`${path}/history`, { signal }).then((data) => listOf(data, 'history')),
    toolChanges(route.namespace, name, signal),
    lintFor(route.namespace, name, signal),
  ]);
  if (signal.aborted) return;
  if (registration === null && history.length === 0) {
    throw new NotFound(`no tool named ${JSON.stringify(name)} was ever registered${route.namespace === 'default' ? '' : ` in namespace ${route.namespace}`}.`);
  }
  const rerender = () => void render();
  const parts = [heading(text(name))];
  if (registration === null) {
    parts.push(h('p', { class: 'notice' }, 'This tool is not registered now (it was removed). Its history and changes follow.'));
  } else {
    const spec = registration.spec;
    parts.push(h('dl', { class: 'facts' },
      h('dt', {}, 'Version'), h('dd', {}, text(versionText(spec.version))),
      h('dt', {}, 'State'), h('dd', {}, h('span', { class: registration.enabled ? 'badge on' : 'badge off' }, registration.enabled ? 'Enabled' : 'Disabled')),
      h('dt', {}, 'Created'), h('dd', {}, formatTime(registration.created_at)),
      h('dt', {}, 'Tags'), h('dd', {}, tagsView(spec.tags)),
      registration.deprecation ? [h('dt', {}, 'Deprecation'), h('dd', {}, deprecationView(route.namespace, registration.deprecation))] : null));
    parts.push(h('p', { class: 'description' }, spec.description === null || spec.description === undefined ? 'No description.' : text(spec.description)));
    if (canWrite()) parts.push(actionsSection(route, registration, rerender));
    parts.push(h('section', { 'aria-labelledby': 'spec' },
      h('h2', { id: 'spec' }, 'Spec'),
      schemaView('Input schema', spec.input_schema, 'input-schema'),
      schemaView('Output schema', spec.output_schema, 'output-schema'),
      h('details', {}, h('summary', {}, 'The spec as JSON'), box(h('pre', {}, jsonText(spec))))));
  }
  if (history.length > 0) parts.push(historySection(route, history, signal));
  parts.push(h('section', { 'aria-labelledby': 'tool-changes' },
    h('h2', { id: 'tool-changes' }, 'Changes'),
    changes.length === 0 ? h('p', {}, `No changes in the last ${TOOL_CHANGES_WINDOW} revisions.`) : h('ul', { class: 'changes' }, changes.map((event) => changeItem(route.namespace, event, false)))));
  if (registration !== null) parts.push(lintSection(registration, lint));
  show(main, name, parts);
}

// ---------------------------------------------------------------- changes

/**
 * The feed's 410 (CHANGES_EXPIRED: a restore replaced the log, or it was pruned past our revision)
 * in the user's terms: what happened, and the way out (the API's own detail says "resync from a
 * snapshot", which is a client's way, not a reader's).
 */
function expiredText(error) {
  const { since, oldest_revision: oldest, revision, replaced } = error.context;
  const why = replaced === true
    ? `the server's change log was replaced (a restored backup or dump) and now ends at revision ${String(revision)}`
    : `the server's change log no longer holds the changes after revision ${String(since)} (it keeps revisions ${String(oldest)} to ${String(revision)})`;
  return `Not live: ${why}, so the changes below may no longer be the registry's. Reload this screen to follow the feed from the current revision.`;
}

async function changesScreen(main, route, signal) {
  const feed = `${base(route.namespace)}/changes`;
  const head = await call(`${feed}${query({ limit: 0 })}`, { signal });
  let page;
  try {
    page = await call(`${feed}${query({ since: Math.max(0, head.revision - FEED_BACKLOG), limit: FEED_BACKLOG })}`, { signal });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'CHANGES_EXPIRED') throw error;
    page = await call(`${feed}${query({ since: Math.max(0, (error.context.oldest_revision ?? 1) - 1), limit: FEED_BACKLOG })}`, { signal });
  }
  if (signal.aborted) return;
  const list = h('ol', { class: 'changes feed', 'aria-live': 'polite', 'aria-relevant': 'additions' },
    [...page.events].reverse().map((event) => changeItem(route.namespace, event, true)));
  const empty = h('p', { hidden: page.events.length > 0 }, 'No changes yet.');
  // Where the changes dropped past FEED_KEPT can be read: said after the list, where they were.
  const dropped = h('p', { class: 'notice', hidden: true });
  const firstShown = page.events[0]?.revision ?? page.revision + 1;
  const status = h('p', { class: 'feed-state', role: 'status' }, 'Connecting…');
  // Outside the status region: a button is no announcement.
  const recover = h('div', { class: 'actions', hidden: true },
    h('button', { type: 'button', onclick: () => void render() }, 'Reload from the current revision'));
  show(main, 'Changes',
    heading('Changes'),
    h('p', {}, 'Every change to a tool, newest first; new ones appear as they are committed.'),
    status, recover, empty, list, dropped);
  signal.addEventListener('abort', () => {
    status.className = 'feed-state';
    status.replaceChildren('Not live: another screen is loading.');
  }, { once: true });
  const since = page.events.length > 0 ? page.events[page.events.length - 1].revision : page.revision;
  let last = Math.max(since, head.revision);
  // A hidden tab holds no stream (a browser allows 6 connections to a server, shared by its tabs; this one kept
  // its feed): it ends when the tab hides and resumes from the last change shown when the tab is shown.
  let running = null;
  let stopped = false; // 401, 403, 404, 410: not resumed
  const resume = () => {
    if (signal.aborted || stopped) return;
    if (document.visibilityState === 'hidden') {
      running?.abort();
      running = null;
      status.className = 'feed-state';
      status.replaceChildren('Not live: this tab is hidden; it follows the feed again when shown.');
      return;
    }
    if (running !== null) return;
    running = new AbortController();
    const feedSignal = AbortSignal.any([signal, running.signal]);
    void follow(route.namespace, last, { ...feedCallbacks, signal: feedSignal, recheck: () => recheckToken(feedSignal) });
  };
  document.addEventListener('visibilitychange', resume);
  signal.addEventListener('abort', () => document.removeEventListener('visibilitychange', resume), { once: true });
  const feedCallbacks = {
    onEvent: (event) => {
      last = event.revision;
      empty.hidden = true;
      list.prepend(changeItem(route.namespace, event, true));
      let oldest = null;
      while (list.childElementCount > FEED_KEPT) {
        oldest = list.lastElementChild;
        oldest.remove();
      }
      if (oldest === null) return;
      const upTo = Number(oldest.getAttribute('data-revision'));
      dropped.hidden = false;
      dropped.replaceChildren(`This screen keeps the newest ${FEED_KEPT.toLocaleString('en')} changes: `,
        upTo === firstShown ? `revision ${upTo} is` : `revisions ${firstShown} to ${upTo} are`, ' no longer shown. ',
        'A tool\'s changes are on its page; all of them with ', h('code', {}, `tool-registry changes --db DATABASE --since ${firstShown - 1}`),
        route.namespace === 'default' ? '' : ` (DATABASE: namespace ${route.namespace}'s)`,
        ' or ', h('code', {}, `GET ${feed}?since=${firstShown - 1}`), '.');
    },
    onState: (feedState, error) => {
      // A token revoked while the stream was open: the server cuts the stream, and the reconnect is a 401.
      if (feedState === 'failed' && signedOutBy(error)) return;
      // A cut stream may be a changed token (other scopes): as the watch asks, ask. A stopped feed watches no more.
      if (feedState === 'reconnecting' || feedState === 'refused') void recheckToken(signal);
      if (feedState === 'failed') {
        stopped = true;
        feedWatches = false;
        watchToken();
      }
      status.className = `feed-state ${feedState}`;
      const expired = feedState === 'failed' && error instanceof ApiError && error.status === 410;
      recover.hidden = !expired;
      // Refused (over the token's share of --max-streams, its other tabs holding it, or the server's): it said "Reconnecting…" for good.
      status.replaceChildren(...(feedState === 'live' ? ['Live: following new changes.']
        : feedState === 'reconnecting' ? ['Reconnecting to the live feed…']
          : feedState === 'unreachable' ? [UNREACHABLE]
            // A 503 SHUTTING_DOWN is no want of room (a restart, a deploy): it said "no room for this stream".
            : feedState === 'refused' && error?.code === 'SHUTTING_DOWN' ? ['Not live: the server is shutting down (SHUTTING_DOWN). Retrying…']
              : feedState === 'refused' ? ['Not live: the server has no room for this stream: ', text(problemText(error)), '. Retrying…']
                : expired ? [expiredText(error)]
                  : ['Not live: the feed stopped: ', text(problemText(error))]));
    },
  };
  resume();
}

// ---------------------------------------------------------------- import

function planTable(report) {
  const plan = report.plan ?? [];
  return box(h('table', { class: 'plan stack' },
    h('caption', {}, `Plan: ${report.added} to add, ${report.updated} to update, ${report.unchanged} unchanged, ${report.removed} to remove, ${report.conflicts} in conflict`),
    h('thead', {}, h('tr', {}, ['Tool', 'Action', 'From version', 'To version'].map((title) => h('th', { scope: 'col' }, title)))),
    h('tbody', {}, plan.map((step) => h('tr', { class: step.action },
      h('th', { scope: 'row' }, text(step.tool_name)),
      h('td', { 'data-label': 'Action' }, step.action),
      h('td', { 'data-label': 'From version' }, 'from_version' in step ? text(versionText(step.from_version)) : '—'),
      h('td', { 'data-label': 'To version' }, 'to_version' in step ? text(versionText(step.to_version)) : '—'))))));
}

/** A byte count as people read it: 1,048,576 bytes (1 MiB). */
function bytes(count) {
  if (count === null || count === undefined) return 'its size';
  const mib = count / 1048576;
  return `${count.toLocaleString('en')} bytes${mib >= 0.1 ? ` (${mib.toFixed(mib < 10 ? 1 : 0)} MiB)` : ''}`;
}

async function importScreen(main, route, signal) {
  // The one screen that reads nothing before a write: ask the namespace's revision, so that an
  // address in a namespace that does not exist (or this token does not see) is Not found, as on every other screen.
  // A token without the read scope (403) may still import: the plan's answer says what it may not.
  await call(`${base(route.namespace)}/changes${query({ limit: 0 })}`, { signal }).catch((error) => {
    if (!(error instanceof ApiError) || error.status !== 403) throw error;
  });
  if (signal.aborted) return;
  if (!canWrite()) {
    show(main, 'Import', heading('Import'), h('p', {}, 'Importing needs a token with the write scope; this one can only read.'));
    return;
  }
  const file = h('input', { id: 'snapshot-file', type: 'file', accept: 'application/json,.json', required: true, 'aria-describedby': 'snapshot-hint' });
  const mode = h('select', { id: 'import-mode', 'aria-describedby': 'mode-hint' },
    h('option', { value: 'merge' }, 'Merge'),
    h('option', { value: 'replace' }, 'Replace'));
  const alert = h('div', { class: 'error', role: 'alert' });
  const result = h('div', { class: 'plan', role: 'status' });
  const snapshotUrl = (selectedMode, dryRun) => `${base(route.namespace)}/snapshot${query({ mode: selectedMode, dry_run: dryRun ? 'true' : undefined })}`;
  const plans = new ImportPlans(snapshotUrl);
  const fail = (error, size, importMode) => {
    if (signedOutBy(error)) return;
    if (error instanceof ApiError && (error.status === 413 || error.code === 'PAYLOAD_TOO_LARGE')) {
      const limit = typeof error.context.limit === 'number' ? error.context.limit : null;
      const ns = route.namespace;
      // The command with the mode planned (without it, a replace would run as a merge), on this
      // namespace's own database: the server's --db is namespace default's (a replace there would empty default).
      const database = ns === 'default'
        ? [' (DATABASE: the server\'s ', h('code', {}, '--db'), ', a file or a postgres:// URL, or with ', h('code', {}, '--data-dir DIR'), ' the file ', h('code', {}, 'DIR/default.db')]
        : [' (DATABASE: with ', h('code', {}, '--data-dir DIR'), ' the file ', h('code', {}, `DIR/${ns}.db`), '; with a postgres:// ', h('code', {}, '--db'),
          ', that URL with ', h('code', {}, `?schema=BASE_ns_${ns}`), ', BASE being its own ?schema= or else tool_registry; not the server\'s ', h('code', {}, '--db'), ' as it is, which is namespace default'];
      alert.replaceChildren(
        h('p', {}, `Nothing was imported: the snapshot (${bytes(size)}) is over this server's body limit${limit === null ? '' : ` of ${bytes(limit)}`}.`),
        h('p', {}, 'Import it with the command, which has no such limit: ', h('code', {}, `tool-registry import --db DATABASE${importMode === 'replace' ? ' --mode replace' : ''} FILE`),
          ...database,
          '); or restart the server with a larger ',
          h('code', {}, '--max-body'), ': ', h('code', {}, `tool-registry serve --max-body ${Math.ceil(((size ?? limit ?? 0) + 1) / 1048576) * 1048576}`), ' and the options it runs with.'));
      return;
    }
    alert.replaceChildren(h('p', {}, error instanceof ApiError && error.status === 403
      ? 'Your token may not import: it needs the write scope.'
      : error instanceof UnreachableError ? 'Cannot reach the server: nothing was imported. Try again when it is back.'
        : ['The import failed: ', text(problemText(error))]));
  };
  const planButton = h('button', { type: 'submit' }, 'Plan import');
  const confirm = async () => {
    if (plans.importing || plans.planned === null) return;
    alert.replaceChildren();
    const answer = await plans.confirm();
    if (answer.outcome === 'stale') {
      alert.replaceChildren(h('p', {}, 'Nothing was imported: the file or the mode changed (or the plan was asked again or cancelled) before the import went out. Press Plan import again.'));
    } else if (answer.outcome === 'replanned') {
      result.replaceChildren(planView(answer.report));
      result.querySelector('h2')?.focus(); // the button pressed is gone with the old plan
      alert.replaceChildren(h('p', {}, 'Nothing was imported: the registry changed after the plan was made. Review the new plan below, then import again.'));
    } else if (answer.outcome === 'imported') {
      const { report } = answer;
      // The Import button pressed goes with the plan: the focus goes to the report (it fell to the page's start).
      const done = h('p', { class: 'notice', tabindex: '-1' },
        `Imported: ${report.added} added, ${report.updated} updated, ${report.unchanged} unchanged, ${report.removed} removed (revision ${report.revision}).`,
        // A token without read may not see the changes: no link that only leads to "may not read".
        canRead() ? [' ', h('a', { href: href(route.namespace, ['changes']) }, 'See the changes')] : []);
      result.replaceChildren(done);
      done.focus();
    } else if (answer.outcome === 'failed') {
      const { error, sent, plan } = answer;
      if (error instanceof ApiError && (error.status === 412 || error.code === 'PRECONDITION_FAILED')) {
        alert.replaceChildren(h('p', {}, 'Nothing was imported: the registry changed after the plan was made. Plan again.'));
      } else if (error instanceof UnreachableError && sent) {
        alert.replaceChildren(h('p', {}, 'Cannot reach the server: the connection was lost after the import was sent, so the snapshot may have been imported. When the server is back, see the changes (or plan again: a plan of all "unchanged" means it was).'));
      } else fail(error, plan.size, plan.mode);
    }
  };
  const planView = (report) => h('div', {},
    h('h2', { id: 'plan', tabindex: '-1' }, 'Dry run'),
    planTable(report),
    report.conflicts > 0
      ? h('p', { class: 'error' }, `${report.conflicts} tool${report.conflicts === 1 ? ' has' : 's have'} a version conflict (same version, different spec): the import would be refused. Fix the snapshot and plan again.`)
      : h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: confirm }, 'Import'),
        h('button', { type: 'button', class: 'secondary', onclick: () => { plans.cancel(); result.replaceChildren(); planButton.focus(); } }, 'Cancel')));

  // A plan is of one file in one mode: another file or mode chosen drops it, so that Import never
  // runs what the form no longer says (it imported the planned file, in the planned mode).
  const changedNotice = () => h('p', { class: 'notice' }, 'The file or the mode changed after the plan was made: press Plan import again.');
  const replanned = () => {
    if (!plans.changed()) return;
    alert.replaceChildren();
    result.replaceChildren(changedNotice());
  };
  file.addEventListener('change', replanned);
  mode.addEventListener('change', replanned);
  const form = h('form', { class: 'import', novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    alert.replaceChildren();
    result.replaceChildren();
    const chosen = file.files?.[0];
    if (!chosen) {
      alert.replaceChildren(h('p', {}, 'Choose a snapshot file first.'));
      file.focus();
      return;
    }
    const chosenMode = mode.value;
    try {
      // The file's bytes as they are: decoded here, bytes that are not UTF-8 would reach the server as U+FFFD, altered rather than refused.
      const answer = await plans.plan(chosen.arrayBuffer(), chosen.size, chosenMode);
      // A newer plan asked for meanwhile shows its own answer.
      if ('superseded' in answer) return;
      if ('stale' in answer) {
        result.replaceChildren(changedNotice());
        return;
      }
      result.replaceChildren(planView(answer.planned.report));
    } catch (error) {
      fail(error, chosen.size, chosenMode);
    }
  } },
  h('div', { class: 'field' },
    h('label', { for: 'snapshot-file' }, 'Snapshot file'),
    h('p', { id: 'snapshot-hint', class: 'hint' }, 'A JSON snapshot, { "tools": [...] }, as tool-registry export writes it.'),
    file),
  h('div', { class: 'field' },
    h('label', { for: 'import-mode' }, 'Mode'),
    h('p', { id: 'mode-hint', class: 'hint' }, 'Merge leaves tools the snapshot does not name alone; replace makes the registry equal to the snapshot.'),
    mode),
  planButton);
  show(main, 'Import',
    heading('Import'),
    h('p', {}, 'Upload a snapshot and review what it would change. Nothing is written until you confirm.'),
    form, alert, result);
}

// ---------------------------------------------------------------- the loop

// ---------------------------------------------------------------- upstreams (the gateway)

/** The pending count in the navigation (admins only): GET /v1/upstreams, whose counts may be a few seconds old. */
async function refreshPendingBadge(namespace) {
  state.badgeNamespace = namespace;
  try {
    const data = await call(`${base(namespace)}/upstreams`);
    showPendingBadge((data?.upstreams ?? []).reduce((sum, upstream) => sum + (upstream.counts?.pending ?? 0), 0));
  } catch {
    showPendingBadge(0); // the screen itself says what failed
  }
}

function showPendingBadge(pending) {
  const badge = document.getElementById('upstreams-badge');
  badge.textContent = `${pending} pending`;
  badge.hidden = pending === 0;
}

const STATE_LABELS = { changed: 'changed: pending', new: 'new: pending', gone: 'gone upstream', rejected: 'rejected', unregistrable: 'refused (unregistrable)' };

/** A tool as approve takes it pinned to the definition shown (`TOOL@HASH`): a definition the upstream changed since is refused, not registered unread. */
function shownTool(tool) {
  return tool.definition_hash ? `${tool.tool}@${tool.definition_hash}` : tool.tool;
}

/** The spec `approve` would register for a tool's listed definition (what upstreamToolSpec builds). */
function upstreamSpec(upstream, tool) {
  const definition = tool.definition;
  return {
    tool_name: tool.tool_name,
    version: tool.next_version ?? null,
    description: definition.description ?? null,
    input_schema: definition.inputSchema,
    output_schema: definition.outputSchema ?? {},
    tags: [`upstream:${upstream.name}`],
  };
}

/** A write whose answer never came (the server may have made it before the connection was lost): never "failed". */
function lostAnswer(what) {
  return `Cannot reach the server: the ${what} may have been made before the connection was lost. Reload when the server is back to see.`;
}

function upstreamToolView(route, upstream, tool, approved, rerender) {
  const alert = h('div', { class: 'error', role: 'alert' });
  const act = async (path, json, done) => {
    try {
      await call(`${base(route.namespace)}/upstreams/${segment(upstream.name)}/${path}`, { method: 'POST', json });
      state.flash = done;
      rerender();
    } catch (error) {
      if (signedOutBy(error)) return;
      if (error instanceof UnreachableError) {
        alert.replaceChildren(h('p', {}, lostAnswer(path === 'approve' ? 'approval' : 'rejection')));
        return;
      }
      alert.replaceChildren(h('p', {}, `${path === 'approve' ? 'Approving' : 'Rejecting'} failed: `, text(problemText(error))));
      if (error instanceof ApiError && error.code === 'COMPATIBILITY_FAILED' && json.force !== true) {
        alert.append(
          h('p', {}, "The registry's compatibility policy refuses this breaking change. The upstream has changed already: until it is approved, the tool is not served."),
          h('button', { type: 'button', class: 'danger', onclick: () => act('approve', { tools: [shownTool(tool)], force: true }, `Approved ${tool.tool_name} past the compatibility policy (forced).`) }, 'Approve anyway (force)'));
      }
    }
  };
  const parts = [h('h3', {}, text(tool.tool_name), ' ', h('span', { class: `badge ${tool.state === 'changed' || tool.state === 'new' ? 'pending' : 'off'}` }, STATE_LABELS[tool.state] ?? tool.state))];
  const versions = tool.approved ? ['approved ', text(versionText(tool.approved.version))] : ['never approved'];
  if (tool.next_version) versions.push(' → would be ', text(tool.next_version));
  parts.push(h('p', {}, ...versions));
  if (tool.reason) parts.push(h('p', {}, text(visibleControls(tool.reason))));
  if (tool.diff) {
    parts.push(verdictView({ diff: tool.diff }, 'approved', 'upstream now'));
    if (tool.diff.changed.includes('title or annotations')) parts.push(h('p', {}, 'Only the title or annotations changed (the spec keeps neither; the definition hash does). Now: ', h('code', {}, text(jsonText({ title: tool.definition?.title ?? null, annotations: tool.definition?.annotations ?? null }, 0)))));
  }
  if (tool.definition && approved) parts.push(diffView(approved, { spec: upstreamSpec(upstream, tool) }, 'approved', 'upstream now'));
  else if (tool.definition && tool.state === 'new') parts.push(box(h('pre', { class: 'json' }, text(jsonText(upstreamSpec(upstream, tool))))));
  const buttons = [];
  if (tool.state === 'changed' || tool.state === 'new' || tool.state === 'rejected') {
    buttons.push(h('button', { type: 'button', onclick: () => act('approve', { tools: [shownTool(tool)] }, `Approved ${tool.tool_name}.`) }, 'Approve'));
  }
  if (tool.state === 'changed' || tool.state === 'new') {
    buttons.push(h('button', { type: 'button', class: 'secondary', onclick: () => act('reject', { tool: tool.tool }, `Rejected this definition of ${tool.tool_name}: not served, not pending until the upstream changes it.`) }, 'Reject'));
  }
  if (buttons.length > 0) parts.push(h('div', { class: 'actions' }, ...buttons));
  parts.push(alert);
  return h('article', { class: 'upstream-tool' }, ...parts);
}

async function upstreamSection(route, upstream, signal, rerender) {
  const section = [h('h2', { id: `upstream-${upstream.name}` }, text(upstream.name))];
  const target = upstream.transport.type === 'http' ? upstream.transport.url : upstream.transport.command.join(' ');
  section.push(h('p', {}, `${upstream.transport.type} `, h('code', {}, text(visibleControls(target))), ` · prefix `, h('code', {}, text(upstream.prefix === '' ? "''" : upstream.prefix)), ` · ${upstream.registered} registered`));
  let pending;
  try {
    pending = await call(`${base(route.namespace)}/upstreams/${segment(upstream.name)}/pending`, { signal });
  } catch (error) {
    if (signal.aborted) throw error;
    section.push(h('p', { class: 'error' }, 'Cannot list its tools now: ', text(problemText(error))));
    return { parts: section, pending: upstream.counts?.pending ?? 0 };
  }
  const counts = pending.counts;
  section.push(h('p', { role: 'status' }, `${counts.served} served, ${counts.pending} pending, ${counts.gone} gone, ${counts.rejected} rejected, ${counts.unregistrable} refused.`));
  if (counts.pending > 1) {
    const alert = h('div', { class: 'error', role: 'alert' });
    const progress = h('p', { role: 'status', hidden: true });
    const button = h('button', { type: 'button', onclick: async () => {
      const tools = pending.tools.filter((tool) => tool.state === 'changed' || tool.state === 'new').map(shownTool);
      button.disabled = true;
      alert.replaceChildren();
      try {
        // In requests that each fit the server's body limit (one for 10,000 tools was a 413).
        const approved = await approveInBatches(`${base(route.namespace)}/upstreams/${segment(upstream.name)}/approve`, tools, {
          onProgress: ({ sent, total, approved: done }) => {
            progress.hidden = false;
            progress.replaceChildren(`Approving: ${done} approved, ${sent} of ${total} sent…`);
          },
        });
        state.flash = `Approved ${approved.length} tools of ${upstream.name}.`;
        rerender();
      } catch (error) {
        button.disabled = false;
        progress.hidden = true;
        const cause = error instanceof ApprovalStopped ? error.cause : error;
        if (signedOutBy(cause)) return;
        const approved = error instanceof ApprovalStopped ? error.approved : [];
        const before = approved.length === 0 ? 'nothing was approved' : `${approved.length} of ${tools.length} were approved before it, the rest not`;
        alert.replaceChildren(h('p', {}, cause instanceof UnreachableError ? lostAnswer('approval') : [`Approving stopped (${before}): `, text(problemText(cause))]));
        if (approved.length > 0) {
          alert.append(
            h('details', {}, h('summary', {}, `The ${approved.length} approved`), h('p', {}, text(approved.map((one) => one.tool_name).join(', ')))),
            h('button', { type: 'button', class: 'secondary', onclick: rerender }, 'Show what is pending now'));
        }
      }
    } }, `Approve all ${counts.pending} pending`);
    section.push(h('div', { class: 'actions' }, button), progress, alert);
  }
  // The approved spec of each changed tool, for the side-by-side diff (read scope; without it, the verdict alone).
  const approved = await Promise.all(pending.tools.map(async (tool) => {
    if (!tool.approved || !tool.definition) return null;
    try {
      return await call(toolPath(route.namespace, tool.tool_name), { signal });
    } catch (error) {
      if (signal.aborted) throw error;
      return null;
    }
  }));
  pending.tools.forEach((tool, index) => section.push(upstreamToolView(route, upstream, tool, approved[index], rerender)));
  return { parts: section, pending: counts.pending };
}

async function upstreamsScreen(main, route, signal) {
  const title = route.namespace === 'default' ? 'Upstreams' : `Upstreams in ${route.namespace}`;
  if (!canAdmin()) {
    show(main, 'Upstreams', heading(title), h('p', {}, 'Governing upstream MCP servers needs a token with the admin scope.'));
    return;
  }
  const data = await call(`${base(route.namespace)}/upstreams`, { signal });
  if (signal.aborted) return;
  const upstreams = data.upstreams ?? [];
  const rerender = () => void render();
  const sections = await Promise.all(upstreams.map((upstream) => upstreamSection(route, upstream, signal, rerender)));
  if (signal.aborted) return;
  // The live listing's count, fresher than the list's.
  showPendingBadge(sections.reduce((sum, section) => sum + section.pending, 0));
  show(main, title,
    heading(title),
    h('p', {}, 'Upstream MCP servers whose tools the registry serves. A tool whose definition changed upstream is not served until an admin approves it as a new version; rejecting keeps it unserved until the upstream changes it again.'),
    upstreams.length === 0
      ? h('p', {}, 'No upstreams. Add one with: tool-registry upstream add NAME --url URL (or --command "CMD ARG…").')
      : sections.map((section) => h('section', { class: 'upstream' }, ...section.parts)));
}

/** A shared link to the audit log, opened with a token that may not read it: say so, as Upstreams does (not "Something went wrong"). */
function callsNeedAdmin(main, route) {
  show(main, 'Calls', heading(route.namespace === 'default' ? 'Calls' : `Calls in ${route.namespace}`),
    h('p', {}, 'The audit log of MCP tool calls needs a token with the admin scope.'));
}

/**
 * A screen this token's scopes do not reach (a write-only token on the tools, a tool or the
 * changes, by link or as the first screen): the scope it lacks, in plain words, not "Something went wrong".
 */
function lacksScopeScreen(main, route, error) {
  const scope = typeof error.context.scope === 'string' ? error.context.scope : 'read';
  const scopes = (state.identity?.scopes ?? []).join(', ');
  const where = route.namespace === 'default' ? '' : ` in ${route.namespace}`;
  const tool = route.screen === 'tools' && route.name !== undefined;
  const screenName = route.screen.charAt(0).toUpperCase() + route.screen.slice(1);
  const title = tool ? route.name : `${screenName}${where}`;
  const what = tool ? ['the tool ', text(route.name)] : [route.screen === 'tools' ? 'tools' : `the ${route.screen}`];
  show(main, title, heading(tool ? text(route.name) : title),
    h('p', { class: 'notice' }, 'This token may not read ', ...what, `: that needs the ${scope} scope, which it lacks (its scopes: ${scopes === '' ? 'none' : scopes}). Sign in with a token that has the ${scope} scope to see ${tool ? 'it' : 'them'}.`),
    route.screen === 'tools' && !tool && scope === 'read' ? [h('p', {}, 'The changes need the read scope too, so the Tools and Changes links are not shown to this token.')] : [],
    canWrite() ? [h('p', {}, 'It may import snapshots: ', h('a', { href: href(route.namespace, ['import']) }, 'Import'), '.')] : []);
}

function errorScreen(main, error) {
  show(main, 'Error', heading('Something went wrong'),
    h('p', { class: 'error' }, text(problemText(error))),
    h('button', { type: 'button', onclick: () => void render() }, 'Try again'));
}

function notFoundScreen(main, route, reason) {
  const namespace = SCREENS.includes(route.screen) && NAMESPACE.test(route.namespace) ? route.namespace : 'default';
  // A token that may not read has no tools to go to (they said it may not read them): its Import instead.
  const [target, label] = canRead() || !canWrite() ? ['tools', 'Go to the tools'] : ['import', 'Go to Import'];
  show(main, 'Not found', heading('Not found'),
    h('p', { class: 'reason' }, 'Not found: ', text(visibleControls(reason))),
    h('p', {}, h('a', { href: href(namespace, [target]) }, label)));
}

/**
 * The server did not answer: say so, and render again after 1 s, doubling to 15 s, until it does;
 * a hidden tab waits to be shown (it asked every 15 s for as long as it stayed open).
 */
function unreachableScreen(main, signal) {
  const delay = retryDelay;
  retryDelay = Math.min(retryDelay * 2, 15000);
  const when = h('p', {});
  show(main, 'Cannot reach the server', heading('Cannot reach the server'),
    h('p', { class: 'error', role: 'status' }, UNREACHABLE),
    when,
    h('button', { type: 'button', onclick: () => void render() }, 'Try now'));
  retryWhenShown(delay, {
    signal,
    retry: () => void render(),
    onWait: (hidden) => when.replaceChildren(hidden
      ? 'The console tries again when this tab is shown; it shows this screen until the server answers.'
      : `The console tries again in ${Math.round(delay / 1000)} s; it shows this screen until the server answers.`),
  });
}

/** A namespace's name, as the server's rule has it (lowercase letter, then up to 39 of a-z 0-9 _). */
const NAMESPACE = /^[a-z][a-z0-9_]{0,39}$/;

/** Why the console has no screen at this address, or null when it has one. */
function unknownAddress(route) {
  if (route.invalid !== null) return route.invalid;
  if (!NAMESPACE.test(route.namespace)) return `${JSON.stringify(route.namespace)} is not a namespace name (a lowercase letter, then up to 39 of a-z, 0-9 and _).`;
  const known = (route.screen === 'tools' && !route.extra) || (SCREENS.includes(route.screen) && route.name === undefined);
  if (known) return null;
  return `no screen has the address ${JSON.stringify(location.hash || '#/')}. The screens are #/tools, #/tools/NAME, #/changes, #/import, #/upstreams and #/calls, each also under #/ns/NAMESPACE/.`;
}

async function render() {
  screen?.abort();
  const controller = new AbortController();
  screen = controller;
  const main = document.getElementById('main');
  const route = parseRoute();
  // A screen that takes a while (2,000 tools: seconds) says so; the one on show stays, under
  // "Loading…", rather than looking current (a Changes screen still said "Live" with its feed ended).
  const loading = firstRender ? undefined : setTimeout(() => {
    if (screen !== controller) return; // a newer render owns the page
    main.setAttribute('aria-busy', 'true');
    main.prepend(h('p', { class: 'notice loading', role: 'status' }, 'Loading…'));
  }, 250);
  try {
    if (state.identity === null) await loadIdentity(controller.signal);
    if (controller.signal.aborted) return;
    const wrong = unknownAddress(route);
    const allowed = state.identity?.namespaces;
    if (wrong === null && route.namespace === 'default' && Array.isArray(allowed) && allowed.length > 0 && !allowed.includes('default')) {
      // A token bound to other namespaces sees no `default` (the unprefixed addresses): open its
      // first one instead. Another namespace it does not see is Not found (the API's 404), never
      // silently swapped for one it does (a shared link to #/ns/b/tools/x must not show a's x).
      location.replace(href(allowed[0], [NAMESPACED_SCREENS.includes(route.screen) ? route.screen : 'tools']));
      return;
    }
    updateChrome(route);
    // The Changes screen's feed watches (it does not start when the screen fails to load: see the catch).
    feedWatches = route.screen === 'changes' && wrong === null && state.identity !== null;
    watchToken();
    if (state.identity === null) {
      retryDelay = 1000;
      return signInScreen(main);
    }
    if (wrong !== null) throw new NotFound(wrong);
    if (route.screen === 'tools' && route.name !== undefined) await toolScreen(main, route, controller.signal);
    else if (route.screen === 'tools') await toolsScreen(main, route, controller.signal);
    else if (route.screen === 'changes') await changesScreen(main, route, controller.signal);
    else if (route.screen === 'upstreams') await upstreamsScreen(main, route, controller.signal);
    else if (route.screen === 'calls' && !canAdmin()) callsNeedAdmin(main, route);
    else if (route.screen === 'calls') await callsScreen(main, route, controller.signal, { show, heading, href });
    else await importScreen(main, route, controller.signal);
    retryDelay = 1000;
  } catch (error) {
    if (controller.signal.aborted) return;
    if (feedWatches) {
      feedWatches = false; // the Changes screen did not load: no feed of its own
      watchToken();
    }
    if (error instanceof UnreachableError) return unreachableScreen(main, controller.signal);
    retryDelay = 1000; // the server answered
    if (error instanceof NotFound) return notFoundScreen(main, route, error.message);
    if (signedOutBy(error)) return;
    if (error instanceof ApiError && error.code === 'FORBIDDEN') return lacksScopeScreen(main, route, error);
    if (error instanceof ApiError && error.code === 'NAMESPACE_NOT_FOUND') {
      return notFoundScreen(main, route, storedToken() === null ? `no namespace ${route.namespace} on this server.` : `no namespace ${route.namespace} that this token may see.`);
    }
    // An address the API refuses (400) or has nothing at (404): the reason is the server's.
    if (error instanceof ApiError && (error.status === 404 || error.status === 400)) return notFoundScreen(main, route, problemText(error));
    errorScreen(main, error);
  } finally {
    clearTimeout(loading);
    if (screen === controller) {
      main.removeAttribute('aria-busy');
      main.querySelector(':scope > .loading')?.remove();
    }
  }
}

document.getElementById('skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  document.getElementById('main').focus();
});
window.addEventListener('hashchange', () => void render());
document.addEventListener('visibilitychange', () => {
  holdWhileHidden();
  watchToken();
});
holdWhileHidden(); // opened in a background tab: held until first shown, too
void render();
