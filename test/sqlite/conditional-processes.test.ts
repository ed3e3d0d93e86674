// Conditional writes (expectedVersion) racing from several processes on one SQLite file: the
// suite every store with a worker runs (test/support/feed-processes.ts).
import { conditionalProcessTests } from '../support/feed-processes.js';
import { useSqliteProcessStore } from './helpers.js';

conditionalProcessTests(useSqliteProcessStore());
