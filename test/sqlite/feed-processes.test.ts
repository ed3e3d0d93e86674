// The change feed of the SQLite store with real processes: the suite every store with a
// worker runs (test/support/feed-processes.ts).
import { changeFeedProcessTests } from '../support/feed-processes.js';
import { useSqliteProcessStore } from './helpers.js';

changeFeedProcessTests(useSqliteProcessStore());
