// Conditional writes (expectedVersion) racing from several processes on one PostgreSQL schema:
// the suite every store with a worker runs (test/support/feed-processes.ts).
import { conditionalProcessTests } from '../support/feed-processes.js';
import { useFileDatabase, usePgProcessStore } from './helpers.js';

conditionalProcessTests(usePgProcessStore(useFileDatabase()));
