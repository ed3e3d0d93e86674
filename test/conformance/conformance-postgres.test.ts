// The conformance suite on the PostgreSQL store (its read cache on); see conformance.test.ts.
import { runConformance } from './conformance-run.js';

runConformance(['postgres']);
