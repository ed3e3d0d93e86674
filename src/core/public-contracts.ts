// The data contracts as the package exports them: the schemas of contracts.ts, whose output is
// a deeply frozen copy ("zod, strict, deeply frozen"). `.overwrite` keeps each a ZodObject, so
// `.shape` and `.extend` work as before; zod refuses `.pick`, `.omit`, `.partial` and `.merge`
// on a schema with such a step (build those from `.shape`). A copy, not the parsed value
// frozen in place: zod hands back the caller's own schema objects (`input_schema`), which must
// stay theirs. The core validates with the unfrozen schemas (a copy there would cost every
// register) and freezes what the registry hands out itself.
import type { z } from 'zod';
import { frozenJsonCopy } from './canonical.js';
import * as contracts from './contracts.js';

/** A tool specification: what an agent needs to call a tool. Unknown fields are an error; the output is deeply frozen. */
export const ToolSpec = contracts.ToolSpec.overwrite(frozenJsonCopy);
export type ToolSpec = z.output<typeof ToolSpec>;

/** A stored tool: its spec, whether it is enabled, and when this spec was registered. The output is deeply frozen. */
export const ToolRegistration = contracts.ToolRegistration.overwrite(frozenJsonCopy);
export type ToolRegistration = z.output<typeof ToolRegistration>;

/** The whole registry as data: the wire format of export and import. The output is deeply frozen. */
export const ToolRegistrySnapshot = contracts.ToolRegistrySnapshot.overwrite(frozenJsonCopy);
export type ToolRegistrySnapshot = z.output<typeof ToolRegistrySnapshot>;

/** A tool's deprecation (`message`, `replacement`, `sunset`), as a registration carries it. The output is deeply frozen. */
export const Deprecation = contracts.Deprecation.overwrite(frozenJsonCopy);
export type Deprecation = z.output<typeof Deprecation>;
