// The conformance suite on the PostgreSQL store with its read cache off; see conformance.test.ts.
import { runConformance } from './conformance-run.js';

runConformance(['postgres-nocache']);
