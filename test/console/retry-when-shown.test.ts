// The "Cannot reach the server" screen's retry (console/api.js is plain browser JavaScript): a
// hidden tab asks nothing, as docs/console.md says, and retries at once when shown. The page is an
// EventTarget with a visibilityState, as a document is; the clock is vitest's.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
// @ts-expect-error: a plain .js module of the console, without declarations
import { retryWhenShown as retryWhenShownJs } from '../../console/api.js';

interface Page extends EventTarget { visibilityState: 'hidden' | 'visible' }
const retryWhenShown = retryWhenShownJs as (ms: number, options: { signal: AbortSignal; retry: () => void; onWait?: (hidden: boolean) => void; page: Page }) => void;

function page(visibilityState: Page['visibilityState']): Page {
  return Object.assign(new EventTarget(), { visibilityState });
}

function tell(target: Page, visibilityState: Page['visibilityState']): void {
  target.visibilityState = visibilityState;
  target.dispatchEvent(new Event('visibilitychange'));
}

describe('retryWhenShown', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('retries after the delay in a visible tab, once', () => {
    const retry = vi.fn();
    const waits: boolean[] = [];
    retryWhenShown(15_000, { signal: new AbortController().signal, retry, onWait: (hidden) => waits.push(hidden), page: page('visible') });
    vi.advanceTimersByTime(14_999);
    expect(retry).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    vi.advanceTimersByTime(60_000);
    expect(retry).toHaveBeenCalledTimes(1);
    expect(waits).toEqual([false]);
  });

  it('asks nothing while the tab is hidden (it retried every 15 s), and retries at once when it is shown', () => {
    const retry = vi.fn();
    const waits: boolean[] = [];
    const tab = page('visible');
    retryWhenShown(15_000, { signal: new AbortController().signal, retry, onWait: (hidden) => waits.push(hidden), page: tab });
    tell(tab, 'hidden');
    vi.advanceTimersByTime(10 * 60_000);
    expect(retry).not.toHaveBeenCalled();
    expect(waits).toEqual([false, true]);
    tell(tab, 'visible');
    expect(retry).toHaveBeenCalledTimes(1);
    // Hidden and shown again after the retry: nothing more (the next screen has its own wait).
    tell(tab, 'hidden');
    tell(tab, 'visible');
    vi.advanceTimersByTime(60_000);
    expect(retry).toHaveBeenCalledTimes(1);
  });

  it('waits for a tab hidden from the start (opened in the background) to be shown', () => {
    const retry = vi.fn();
    const tab = page('hidden');
    retryWhenShown(1_000, { signal: new AbortController().signal, retry, page: tab });
    vi.advanceTimersByTime(60_000);
    expect(retry).not.toHaveBeenCalled();
    tell(tab, 'visible');
    expect(retry).toHaveBeenCalledTimes(1);
  });

  it('does nothing once its screen is gone (the signal aborted)', () => {
    const retry = vi.fn();
    const tab = page('visible');
    const screen = new AbortController();
    retryWhenShown(1_000, { signal: screen.signal, retry, page: tab });
    screen.abort();
    vi.advanceTimersByTime(60_000);
    tell(tab, 'hidden');
    tell(tab, 'visible');
    expect(retry).not.toHaveBeenCalled();
  });
});
