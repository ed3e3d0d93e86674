// Debian's chromium, driven by playwright-core, for the console's browser tests. A machine
// without it skips those tests and says why; CI (.ci/run installs the package and sets
// TOOL_REGISTRY_REQUIRE_CHROMIUM=1) fails instead, so they can never be skipped there unnoticed.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

/**
 * The browser's binary: `$CHROMIUM`; else Debian's `chromium-headless-shell`, the same Blink
 * without the browser's interface (what playwright itself runs for headless tests), which ran
 * the browser file for 45-48 CPU-s of the machine against 72-73 for the whole browser (two
 * interleaved pairs, the file alone: docs/testing.md); else Debian's `chromium`.
 */
export const CHROMIUM = process.env.CHROMIUM ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((path) => existsSync(path)) ?? '/usr/bin/chromium';

function probe(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `no chromium at ${CHROMIUM}; install it (apt-get install chromium-headless-shell, or chromium) or set CHROMIUM to run the console's browser tests`;
  if (process.env.TOOL_REGISTRY_REQUIRE_CHROMIUM === '1') throw new Error(`TOOL_REGISTRY_REQUIRE_CHROMIUM=1 but ${reason}`);
  return reason;
}

/** Why the browser tests are skipped here, or `undefined` when chromium is there. */
export const chromiumMissing: string | undefined = probe();

/**
 * One headless chromium for a test file (contexts are cheap; browsers are not). playwright
 * gives every launch a fresh temporary --user-data-dir of its own (it refuses the flag in
 * `args`), so no profile, cache or storage survives from one run to the next.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
