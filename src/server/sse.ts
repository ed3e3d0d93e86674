// The change feed as Server-Sent Events: `id:` is the revision, so a client reconnecting with
// Last-Event-ID (which wins over ?since=) resumes where it stopped, across a server restart too.
import { ChangesExpiredError } from '../index.js';
import type { ChangesPage, ToolRegistry } from '../index.js';
import { HttpProblem } from './problems.js';
import type { RouteContext } from './route-table.js';

/** Default heartbeat: a comment line that keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/**
 * Whether Accept asks for `text/event-stream`: as a media range with a q above 0, and not below
 * `application/json`'s (`text/event-stream;q=0`, which refuses it, and
 * `application/x-text/event-stream-like` got a stream that never ends).
 */
export function wantsEventStream(request: Request): boolean {
  const q = new Map<string, number>();
  for (const range of (request.headers.get('accept') ?? '').split(',')) {
    const [type = '', ...parameters] = range.split(';');
    const weight = parameters.map((parameter) => /^\s*q\s*=\s*(\S*)\s*$/i.exec(parameter)?.[1]).find((value) => value !== undefined);
    q.set(type.trim().toLowerCase(), weight === undefined ? 1 : Number(weight) || 0);
  }
  const stream = q.get('text/event-stream') ?? 0;
  return stream > 0 && stream >= (q.get('application/json') ?? 0);
}

function lastEventId(request: Request): number | undefined {
  const raw = request.headers.get('last-event-id');
  if (raw === null || raw.trim() === '') return undefined;
  // As `since`: up to 2^53 - 1 (16 digits; 1000000000000000 was "not a whole number").
  if (!/^\d{1,16}$/.test(raw.trim()) || Number(raw.trim()) > Number.MAX_SAFE_INTEGER) throw new HttpProblem('BAD_REQUEST', `Last-Event-ID must be a revision (a whole number), got ${JSON.stringify(raw)}`, { context: { header: 'Last-Event-ID' } });
  return Number(raw.trim());
}

const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/**
 * A cursor beyond the log's end (the log was restored from a backup, or the cursor came from
 * another registry) can never be served: 410 CHANGES_EXPIRED as an expired one, so the client
 * resyncs (an EventSource stops reconnecting on a non-200) instead of waiting forever.
 */
export async function beyondTheLog(registry: ToolRegistry, since: number, page: ChangesPage): Promise<ChangesPage> {
  if (since > page.revision) throw new ChangesExpiredError(since, await oldestRevision(registry, page.revision), page.revision, true);
  return page;
}

/** The oldest revision the log keeps (its `revision + 1` when it keeps none), for the 410's context. */
async function oldestRevision(registry: ToolRegistry, revision: number): Promise<number> {
  try {
    return (await registry.changes({ since: 0, limit: 1 })).events[0]?.revision ?? revision + 1;
  } catch (error) {
    // The log no longer starts at the beginning: the error names where it starts now.
    if (error instanceof ChangesExpiredError) return error.context.oldest_revision as number;
    throw error;
  }
}

/**
 * The SSE response for `GET /v1/changes` with `Accept: text/event-stream`. `HEAD` answers the
 * headers only (and the limits' 429/503 as GET would): no stream, no watcher. The stream is a lease of the server (`--max-streams`,
 * one token's share); it ends when its token is revoked or changed (an `error` event with
 * code `UNAUTHORIZED` first), and when its reader falls `streamBacklogBytes` behind (cut
 * off: the client resumes with Last-Event-ID).
 */
export async function changeStream(context: RouteContext): Promise<Response> {
  const { registry, query, request, signal } = context;
  const resumeFrom = lastEventId(request);
  const since = resumeFrom ?? (query.since === undefined ? (await registry.changes({ limit: 0 })).revision : Number(query.since));
  // A cursor the log no longer reaches, or one past its end, is a 410 now, before the stream starts (the client resyncs).
  await beyondTheLog(registry, since, await registry.changes({ since, limit: 1 }));
  // HEAD gets the status a GET would (429/503 at a limit; it was 200 there), then gives the place back: no stream, no watcher.
  const lease = context.openStream();
  if (request.method === 'HEAD') {
    lease.release();
    return new Response(null, { status: 200, headers: STREAM_HEADERS });
  }
  const heartbeatMs = context.heartbeatMs;
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  lease.signal.addEventListener('abort', onAbort, { once: true });
  const encoder = new TextEncoder();
  let heartbeat: NodeJS.Timeout | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async start(controller) {
        const send = (text: string): void => {
          if (stop.signal.aborted) return;
          try {
            controller.enqueue(encoder.encode(text));
          } catch {
            stop.abort();
          }
          // The reader is that far behind: stop here; what is queued still goes out, then the end.
          if ((controller.desiredSize ?? 0) < 0) stop.abort();
        };
        // The retry hint, and a first line the client can see at once (the stream is live).
        send(`retry: 1000\n: stream open at revision ${since}\n\n`);
        heartbeat = setInterval(() => send(': heartbeat\n\n'), heartbeatMs);
        heartbeat.unref();
        try {
          for await (const event of registry.watch({ since, signal: stop.signal })) {
            send(`id: ${event.revision}\nevent: change\ndata: ${JSON.stringify(event)}\n\n`);
          }
        } catch (error) {
          // Fell behind the log (CHANGES_EXPIRED) or the registry failed: say so, then end; the client reconnects.
          const code = (error as { code?: unknown }).code;
          if (!stop.signal.aborted) send(`event: error\ndata: ${JSON.stringify({ code: typeof code === 'string' ? code : 'INTERNAL' })}\n\n`);
        } finally {
          clearInterval(heartbeat);
          signal.removeEventListener('abort', onAbort);
          lease.signal.removeEventListener('abort', onAbort);
          if (lease.signal.aborted && !signal.aborted) {
            // Its token was revoked or changed: say so (a reconnect with it is a 401 now). Not
            // when the server is shutting down (which ends every lease too): the token is fine.
            try {
              controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ code: 'UNAUTHORIZED', detail: String((lease.signal.reason as Error | undefined)?.message ?? 'the token changed') })}\n\n`));
            } catch {
              // the client went away
            }
          }
          lease.release();
          try {
            controller.close();
          } catch {
            // already closed by a cancel
          }
        }
      },
      cancel() {
        clearInterval(heartbeat);
        stop.abort();
        lease.release();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: context.streamBacklogBytes }),
  );
  return new Response(body, { status: 200, headers: STREAM_HEADERS });
}
