// Where `tool-registry serve` finds the console's static pages (the console owns this folder):
// the package's console/ folder, served at / unless --no-console.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../package-files.js';

/** The console's folder in the package, or undefined when this build ships none. */
export function defaultConsoleRoot(): string | undefined {
  const root = fileURLToPath(packageFile('console/'));
  return existsSync(root) ? root : undefined;
}
