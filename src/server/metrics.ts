// GET /metrics in Prometheus' text exposition format (0.0.4): counters `_total`, histograms
// `_seconds`, gauges, labels of bounded cardinality only (route templates, never raw paths;
// a fixed set of methods; namespaces, which exist only when an admin created them).
import { z } from 'zod';
import type { StoreMetrics, ToolRegistry } from '../index.js';
import type { RouteDefinition } from './route-table.js';

/** Upper bounds of the latency histogram's buckets, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One method and route: its latency histogram and its count by status. */
interface Series {
  readonly method: string;
  readonly route: string;
  /** Requests by bucket, not cumulative (made cumulative when rendered); the last one is `+Inf`. */
  readonly buckets: number[];
  sum: number;
  count: number;
  readonly statuses: Map<number, number>;
}

/** A label value, escaped as the format wants (backslash, quote, newline). */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labels(pairs: Readonly<Record<string, string>>): string {
  const text = Object.entries(pairs).map(([key, value]) => `${key}="${label(value)}"`).join(',');
  return text === '' ? '' : `{${text}}`;
}

/** Whether a socket's remote address is the machine itself (IPv4 127/8, ::1, or IPv4-mapped 127/8). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4) || address === '::1';
}

/**
 * Whether a request URL's host is a loopback name (`localhost`, 127/8, `[::1]`), as a client
 * on the machine writes it. A page whose name was rebound to 127.0.0.1 connects from loopback
 * too, but its browser sends the page's own name.
 */
export function isLoopbackName(url: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return false;
  }
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** A mount's audit log writer, as `Mount.auditStats` tells it. */
interface AuditStats {
  readonly written: number;
  readonly failedWrites: number;
  readonly dropped: number;
  readonly buffered: number;
}

/** What the server counts; `render()` is the scrape. */
export class ServerMetrics {
  /** By route template, then method: looked up with the strings the server already holds, no key built per request. */
  readonly #series = new Map<string, Map<string, Series>>();
  readonly #streams = new Map<string, number>();
  /** The registries requests reached, by namespace (what the store gauges are read from). */
  readonly #registries = new Map<string, ToolRegistry>();
  readonly #sessionCounts: Readonly<Record<string, () => number>>;
  readonly #auditStats: Readonly<Record<string, () => AuditStats>>;

  /** `sessions`: by mount name, how many sessions it has open now (the MCP endpoint); `audit`: by mount name, its audit log writer's counts. */
  constructor(sessions: Readonly<Record<string, () => number>> = {}, audit: Readonly<Record<string, () => AuditStats>> = {}) {
    this.#sessionCounts = sessions;
    this.#auditStats = audit;
  }

  /** One answered request: `route` is its template (`/v1/tools/{name}`), `null` when no route matched. */
  observe(method: string, route: string | null, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'OTHER';
    const r = route ?? 'unmatched';
    let byMethod = this.#series.get(r);
    if (byMethod === undefined) this.#series.set(r, (byMethod = new Map()));
    let series = byMethod.get(m);
    if (series === undefined) byMethod.set(m, (series = { method: m, route: r, buckets: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0, statuses: new Map() }));
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > (BUCKETS[bucket] as number)) bucket++;
    (series.buckets[bucket] as number)++;
    series.sum += seconds;
    series.count++;
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
  }

  /** A namespace's registry, as a request resolved it. */
  sawRegistry(namespace: string, registry: ToolRegistry): void {
    this.#registries.set(namespace, registry);
  }

  /**
   * `response` with its event stream counted as open until it ends or the client goes away
   * (its body is passed through as it is); any other response as it is.
   */
  trackStream(response: Response, route: string | null): Response {
    // The type first: `body` of the Node adapter's lightweight Response builds a whole web Response.
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response;
    const body = response.body;
    if (body === null) return response;
    const key = route ?? 'unmatched';
    this.#streams.set(key, (this.#streams.get(key) ?? 0) + 1);
    let open = true;
    const finish = (): void => {
      if (!open) return;
      open = false;
      this.#streams.set(key, (this.#streams.get(key) ?? 1) - 1);
    };
    const reader = body.getReader();
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  /**
   * The scrape: every family with HELP and TYPE, store gauges read now (a namespace whose store
   * does not answer: `tool_registry_storage_up` 0). `namespaces`: the only ones whose series are
   * shown (a namespace-bound token's; null: all), so that a scrape never names a namespace the
   * token could not reach.
   */
  async render(namespaces: readonly string[] | null = null): Promise<string> {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    };
    family('tool_registry_http_requests_total', 'counter', 'HTTP requests answered, by method, route template and status.');
    // Sorted as before: by `METHOD ROUTE STATUS` and `METHOD ROUTE` text.
    const series = [...this.#series.values()].flatMap((byMethod) => [...byMethod.values()]);
    const byText = <T>(list: T[], text: (item: T) => string): T[] => list.map((item) => [text(item), item] as const).sort(([a], [b]) => (a < b ? -1 : 1)).map(([, item]) => item);
    const counts = series.flatMap((one) => [...one.statuses].map(([status, count]) => ({ method: one.method, route: one.route, status: String(status), count })));
    for (const { method, route, status, count } of byText(counts, (c) => `${c.method} ${c.route} ${c.status}`)) {
      lines.push(`tool_registry_http_requests_total${labels({ method, route, status })} ${count}`);
    }
    family('tool_registry_http_request_duration_seconds', 'histogram', 'Time to answer a request (an event stream: until its headers were out), by method and route template.');
    for (const { method, route, buckets, sum, count } of byText(series, (one) => `${one.method} ${one.route}`)) {
      let below = 0;
      BUCKETS.forEach((bound, i) => {
        below += buckets[i] as number;
        lines.push(`tool_registry_http_request_duration_seconds_bucket${labels({ method, route, le: String(bound) })} ${below}`);
      });
      lines.push(`tool_registry_http_request_duration_seconds_bucket${labels({ method, route, le: '+Inf' })} ${count}`);
      lines.push(`tool_registry_http_request_duration_seconds_sum${labels({ method, route })} ${sum}`);
      lines.push(`tool_registry_http_request_duration_seconds_count${labels({ method, route })} ${count}`);
    }
    family('tool_registry_open_streams', 'gauge', 'Event streams open now (the change feed, MCP), by route template.');
    for (const [route, open] of this.#streams) lines.push(`tool_registry_open_streams${labels({ route })} ${open}`);
    family('tool_registry_mcp_sessions', 'gauge', 'MCP sessions open now, by mount.');
    for (const [mount, count] of Object.entries(this.#sessionCounts)) lines.push(`tool_registry_mcp_sessions${labels({ mount })} ${count()}`);
    const audits = Object.entries(this.#auditStats).map(([mount, stats]) => [mount, stats()] as const);
    if (audits.length > 0) {
      const auditFamilies: [keyof AuditStats, string, string, string][] = [
        ['written', 'tool_registry_audit_rows_written_total', 'counter', 'Call records (the audit log) written to the registry, by mount.'],
        ['failedWrites', 'tool_registry_audit_write_failures_total', 'counter', 'Writes of call records that failed (retried, or dropped when the store refused them for good), by mount.'],
        ['dropped', 'tool_registry_audit_rows_dropped_total', 'counter', 'Call records dropped (the buffer was full, or the store refused them for good), by mount.'],
        ['buffered', 'tool_registry_audit_rows_buffered', 'gauge', 'Call records waiting to be written now, by mount.'],
      ];
      for (const [field, name, type, help] of auditFamilies) {
        family(name, type, help);
        for (const [mount, stats] of audits) lines.push(`${name}${labels({ mount })} ${stats[field]}`);
      }
    }
    const read = await Promise.all(
      [...this.#registries]
        .filter(([namespace]) => namespaces === null || namespaces.includes(namespace))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(async ([namespace, registry]) => {
          const metrics = (registry as { storeMetrics?: () => StoreMetrics }).storeMetrics?.();
          let closed = false;
          const revision = await registry.changes({ limit: 0 }).then(
            (page) => page.revision,
            (error: unknown) => void (closed = (error as { code?: unknown }).code === 'REGISTRY_CLOSED'),
          );
          // The server closed it as idle (--max-open-namespaces): not down, just not open. It was
          // kept and said `storage_up 0` until a request opened the namespace again.
          if (closed && this.#registries.get(namespace) === registry) this.#registries.delete(namespace);
          return closed ? undefined : { namespace, metrics, revision };
        }),
    );
    const stores = read.filter((store) => store !== undefined);
    family('tool_registry_storage_up', 'gauge', "1 when the namespace's store answered this scrape, else 0.");
    for (const { namespace, revision } of stores) lines.push(`tool_registry_storage_up${labels({ namespace })} ${revision === undefined ? 0 : 1}`);
    family('tool_registry_revision', 'gauge', "The namespace's registry revision (its change log's head).");
    for (const { namespace, revision } of stores) if (revision !== undefined) lines.push(`tool_registry_revision${labels({ namespace })} ${revision}`);
    const counters: [keyof StoreMetrics, string, string][] = [
      ['cacheHits', 'tool_registry_cache_hits_total', 'Reads the read cache answered.'],
      ['cacheMisses', 'tool_registry_cache_misses_total', 'Reads that went to the database (the cache was not confirmed current).'],
      ['staleReads', 'tool_registry_cache_stale_reads_total', 'Reads the cache answered while the database could not be reached (within staleIfErrorMs).'],
      ['writeBatches', 'tool_registry_write_batches_total', 'Write transactions committed (a group commit counts once).'],
    ];
    for (const [field, name, help] of counters) {
      const having = stores.filter((store) => typeof store.metrics?.[field] === 'number');
      if (having.length === 0) continue;
      family(name, 'counter', help);
      for (const { namespace, metrics } of having) lines.push(`${name}${labels({ namespace })} ${metrics?.[field]}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/**
 * The /metrics route. It takes the `read` scope, but a request from a loopback address needs
 * no token (the server's `loopbackWithoutToken`): a Prometheus on the same machine scrapes it
 * as it is. Behind a reverse proxy on the same machine every request comes from loopback:
 * do not forward /metrics there (docs/server.md).
 */
export function metricsRoute(metrics: ServerMetrics): RouteDefinition {
  return {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics (text exposition format); no token needed from loopback addresses under a loopback name',
    tag: 'service',
    scope: 'read',
    loopbackWithoutToken: true,
    namespaced: false,
    responses: {
      200: {
        description: 'The metrics, in the Prometheus text format 0.0.4.',
        contentType: 'text/plain',
        schema: z.string().meta({ description: 'Prometheus text exposition format 0.0.4 (docs/server.md, "Operations").' }),
      },
    },
    errors: [],
    handle: async ({ token }) => new Response(await metrics.render(token?.namespaces ?? null), { status: 200, headers: { 'content-type': METRICS_CONTENT_TYPE } }),
  };
}
