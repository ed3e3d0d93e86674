// Two `serve` processes on one PostgreSQL database: a write through one reaches the other's
// SSE clients (the delay is measured and printed, not asserted against the clock: the
// store's own coherence test holds the 1 s bound), and a namespace one creates the other finds.
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, useChildProcessTimeout } from '../cli/helpers.js';
import type { RunningCli } from '../cli/helpers.js';
import { useFileDatabase } from '../postgres/helpers.js';
import { until } from '../support/waiting.js';
import { spec } from './helpers.js';

useChildProcessTimeout();

const db = useFileDatabase();
const running: RunningCli[] = [];
afterAll(async () => {
  for (const cli of running) cli.child.kill('SIGTERM');
  await Promise.all(running.map((cli) => cli.exited));
});

async function serve(url: string): Promise<string> {
  const cli = startCli(['serve', '--port', '0', '--db', url], { cwd: process.cwd() });
  running.push(cli);
  await cli.lines(1);
  const match = /^listening on (http:\/\/\S+)$/m.exec(cli.stdout());
  if (match === null) throw new Error(`serve did not start: ${cli.stderr()}`);
  return match[1] as string;
}

describe('a fleet of two servers on one PostgreSQL', () => {
  it("a write through one reaches the other's SSE clients; namespaces are shared", async () => {
    const url = `${db.url()}?schema=${db.schema()}`;
    const [one, two] = await Promise.all([serve(url), serve(url)]);
    const controller = new AbortController();
    const response = await fetch(`${two}/v1/changes`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const next = async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (;;) {
        const found = pattern.exec(text);
        if (found !== null) {
          text = text.slice(found.index + found[0].length);
          return found;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before ${pattern}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await next(/: stream open at revision \d+\n/);
    const delays: number[] = [];
    for (const name of ['alpha', 'beta', 'gamma']) {
      const put = await fetch(`${one}/v1/tools/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec(name)) });
      expect(put.status).toBe(201);
      const answered = performance.now();
      const event = await next(/^data: (.*)$/m);
      delays.push(performance.now() - answered);
      expect(JSON.parse(event[1] as string)).toMatchObject({ tool_name: name, action: 'added' });
    }
    controller.abort();
    console.log(`fleet: a write through one server reached the other's SSE client ${delays.map((d) => d.toFixed(0)).join(', ')} ms after its 201`);
    // A read through the other server sees it at once, too.
    expect(((await (await fetch(`${two}/v1/tools/gamma`)).json()) as { spec: { tool_name: string } }).spec.tool_name).toBe('gamma');
    expect((await fetch(`${one}/v1/namespaces/team_a`, { method: 'PUT' })).status).toBe(201);
    expect((await fetch(`${two}/v1/namespaces/team_a`, { method: 'PUT' })).status).toBe(200);
    expect(await (await fetch(`${two}/v1/namespaces`)).json()).toEqual({ namespaces: ['default', 'team_a'] });
    expect((await fetch(`${two}/v1/namespaces/team_a/tools/alpha`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec('alpha', 'team')) })).status).toBe(201);
    // The other server's read cache follows the commit (NOTIFY wakes it; the store's bound is 1 s).
    await until(async () => (await fetch(`${one}/v1/namespaces/team_a/tools/alpha`)).status === 200, "team_a's alpha on the other server");
    expect(((await (await fetch(`${one}/v1/tools/alpha`)).json()) as { spec: { version: string } }).spec.version).toBe('1');
  });
});
