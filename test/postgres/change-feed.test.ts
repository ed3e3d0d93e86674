// The change feed of the PostgreSQL store with real processes (issue 11 on issue 10's store):
// the suite every store with a worker runs (test/support/feed-processes.ts).
import { changeFeedProcessTests } from '../support/feed-processes.js';
import { useFileDatabase, usePgProcessStore } from './helpers.js';

changeFeedProcessTests(usePgProcessStore(useFileDatabase()));
