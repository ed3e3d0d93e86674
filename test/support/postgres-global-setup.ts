// vitest globalSetup: one PostgreSQL server for the whole run; test files get its URL with
// inject('postgresUrl') and make their own database (test/support/postgres.ts).
import type { TestProject } from 'vitest/node';
import { startTestPostgres } from './postgres-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL on the run's PostgreSQL server (its `postgres` database). */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}
