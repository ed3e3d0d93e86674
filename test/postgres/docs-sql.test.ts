// The SQL that docs/postgres.md gives DBAs, run as they would run it: the page's ```sql block,
// as written, through the stock psql client against a registry in the default schema. Its
// hand UPDATE must be seen by a running instance's cache, as the page says. Where there is
// no psql the test is skipped, saying why.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { until } from '../support/waiting.js';
import { useFileDatabase } from './helpers.js';

const database = useFileDatabase();
const PAGE = fileURLToPath(new URL('../../docs/postgres.md', import.meta.url));
const PSQL = process.env.PSQL ?? 'psql';
const psqlProbe = spawnSync(PSQL, ['--version'], { encoding: 'utf8' });
const psqlMissing = psqlProbe.status === 0 ? undefined : `no psql client (${PSQL}); install postgresql-client or set PSQL to run this test`;

/** The page's ```sql blocks. */
function sqlBlocks(text: string): string[] {
  return [...text.matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
}

it('docs/postgres.md has its DBA queries in one sql block', () => {
  expect(sqlBlocks(readFileSync(PAGE, 'utf8'))).toHaveLength(1);
});

it("the DBA queries of docs/postgres.md run in psql as written, and their hand disable reaches a running instance's cache", async (context) => {
  if (psqlMissing !== undefined) context.skip(psqlMissing);
  const [block] = sqlBlocks(readFileSync(PAGE, 'utf8'));
  const registry = await openPostgresToolRegistry({ connectionString: database.url() });
  try {
    await registry.register({ tool_name: 'search', version: '1', input_schema: {}, output_schema: {} });
    await registry.register({ tool_name: 'search', version: '2', input_schema: { type: 'object' }, output_schema: {} });
    expect((await registry.get('search'))?.enabled).toBe(true);
    await registry.putUpstream({ name: 'github', transport: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GH_TOKEN}' } } });
    await registry.recordCalls([{ at: new Date().toISOString(), token: 'ci', persona: null, namespace: 'default', tool: 'github_issues', version: null, fingerprint: null, upstream: 'github', duration_ms: 35.5, outcome: 'UPSTREAM_UNAVAILABLE' }]);

    const result = spawnSync(PSQL, ['--no-psqlrc', '--set', 'ON_ERROR_STOP=1', '--dbname', database.url(), '--file', '-'], {
      input: block,
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    // "every spec a tool ever had": both versions, oldest first.
    const history = await registry.history('search');
    expect(history.map((entry) => entry.spec.version)).toEqual(['1', '2']);
    const [first, second] = history.map((entry) => result.stdout.indexOf(entry.fingerprint));
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first as number);
    expect(result.stdout).toContain('UPDATE 1');
    // The gateway's rows: the header's reference as written, and the audited call.
    expect(result.stdout).toContain('Bearer ${GH_TOKEN}');
    expect(result.stdout).toContain('UPSTREAM_UNAVAILABLE');

    // The cached instance learns of the hand edit without a restart, and the feed has it.
    await until(async () => (await registry.get('search'))?.enabled === false, 'the hand disable to reach the cache');
    const { events } = await registry.changes();
    expect(events.at(-1)).toMatchObject({ tool_name: 'search', action: 'disabled', version: '2' });
  } finally {
    await registry.close();
  }
});
