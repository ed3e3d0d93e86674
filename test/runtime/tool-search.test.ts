// Tool search for agents (issue 26): ToolSet.search, toolSearchTool, a scripted agent loop
// over 500 tools, and the exporters' deferred loading (checked against the SDKs' own types;
// `npm run typecheck` checks the assignments, vitest the values).
import { EventEmitter } from 'node:events';
import type { BetaToolReferenceBlockParam, BetaToolUnion } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { Tool as OpenAIResponsesToolParam } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, ToolBox, ToolSet, defineTool, toAnthropicToolReferences, toAnthropicTools, toOpenAITools, toolSearchTool } from '../../src/index.js';
import type { Tool, ToolHandlerOptions, ToolSearchOutput, ToolSpecInput } from '../../src/index.js';
import { CATALOGUE } from '../conformance/search-suite.js';

function toolOf(spec: ToolSpecInput, handler: (args: Record<string, unknown>) => unknown = () => spec.tool_name): Tool {
  return defineTool({
    name: spec.tool_name,
    description: spec.description ?? null,
    input_schema: spec.input_schema as Record<string, unknown>,
    tags: spec.tags ?? [],
    handler,
  });
}

const NOUNS = [
  'invoice', 'customer', 'order', 'ticket', 'project', 'task', 'user', 'team', 'report', 'document', 'folder', 'file', 'calendar_event', 'meeting',
  'message', 'channel', 'contact', 'lead', 'deal', 'product', 'shipment', 'payment', 'refund', 'subscription', 'coupon', 'review', 'comment',
  'webhook', 'api_key', 'backup', 'database', 'table', 'query', 'dashboard', 'chart', 'metric', 'alert_rule', 'incident', 'server', 'container',
  'cluster', 'volume', 'snapshot', 'domain', 'certificate', 'playlist', 'song', 'photo', 'album', 'recipe', 'workout', 'note', 'bookmark',
  'feed', 'podcast', 'video', 'course', 'lesson', 'quiz', 'survey', 'form', 'employee', 'timesheet', 'expense', 'budget', 'forecast_model',
  'warehouse', 'supplier', 'contract', 'policy', 'claim', 'patient', 'appointment', 'prescription', 'vehicle', 'route', 'trip', 'hotel_booking',
  'flight_booking', 'restaurant', 'menu', 'pet', 'plant', 'device', 'sensor', 'thermostat', 'light', 'lock', 'camera', 'printer', 'repository',
  'branch', 'pull_request', 'build', 'deployment', 'secret', 'log_stream', 'job', 'ledger', 'inventory',
];
const VERBS = ['create', 'get', 'list', 'update', 'delete'];

/** 500 tools: five verbs over a hundred things, plus the one the agent needs. */
function fiveHundredTools(): Tool[] {
  const tools: Tool[] = [];
  for (const noun of NOUNS) {
    for (const verb of VERBS) {
      if (tools.length === 499) break;
      const words = noun.replace(/_/g, ' ');
      tools.push(toolOf({ tool_name: `${verb}_${noun}`, description: `${verb[0]?.toUpperCase()}${verb.slice(1)} a ${words} in the workspace.`, input_schema: { type: 'object', properties: { id: { type: 'string' } } }, output_schema: {} }));
    }
  }
  tools.push(
    toolOf(
      {
        tool_name: 'convert_temperature',
        description: 'Convert a temperature between Celsius and Fahrenheit.',
        input_schema: { type: 'object', properties: { value: { type: 'number' }, to: { enum: ['C', 'F'] } }, required: ['value', 'to'] },
        output_schema: {},
      },
      (args) => ({ value: args.to === 'F' ? (Number(args.value) * 9) / 5 + 32 : ((Number(args.value) - 32) * 5) / 9 }),
    ),
  );
  return tools;
}

describe('ToolSet.search', () => {
  it('ranks exactly as registry.search over the same tools', async () => {
    const set = new ToolSet(CATALOGUE.map((spec) => toolOf(spec)));
    const registry = new InMemoryToolRegistry();
    await registry.registerMany(set.tools().map((tool) => tool.spec));
    for (const query of ['weather in Paris', 'emails', 'github issue', 'target language', 'nothing at all zzz']) {
      const fromSet = set.search(query, 5).map((hit) => [hit.tool.name, hit.score]);
      const fromRegistry = (await registry.search(query, { limit: 5 })).results.map((result) => [result.registration.spec.tool_name, result.score]);
      expect(fromSet, query).toEqual(fromRegistry);
    }
    await registry.close();
  });

  it('returns the very Tool objects, at most k, and refuses misuse', () => {
    const tools = CATALOGUE.map((spec) => toolOf(spec));
    const set = new ToolSet(tools);
    const hits = set.search('weather email github search', 3);
    expect(hits).toHaveLength(3);
    for (const hit of hits) expect(tools).toContain(hit.tool);
    expect(() => set.search(5 as unknown as string)).toThrow(TypeError);
    expect(() => set.search('x', 0)).toThrow(TypeError);
  });
});

describe('toolSearchTool', () => {
  it('answers with names and descriptions, and loads the tools into the turn box as ephemeral tools', async () => {
    const set = new ToolSet(CATALOGUE.map((spec) => toolOf(spec)));
    const search = toolSearchTool(set, { k: 2 });
    expect(search.name).toBe('tool_search');
    expect(search.ephemeral).toBe(false);
    const box = new ToolBox([search]);
    const result = await box.invoke('tool_search', { query: 'send an email' }, { context: box });
    expect(result.success).toBe(true);
    const output = (result as { data: ToolSearchOutput }).data;
    expect(output.tools.map((tool) => tool.name)).toEqual(['send_email', 'search_emails']);
    expect(output.tools[0]?.description).toBe('Send an e-mail message to one or more recipients.');
    expect(output.loaded).toEqual(['send_email', 'search_emails']);
    expect(box.all().map((tool) => [tool.name, tool.ephemeral])).toEqual([['tool_search', false], ['send_email', true], ['search_emails', true]]);
    // Asked again: already loaded, nothing registered twice.
    const again = await box.invoke('tool_search', { query: 'send an email' }, { context: { toolBox: box } });
    expect((again as { data: ToolSearchOutput }).data.loaded).toEqual([]);
    // Without a box as context it only answers.
    const plain = await search.handler({ query: 'weather' }, { context: undefined, signal: new AbortController().signal, tool_name: 'tool_search' } as ToolHandlerOptions);
    expect((plain as ToolSearchOutput).loaded).toEqual([]);
    expect(box.pruneEphemeral()).toEqual(['send_email', 'search_emails']);
    expect(box.all().map((tool) => tool.name)).toEqual(['tool_search']);
  });

  it("invoked under a policy (as an MCP session's calls are), finds and loads only the tools the policy allows", async () => {
    const wipe = defineTool({ name: 'wipe_emails', description: 'Delete every email in the mailbox.', input_schema: {}, permissions: { required: ['ADMIN'] }, handler: () => 'wiped' });
    const tools = [...CATALOGUE.map((spec) => toolOf(spec)), wipe];
    const search = toolSearchTool(new ToolSet(tools), { k: 5 });
    const set = new ToolSet([...tools, search]);
    const names = (result: unknown): string[] => (result as { data: ToolSearchOutput }).data.tools.map((tool) => tool.name);
    expect(names(await set.invoke('tool_search', { query: 'email' }))).toEqual(expect.arrayContaining(['send_email', 'search_emails', 'wipe_emails']));
    // An allowlist: send_email is hidden; a required permission the persona lacks: wipe_emails is hidden.
    const reader = { persona: 'reader', allowed_tools: ['tool_search', 'search_emails', 'wipe_emails'] };
    expect(names(await set.invoke('tool_search', { query: 'email' }, { policy: reader }))).toEqual(['search_emails']);
    const admin = { ...reader, allowed_permissions: ['ADMIN'] };
    expect(names(await set.invoke('tool_search', { query: 'email' }, { policy: admin }))).toEqual(['wipe_emails', 'search_emails']);
    // In a turn's box: nothing hidden is loaded either.
    const box = new ToolBox([search]);
    const loaded = await box.invoke('tool_search', { query: 'send an email' }, { context: box, policy: reader });
    expect((loaded as { data: ToolSearchOutput }).data).toEqual({ tools: [{ name: 'search_emails', description: expect.any(String) }], loaded: ['search_emails'] });
    expect(box.has('send_email')).toBe(false);
  });

  it('in a set derived with forPolicy (its forTurn box, toToolSet, a merge), finds and loads only what that policy allows, with no policy per call', async () => {
    const wipe = defineTool({ name: 'wipe_emails', description: 'Delete every email in the mailbox.', input_schema: {}, permissions: { required: ['ADMIN'] }, handler: () => 'wiped' });
    const tools = [...CATALOGUE.map((spec) => toolOf(spec)), wipe];
    const full = new ToolSet([...tools, toolSearchTool(new ToolSet(tools), { k: 5 })]);
    const reader = { persona: 'reader', allowed_tools: ['tool_search', 'search_emails', 'wipe_emails'] };
    // The set the model is shown, invoked without a policy (docs/runtime.md: "invoke on the forPolicy set").
    const shown = full.forPolicy(reader);
    const names = (result: unknown): string[] => (result as { data: ToolSearchOutput }).data.tools.map((tool) => tool.name);
    expect(names(await shown.invoke('tool_search', { query: 'email' }))).toEqual(['search_emails']);
    const box = shown.forTurn();
    const found = await box.invoke('tool_search', { query: 'delete every email' }, { context: box });
    // search_emails is in the box already (the set's tools): nothing is loaded, wipe_emails above all.
    expect((found as { data: ToolSearchOutput }).data).toEqual({ tools: [{ name: 'search_emails', description: expect.any(String) }], loaded: [] });
    expect(box.has('wipe_emails')).toBe(false);
    expect(await box.invoke('wipe_emails', {})).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    // Derived again: the policy stays with the tools.
    expect(names(await box.toToolSet().invoke('tool_search', { query: 'email' }))).toEqual(['search_emails']);
    const merged = ToolBox.merge([box, new ToolBox([defineTool({ name: 'plugin', input_schema: {}, handler: () => 1 })])]);
    expect(names(await merged.invoke('tool_search', { query: 'email' }))).toEqual(['search_emails']);
    // The persona's box as the context of a search tool invoked elsewhere (a set not bound to the policy): its policy still rules.
    const elsewhere = new ToolSet([toolSearchTool(new ToolSet(tools), { k: 5 })]);
    const turn = shown.forTurn();
    const other = await elsewhere.invoke('tool_search', { query: 'delete every email' }, { context: turn });
    expect(names(other)).toEqual(['search_emails']);
    expect(turn.has('wipe_emails')).toBe(false);
    // Two policies: both must allow.
    expect(names(await shown.forPolicy({ persona: 'admin', allowed_permissions: ['ADMIN'] }).invoke('tool_search', { query: 'email' }))).toEqual(['search_emails']);
    // The full set is not bound: its calls run under what each call says.
    expect(names(await full.invoke('tool_search', { query: 'email' }))).toEqual(expect.arrayContaining(['send_email', 'wipe_emails']));
  });

  it('refuses a bad source or options, and an empty query is INVALID_ARGUMENTS', async () => {
    expect(() => toolSearchTool([] as unknown as ToolSet)).toThrow(TypeError);
    expect(() => toolSearchTool(new ToolSet([]), { k: 0 })).toThrow(TypeError);
    const box = new ToolBox([toolSearchTool(new ToolSet([]))]);
    const result = await box.invoke('tool_search', { query: '' }, { context: box });
    expect(result).toMatchObject({ success: false, code: 'INVALID_ARGUMENTS' });
  });
});

describe('an agent loop over 500 tools', () => {
  it('starts with the search tool alone, loads the right tool for the turn, calls it, and loses it on ack', async () => {
    const set = new ToolSet(fiveHundredTools());
    expect(set.size).toBe(500);
    const search = toolSearchTool(set, { k: 3 });
    const turn = new EventEmitter();
    const box = new ToolBox([search]);
    box.bindContext(turn);

    // The scripted model: it reads the tools it is shown, calls one, reads the result.
    const shown = () => toAnthropicTools(box).map((tool) => tool.name);
    const transcript: string[] = [];
    expect(shown()).toEqual(['tool_search']);
    transcript.push('model: tool_search({"query":"convert 21 celsius to fahrenheit"})');
    const found = await box.invoke('tool_search', { query: 'convert 21 celsius to fahrenheit' }, { context: box });
    const output = (found as { data: ToolSearchOutput }).data;
    expect(output.tools[0]?.name).toBe('convert_temperature');
    // Shown next: the search tool and exactly the three tools it loaded.
    expect(shown()).toEqual(['tool_search', ...output.loaded]);
    const chosen = output.tools[0]?.name as string;
    transcript.push(`model: ${chosen}({"value":21,"to":"F"})`);
    const answer = await box.invoke(chosen, { value: 21, to: 'F' });
    expect(answer).toMatchObject({ success: true, data: { value: 69.8 } });
    // The turn is acknowledged: the loaded tools are gone, the search tool stays.
    turn.emit('ack');
    expect(box.has(chosen)).toBe(false);
    expect(shown()).toEqual(['tool_search']);
    expect(await box.invoke(chosen, { value: 1, to: 'F' })).toMatchObject({ success: false, code: 'TOOL_NOT_FOUND' });
    expect(transcript).toHaveLength(2);
  });
});

describe('deferred loading in the exports', () => {
  const tools = CATALOGUE.slice(0, 3).map((spec) => toolOf(spec));

  it('Anthropic: defer_loading on every tool and the BM25 tool search tool, as the SDK types them', () => {
    const exported: BetaToolUnion[] = toAnthropicTools(tools, { deferLoading: true });
    expect(exported.map((tool) => ('defer_loading' in tool ? tool.defer_loading : undefined))).toEqual([true, true, true, undefined]);
    expect(exported.at(-1)).toEqual({ type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' });
    const regex = toAnthropicTools(tools, { deferLoading: { toolSearch: 'regex', keep: ['get_weather'] } });
    expect(regex.at(-1)).toEqual({ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' });
    expect(regex[0]).not.toHaveProperty('defer_loading');
    // Without deferLoading nothing changes.
    expect(toAnthropicTools(tools).some((tool) => 'defer_loading' in tool)).toBe(false);
  });

  it('Anthropic, client-side: the own search tool stays loaded and answers with tool_reference blocks', async () => {
    const search = toolSearchTool(new ToolSet(tools));
    const exported = toAnthropicTools([search, ...tools], { deferLoading: { keep: ['tool_search'], toolSearch: 'client' } });
    expect(exported.map((tool) => [tool.name, 'defer_loading' in tool])).toEqual([['tool_search', false], ['get_weather', true], ['weatherAlerts', true], ['send_email', true]]);
    const result = await search.handler({ query: 'weather' }, { context: undefined, signal: new AbortController().signal, tool_name: 'tool_search' } as ToolHandlerOptions);
    const references: BetaToolReferenceBlockParam[] = toAnthropicToolReferences(result as ToolSearchOutput);
    expect(references).toEqual((result as ToolSearchOutput).tools.map((tool) => ({ type: 'tool_reference', tool_name: tool.name })));
    expect(references.map((reference) => reference.tool_name).sort()).toEqual(['get_weather', 'weatherAlerts']);
    const registry = new InMemoryToolRegistry();
    await registry.registerMany(tools.map((tool) => tool.spec));
    expect(toAnthropicToolReferences(await registry.search('weather'))).toEqual(references);
    expect(toAnthropicToolReferences(['a'])).toEqual([{ type: 'tool_reference', tool_name: 'a' }]);
    expect(() => toAnthropicToolReferences({} as unknown as string[])).toThrow(TypeError);
    // A name Anthropic refuses in a tool_reference (a dot, more than 64 characters) fails the request: refused here, naming it.
    expect(() => toAnthropicToolReferences(['ok', 'svc.lookup', 'x'.repeat(65)])).toThrow(
      expect.objectContaining({ code: 'PROVIDER_INCOMPATIBLE', context: expect.objectContaining({ tool_name: 'svc.lookup', findings: [expect.objectContaining({ tool_name: 'svc.lookup', rule: 'name-pattern' }), expect.objectContaining({ tool_name: 'x'.repeat(65) })] }) }),
    );
    await registry.close();
  });

  it('OpenAI Responses: defer_loading on functions and { "type": "tool_search" }, as the SDK types them', () => {
    const exported: OpenAIResponsesToolParam[] = toOpenAITools(tools, { api: 'responses', deferLoading: true });
    expect(exported.at(-1)).toEqual({ type: 'tool_search' });
    expect(exported.slice(0, 3).every((tool) => tool.type === 'function' && tool.defer_loading === true)).toBe(true);
    const kept = toOpenAITools(tools, { api: 'responses', deferLoading: { keep: ['send_email'], toolSearch: 'none' } });
    expect(kept).toHaveLength(3);
    expect(kept.map((tool) => 'defer_loading' in tool)).toEqual([true, true, false]);
    expect(() => toOpenAITools(tools, { deferLoading: true })).toThrow(TypeError);
    expect(() => toOpenAITools(tools, { api: 'responses', deferLoading: { toolSearch: 'bm25' as 'hosted' } })).toThrow(TypeError);
    expect(() => toAnthropicTools(tools, { deferLoading: 'yes' as unknown as boolean })).toThrow(TypeError);
  });
});
