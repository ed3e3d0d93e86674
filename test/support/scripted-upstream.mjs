// A hand-written MCP server over stdio for the gateway relay's tests: plain JSON-RPC lines, no
// SDK (so it starts in a few tens of ms, and answers what a test asks for, out of order or
// malformed). Tools:
// - `pair` {text}: held until a second `pair` call comes, then the second is answered first;
//   each sends one progress report (message = its text) under the token it was given, then
//   its text back;
// - `hold`: sends one progress report, never answers (a notifications/cancelled ends it);
// - `fail` {code?, error?}: a JSON-RPC error (code, default -32050; "boom", with data), or
//   `error` as it is given (5, null, {code: 'x'}: what no JSON-RPC error is);
// - `answer` {kind}: the result RESULTS[kind], as it is; `over-bound` and `over-bound-id-last`: a
//   text result whose line is over 10 MiB, its id before or after the result (`over-bound-bad-id`:
//   an id that is no JSON string); `not-json`: a line that is no JSON (cut short) naming its id,
//   `not-json-no-id` one naming none; `not-json-nested`: a line that is no JSON (a NaN, as Python's
//   json.dumps writes it) whose result holds an object with an `id` (that of the first call held,
//   `hold`) before the answer's own `id`, last;
// - `seen`: what it saw, as JSON text: the id of every tools/call and every cancellation
//   ({ requestId, matched: whether a call of that id was in flight, reason });
// - `flood` {count, apart?, change?}: sends `count` notifications/tools/list_changed (all in one
//   write, or with `apart` each in a write of its own, one per turn of its event loop), then
//   answers; with `change`, the next tools/list it is asked changes `seen`'s description while
//   it is answered: list_changed goes out first, then the listing as it was before the change.
//   With `kind` `progress` (under the call's progress token), `log` (notifications/message,
//   level info), `other` (notifications/resources/updated, which the gateway has no handler
//   for) or `cancelled` (notifications/cancelled of requests it never sent) it floods those instead, in writes of 1,000 one turn of its event loop apart,
//   each carrying `bytes` characters (default 10), then answers `flooded`. With `kind`
//   `sampling`, it sends `count` sampling/createMessage requests in one write and answers, once
//   each is answered, `{"answered": N, "refused": [messages of the error answers]}` as text.
//   With `kind` `ping`, it stops reading its input and sends `count` pings, each id `bytes`
//   characters long (the answers then pile up in the gateway), and never answers or exits.
// Its tools/list answers a JSON-RPC error to the first SCRIPTED_LIST_FAILURES requests (a
// number, or `all`; none when unset), and appends a line to the file SCRIPTED_LIST_LOG (when
// set) for each tools/list it is asked (its number and when, in ms since the epoch); with
// SCRIPTED_LIST_DELAY_MS=D it answers each D ms after it is asked (a slow listing; only the first
// SCRIPTED_LIST_DELAYED=N listings when that is set). With SCRIPTED_LIST_ENDLESS set, every tools/list answers
// no tools and a next cursor (a pager that never ends). SCRIPTED_MANY_TOOLS=N lists N more tools,
// `many0` to `many{N-1}`, after those (each answers its name; with SCRIPTED_MANY_DISTINCT set each has
// an inputSchema of its own, else all `{type: object}`); SCRIPTED_PAGE_SIZE=N lists them in
// pages of N. SCRIPTED_UNHASHABLE set lists two valid MCP tools more whose definitions no hash can
// be taken of: `deep` (an inputSchema nested 998 levels) and `huge` (`maximum: 1e999`, which
// JSON.parse reads as Infinity). SCRIPTED_LIST_CHANGED_EACH set sends list_changed before every
// tools/list answer (a listing that asks for the next one).
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate, setInterval, setTimeout } from 'node:timers';

const RESULTS = {
  usual: { content: [{ type: 'text', text: 't' }], structuredContent: { a: 1 }, isError: false, _meta: { 'example/x': 1 } },
  // Not MCP: content must be an array of blocks.
  'not-mcp': { content: 'text' },
  // A text block with a key MCP does not have, a result key MCP does not have: the SDK's client drops both.
  'extra-key': { content: [{ type: 'text', text: 'x', extra: 1 }], note: 'dropped' },
  // No content: the SDK's client reads it as [].
  'no-content': { structuredContent: { b: 2 } },
  // Not even a JSON-RPC response: the SDK's transport drops the answer (the call would wait for its timeout).
  null: null,
  five: 5,
  // Neither result nor error (JSON.stringify leaves the key out).
  missing: undefined,
};
const object = { type: 'object' };
const TOOLS = [
  { name: 'pair', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'hold', inputSchema: object },
  { name: 'fail', inputSchema: object },
  { name: 'answer', inputSchema: { type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] } },
  { name: 'seen', inputSchema: object },
  { name: 'flood', inputSchema: { type: 'object', properties: { count: { type: 'integer' }, apart: { type: 'boolean' }, change: { type: 'boolean' }, kind: { type: 'string' }, bytes: { type: 'integer' } }, required: ['count'] } },
];
// SCRIPTED_MANY_DISTINCT set gives each its own inputSchema (a property of its own name).
const manySchema = (index) => (process.env.SCRIPTED_MANY_DISTINCT === undefined ? object : { type: 'object', properties: { [`p${index}`]: { type: 'string', minLength: 1 } }, required: [`p${index}`] });
for (let index = 0; index < Number(process.env.SCRIPTED_MANY_TOOLS ?? 0); index++) TOOLS.push({ name: `many${index}`, description: `tool ${index}`, inputSchema: manySchema(index) });
// SCRIPTED_ODD_OUTPUT set lists one tool more, `oddout`, whose outputSchema ajv cannot compile (an unknown type).
if (process.env.SCRIPTED_ODD_OUTPUT !== undefined) TOOLS.push({ name: 'oddout', inputSchema: object, outputSchema: { type: 'object', properties: { n: { type: 'integr' } } } });
// SCRIPTED_OVERSIZED set lists one tool more, `oversized`, whose definition is just over 1 MiB of
// JSON (a 1 MiB description), with an outputSchema ajv cannot compile and a number no hash takes:
// its size must be what refuses it, before either is looked at.
if (process.env.SCRIPTED_OVERSIZED !== undefined) {
  TOOLS.push({ name: 'oversized', description: 'd'.repeat(1024 * 1024), inputSchema: { type: 'object', maximum: 'INFINITE' }, outputSchema: { type: 'object', properties: { n: { type: 'integr' } } } });
}
// SCRIPTED_EMPTY_NAME set lists one tool more whose name is '' (the SDK's schema takes it).
if (process.env.SCRIPTED_EMPTY_NAME !== undefined) TOOLS.push({ name: '', inputSchema: object });
if (process.env.SCRIPTED_UNHASHABLE !== undefined) {
  // 998 levels: its own canonical JSON can be taken, a listing's (one level more) cannot.
  let deep = {};
  for (let level = 1; level < 998; level++) deep = { a: deep };
  deep = { type: 'object', a: deep };
  // A placeholder the listing's text replaces with a number JSON cannot carry.
  TOOLS.push({ name: 'deep', inputSchema: deep }, { name: 'huge', inputSchema: { type: 'object', maximum: 'INFINITE' } });
}

const listFailures = process.env.SCRIPTED_LIST_FAILURES === 'all' ? Infinity : Number(process.env.SCRIPTED_LIST_FAILURES ?? 0);
let lists = 0;
/** `flood` with `change`: the next tools/list changes the listing under way. */
let changeAtNextList = false;
const calls = [];
const cancelled = [];
/** Calls answered later, by id. */
const held = new Map();
let pairs = [];
/** `flood` of kind `sampling`: its requests waiting for their answer, by id. */
const asking = new Map();
let askIds = 0;

function send(message) {
  process.stdout.write(`${JSON.stringify(message).replaceAll('"maximum":"INFINITE"', '"maximum":1e999')}\n`);
}

function progress(request, message) {
  const token = request.params._meta?.progressToken;
  if (token !== undefined) send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 1, message } });
}

function text(request, value) {
  send({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: value }] } });
}

function call(request) {
  const { name, arguments: args = {} } = request.params;
  calls.push(request.id);
  if (name === 'pair') {
    pairs.push(request);
    held.set(request.id, request);
    if (pairs.length < 2) return;
    const [first, second] = pairs;
    pairs = [];
    for (const each of [second, first]) {
      held.delete(each.id);
      progress(each, each.params.arguments.text);
      text(each, each.params.arguments.text);
    }
  } else if (name === 'hold') {
    held.set(request.id, request);
    progress(request, 'holding');
  } else if (name === 'fail' && 'error' in args) {
    send({ jsonrpc: '2.0', id: request.id, error: args.error });
  } else if (name === 'fail') {
    send({ jsonrpc: '2.0', id: request.id, error: { code: args?.code ?? -32050, message: 'boom', data: { why: 'asked to' } } });
  } else if (name === 'answer' && args.kind.startsWith('over-bound')) {
    // A line past the gateway's 10 MiB bound, its id before the result or (`over-bound-id-last`) after it.
    // `over-bound-bad-id`: an id no JSON parser reads (an escape JSON does not have).
    const id = args.kind === 'over-bound-bad-id' ? '"id":"\\x"' : `"id":${JSON.stringify(request.id)}`;
    const result = `"result":{"content":[{"type":"text","text":"${'x'.repeat(10 * 1024 * 1024)}"}]}`;
    process.stdout.write(`{"jsonrpc":"2.0",${args.kind === 'over-bound' ? `${id},${result}` : `${result},${id}`}}\n`);
  } else if (name === 'answer' && args.kind === 'not-json-nested') {
    const row = { id: [...held.keys()][0] ?? 0, score: 'NAN' };
    const result = { content: [{ type: 'text', text: 'rows' }], structuredContent: { rows: [row] } };
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', result, id: request.id }).replace('"NAN"', 'NaN')}\n`);
  } else if (name === 'answer' && args.kind.startsWith('not-json')) {
    // A line that is no JSON (cut short), naming its id (`not-json`) or not (`not-json-no-id`).
    const id = args.kind === 'not-json' ? `"id":${JSON.stringify(request.id)},` : '';
    process.stdout.write(`{"jsonrpc":"2.0",${id}"result":{"content":[{"type":"text","text":"cut"}\n`);
  } else if (name === 'answer') {
    send({ jsonrpc: '2.0', id: request.id, result: RESULTS[args.kind] });
  } else if (name === 'flood' && args.kind === 'sampling') {
    const asked = { request, left: args.count, answered: 0, refused: [] };
    let lines = '';
    for (let index = 0; index < args.count; index++) {
      const id = `ask-${++askIds}`;
      asking.set(id, asked);
      lines += `${JSON.stringify({ jsonrpc: '2.0', id, method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: `q${index}` } }], maxTokens: 5 } })}\n`;
    }
    process.stdout.write(lines);
  } else if (name === 'flood' && args.kind === 'ping') {
    process.stdin.pause();
    // Alive until ended (its paused input would not keep it).
    setInterval(() => undefined, 60_000);
    const filler = 'p'.repeat(args.bytes ?? 10);
    let lines = '';
    for (let index = 0; index < args.count; index++) lines += `${JSON.stringify({ jsonrpc: '2.0', id: `${index}${filler}`, method: 'ping' })}\n`;
    process.stdout.write(lines);
  } else if (name === 'flood' && args.kind !== undefined) {
    const filler = 'n'.repeat(args.bytes ?? 10);
    const line = (index) =>
      JSON.stringify(
        args.kind === 'log'
          ? { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `${index} ${filler}` } }
          : args.kind === 'other'
            ? { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: `file:///${index}/${filler}` } }
            : args.kind === 'cancelled'
              ? { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `none-${index}`, reason: filler } }
              : { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: request.params._meta?.progressToken, progress: index + 1, message: filler } },
      );
    let sent = 0;
    const next = () => {
      if (sent >= args.count) return text(request, 'flooded');
      let chunk = '';
      for (const end = Math.min(sent + 1000, args.count); sent < end; sent++) chunk += `${line(sent)}\n`;
      process.stdout.write(chunk);
      setImmediate(next);
    };
    next();
  } else if (name === 'flood') {
    if (args.change === true) changeAtNextList = true;
    const changed = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    if (args.apart !== true) {
      process.stdout.write(`${changed}\n`.repeat(args.count));
      text(request, 'flooded');
      return;
    }
    let left = args.count;
    const next = () => {
      if (left-- === 0) return text(request, 'flooded');
      process.stdout.write(`${changed}\n`);
      setImmediate(next);
    };
    next();
  } else if (name.startsWith('many')) {
    text(request, name);
  } else if (name === 'seen') {
    text(request, JSON.stringify({ calls, cancelled }));
  } else {
    send({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message: `Unknown tool: ${name}` } });
  }
}

/** A tools/list asked: logged (its number and when, ms since the epoch), list_changed first when asked to, answered (after SCRIPTED_LIST_DELAY_MS, when set). */
function listAsked(message) {
  lists++;
  if (process.env.SCRIPTED_LIST_LOG !== undefined) appendFileSync(process.env.SCRIPTED_LIST_LOG, `${lists} ${performance.timeOrigin + performance.now()}\n`);
  if (process.env.SCRIPTED_LIST_CHANGED_EACH !== undefined) send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  const delayed = process.env.SCRIPTED_LIST_DELAYED === undefined || lists <= Number(process.env.SCRIPTED_LIST_DELAYED);
  const delay = delayed ? Number(process.env.SCRIPTED_LIST_DELAY_MS ?? 0) : 0;
  if (delay > 0) setTimeout(() => list(message), delay);
  else list(message);
}

function list(message) {
  if (lists <= listFailures) send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: `listing ${lists} failed` } });
  else if (process.env.SCRIPTED_LIST_ENDLESS !== undefined) send({ jsonrpc: '2.0', id: message.id, result: { tools: [], nextCursor: 'again' } });
  else if (changeAtNextList) {
    changeAtNextList = false;
    const before = JSON.parse(JSON.stringify(TOOLS));
    TOOLS.find((tool) => tool.name === 'seen').description = 'changed during a listing';
    send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    send({ jsonrpc: '2.0', id: message.id, result: { tools: before } });
  } else if (process.env.SCRIPTED_PAGE_SIZE !== undefined) {
    // Pages of SCRIPTED_PAGE_SIZE tools, the cursor the index of the next one.
    const size = Number(process.env.SCRIPTED_PAGE_SIZE);
    const from = Number(message.params?.cursor ?? 0);
    const next = from + size < TOOLS.length ? { nextCursor: String(from + size) } : {};
    send({ jsonrpc: '2.0', id: message.id, result: { tools: TOOLS.slice(from, from + size), ...next } });
  } else send({ jsonrpc: '2.0', id: message.id, result: { tools: TOOLS } });
}

function handle(message) {
  if (message.method === 'initialize') {
    send({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1.0.0' } } });
  } else if (message.method === 'tools/list') {
    listAsked(message);
  } else if (message.method === 'tools/call') {
    call(message);
  } else if (message.method === 'notifications/cancelled') {
    const { requestId, reason } = message.params;
    cancelled.push({ requestId, matched: held.delete(requestId), reason });
  } else if (message.method === undefined && asking.has(message.id)) {
    const asked = asking.get(message.id);
    asking.delete(message.id);
    if (message.error !== undefined) asked.refused.push(message.error.message);
    else asked.answered++;
    if (--asked.left === 0) text(asked.request, JSON.stringify({ answered: asked.answered, refused: asked.refused }));
  } else if (message.id !== undefined && message.method !== undefined) {
    send({ jsonrpc: '2.0', id: message.id, result: {} });
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, end);
    buffer = buffer.slice(end + 1);
    if (line.trim() !== '') handle(JSON.parse(line));
  }
});
