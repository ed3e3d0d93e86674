// The routes outside a namespace: who am I, health, readiness, the document, and namespaces.
import { z } from 'zod';
import type { ToolRegistry } from '../index.js';
import { DEFAULT_NAMESPACE } from './namespaces.js';
import type { NamespaceSource } from './namespaces.js';
import { HttpProblem } from './problems.js';
import { json } from './route-table.js';
import type { RouteDefinition } from './route-table.js';
import { HealthSchema, NamespaceCreatedSchema, NamespaceListSchema, ReadySchema, WhoamiSchema, namespaceParam } from './schemas.js';
import { NAMESPACE_PATTERN, namespaceRuleMessage } from './tokens.js';
import type { AuthenticatedToken, TokenScope } from './tokens.js';

export interface ServiceDependencies {
  readonly source: NamespaceSource;
  readonly tokensRequired: boolean;
  readonly allScopes: readonly TokenScope[];
  readonly openapi: () => Record<string, unknown>;
  readonly resolveNamespace: (namespace: string, token: AuthenticatedToken | null) => Promise<ToolRegistry>;
  readonly requireScope: (token: AuthenticatedToken | null, scope: TokenScope) => void;
  /** Marks a namespace in use (never closed as the least recently used) until the returned function is called. */
  readonly hold: (namespace: string) => () => void;
  /** The namespaces held now (by requests, streams and sessions). */
  readonly heldNamespaces: () => string[];
}

/** The routes outside a namespace, over the server's namespaces and tokens. */
export function serviceRoutes(deps: ServiceDependencies): RouteDefinition[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      summary: 'The process is alive (no token needed)',
      tag: 'service',
      scope: null,
      namespaced: false,
      responses: { 200: { description: 'Alive.', schema: HealthSchema } },
      errors: [],
      handle: async () => json({ status: 'ok' }),
    },
    {
      method: 'get',
      path: '/readyz',
      operationId: 'ready',
      summary: "The server serves: the default namespace's store answers (no token needed; its revision only for a token that may read it)",
      tag: 'service',
      scope: 'optional',
      namespaced: false,
      responses: {
        200: {
          description:
            'Ready; with the revision when the request may read the default namespace (no tokens, or a read token that reaches it) and it could be read (not when every open namespace is in use by others: another one was read).',
          schema: ReadySchema,
        },
      },
      // Its store down (PostgreSQL); or no file handle left to open it.
      errors: ['STORAGE_BUSY', 'REGISTRY_CLOSED', 'STORAGE_UNAVAILABLE', 'CAPACITY_EXCEEDED'],
      handle: async ({ token }) => {
        const readRevision = async (namespace: string): Promise<number> => {
          // Held while it is read: another namespace opened meanwhile must not close it (a probe's 503 takes the server out of rotation).
          const release = deps.hold(namespace);
          try {
            return (await (await deps.resolveNamespace(namespace, null)).changes({ limit: 0 })).revision;
          } finally {
            release();
          }
        };
        let revision: number | undefined;
        try {
          revision = await readRevision(DEFAULT_NAMESPACE);
        } catch (error) {
          // Every open namespace is in use by another one's streams, sessions or requests (--max-open-namespaces):
          // the server serves those, and default's requests wait their turn (503, Retry-After). One stream on another
          // namespace took the server out of rotation. Its store answering is what is checked: one held open is read.
          const other =
            error instanceof HttpProblem && error.code === 'CAPACITY_EXCEEDED' && error.context.resource === 'namespaces'
              ? deps.heldNamespaces().find((namespace) => namespace !== DEFAULT_NAMESPACE)
              : undefined;
          if (other === undefined) throw error;
          await readRevision(other);
        }
        // A probe without a token, or a token that may not read `default`, learns only that the store answers.
        const mayRead = !deps.tokensRequired || (token !== null && token.scopes.includes('read') && (token.namespaces === null || token.namespaces.includes(DEFAULT_NAMESPACE)));
        return json(mayRead && revision !== undefined ? { status: 'ready', revision } : { status: 'ready' });
      },
    },
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This document',
      tag: 'service',
      scope: 'read',
      namespaced: false,
      responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument' }) } },
      errors: [],
      handle: async () => json(deps.openapi()),
    },
    {
      method: 'get',
      path: '/v1/whoami',
      operationId: 'whoami',
      summary: 'The token of the request: its name, scopes and namespaces',
      tag: 'service',
      scope: 'token',
      namespaced: false,
      responses: { 200: { description: 'What the token may do.', schema: WhoamiSchema } },
      errors: [],
      handle: async ({ token }) =>
        json(
          token === null
            ? { token: null, scopes: [...deps.allScopes], namespaces: null, tokens_required: deps.tokensRequired }
            : { token: token.name, scopes: [...token.scopes], namespaces: token.namespaces === null ? null : [...token.namespaces], tokens_required: true },
        ),
    },
    {
      method: 'get',
      path: '/v1/namespaces',
      operationId: 'listNamespaces',
      summary: 'The namespaces the token may reach',
      tag: 'namespaces',
      scope: 'read',
      namespaced: false,
      responses: { 200: { description: 'Namespace names, sorted.', schema: NamespaceListSchema } },
      // Listing reads the folder (no file handle left) or PostgreSQL's catalog (the database down).
      errors: ['CAPACITY_EXCEEDED', 'STORAGE_UNAVAILABLE'],
      handle: async ({ token }) => {
        const all = await deps.source.list();
        return json({ namespaces: token === null || token.namespaces === null ? all : all.filter((ns) => token.namespaces?.includes(ns)) });
      },
    },
    {
      method: 'put',
      path: '/v1/namespaces/{ns}',
      operationId: 'createNamespace',
      summary: 'Create a namespace (idempotent; admin)',
      tag: 'namespaces',
      scope: 'admin',
      namespaced: false,
      pathParams: { ns: namespaceParam },
      responses: {
        200: { description: 'It existed.', schema: NamespaceCreatedSchema },
        201: { description: 'Created.', schema: NamespaceCreatedSchema },
      },
      // On PostgreSQL: a role or a server that refuses to create the schema, a database that cannot be reached;
      // opening it: every open namespace in use (--max-open-namespaces), or no file handle left.
      errors: ['NAMESPACES_UNAVAILABLE', 'NAMESPACE_NOT_FOUND', 'READ_ONLY', 'STORAGE_UNAVAILABLE', 'CAPACITY_EXCEEDED'],
      handle: async ({ params, token }) => {
        const namespace = params.ns as string;
        if (!NAMESPACE_PATTERN.test(namespace)) throw new HttpProblem('BAD_REQUEST', namespaceRuleMessage(namespace), { context: { namespace } });
        if (token !== null && token.namespaces !== null && !token.namespaces.includes(namespace)) {
          throw new HttpProblem('NAMESPACE_NOT_FOUND', `no namespace ${JSON.stringify(namespace)}`, { context: { namespace } });
        }
        if (!deps.source.extensible) {
          if ((await deps.source.open(namespace)) !== undefined) return json({ namespace, created: false });
          throw new HttpProblem('NAMESPACES_UNAVAILABLE', `this server serves a fixed set of namespaces (${(await deps.source.list()).join(', ')}); start it with --data-dir DIR or a PostgreSQL URL to create ${JSON.stringify(namespace)}`, {
            context: { namespace },
          });
        }
        const { created } = await deps.source.create(namespace);
        return json({ namespace, created }, created ? 201 : 200);
      },
    },
  ];
}
