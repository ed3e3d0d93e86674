// The dedicated LISTEN connection against the real server: wake-ups from the change log's
// trigger, reconnect with resync after pg_terminate_backend, retries when the server is not
// there, nothing left behind after close().
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { changeChannel } from '../../src/stores/postgres/identifiers.js';
import { ChangeListener } from '../../src/stores/postgres/listener.js';
import { migrate } from '../../src/stores/postgres/migrations.js';
import { uniqueName } from '../support/postgres.js';
import { until as untilHolds } from '../support/waiting.js';
import { useFileDatabase } from './helpers.js';

const until = (condition: () => boolean | Promise<boolean>, what: string) => untilHolds(condition, what, { timeoutMs: 10_000 });

const db = useFileDatabase();

function recorder() {
  const events: string[] = [];
  const payloads: string[] = [];
  return {
    events,
    payloads,
    callbacks: {
      onNotify: (payload: string) => {
        payloads.push(payload);
        events.push('notify');
      },
      onConnect: () => events.push('connect'),
      onDisconnect: () => events.push('disconnect'),
    },
  };
}

describe('PostgreSQL change listener', () => {
  it("wakes on every commit that changes a tool (payload: the new head), also a DBA's hand edit", async () => {
    const pool = db.pool();
    const schema = db.schema();
    await migrate({ pool, schema, busyTimeoutMs: 5000 });
    const seen = recorder();
    const listener = new ChangeListener({ connection: { connectionString: db.url() }, channel: changeChannel(schema), ...seen.callbacks });
    try {
      expect(await listener.start()).toBe(true);
      expect(listener.listening).toBe(true);
      const fp = 'f'.repeat(64);
      await pool.query(`INSERT INTO ${schema}.tool_specs VALUES ('t', $1, '1', '{}', 'now')`, [fp]);
      await pool.query(`INSERT INTO ${schema}.tool_registrations VALUES ('t', $1, true, NULL)`, [fp]);
      await pool.query(`UPDATE ${schema}.tool_registrations SET enabled = false`);
      await until(() => seen.payloads.length === 2, 'two notifications');
      expect(seen.payloads).toEqual(['1', '2']);
      // A write that changes nothing a tool shows is not a change and wakes nobody.
      await pool.query(`UPDATE ${schema}.tool_registrations SET enabled = false`);
      await sleep(100);
      expect(seen.payloads).toEqual(['1', '2']);
    } finally {
      await listener.close();
    }
  });

  it('after pg_terminate_backend it reconnects, asks for a resync, and hears the next commit', async () => {
    const pool = db.pool();
    const channel = changeChannel(db.schema());
    const seen = recorder();
    const listener = new ChangeListener({
      connection: { connectionString: db.url() },
      channel,
      reconnectMs: { initial: 20, max: 200 },
      ...seen.callbacks,
    });
    try {
      await listener.start();
      const pid = listener.backendPid;
      expect(pid).toBeTypeOf('number');
      await pool.query('SELECT pg_terminate_backend($1)', [pid]);
      await until(() => seen.events.includes('disconnect'), 'the disconnect');
      await until(() => listener.listening, 'the reconnect');
      expect(listener.backendPid).not.toBe(pid);
      expect(seen.events).toEqual(['connect', 'disconnect', 'connect']);
      await pool.query('SELECT pg_notify($1, $2)', [channel, 'after']);
      await until(() => seen.payloads.includes('after'), 'a notification after the reconnect');
    } finally {
      await listener.close();
    }
  });

  it('confirms the connection alive with heartbeats while idle', async () => {
    const listener = new ChangeListener({
      connection: { connectionString: db.url() },
      channel: changeChannel(db.schema()),
      heartbeatMs: 50,
      ...recorder().callbacks,
    });
    try {
      await listener.start();
      const first = listener.confirmedAt;
      await until(() => listener.confirmedAt > first + 90, 'two heartbeats');
      expect(performance.now() - listener.confirmedAt).toBeLessThan(500);
    } finally {
      await listener.close();
    }
  });

  it('a server that is not there: start() says false, it keeps trying with backoff, close() stops it', async () => {
    const url = new URL(db.url());
    url.port = '1';
    const seen = recorder();
    const listener = new ChangeListener({
      connection: { connectionString: url.toString() },
      channel: 'nowhere',
      reconnectMs: { initial: 10, max: 40 },
      ...seen.callbacks,
    });
    expect(await listener.start()).toBe(false);
    expect(listener.listening).toBe(false);
    expect(listener.confirmedAt).toBe(Number.NEGATIVE_INFINITY);
    await until(() => seen.events.length >= 3, 'three failed attempts');
    await listener.close();
    const attempts = seen.events.length;
    await sleep(150);
    expect(seen.events.length).toBe(attempts);
    expect(seen.events.every((event) => event === 'disconnect')).toBe(true);
  });

  it('close() while a connection is still being set up returns (a server that accepts and never answers)', async () => {
    // pg's client.connect() never settles when end() comes before the server's answer, so a
    // close() that waited for the connecting loop hung for good (seen when an engine closed
    // while its listener reconnected).
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = new URL(db.url());
    url.port = String((silent.address() as AddressInfo).port);
    const seen = recorder();
    const listener = new ChangeListener({ connection: { connectionString: url.toString() }, channel: 'silent', ...seen.callbacks });
    const started = listener.start();
    try {
      await until(() => sockets.length === 1, 'the listener to connect');
      const closed = await Promise.race([listener.close().then(() => 'closed'), sleep(5_000, 'still waiting')]);
      expect(closed).toBe('closed');
      expect(await started).toBe(false);
      expect(listener.listening).toBe(false);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("a role's idle_session_timeout under the heartbeat does not end the connection: one connect, no reconnects", async () => {
    // The listener waits heartbeatMs (the store's 500) between its statements; a DBA's 300 ms
    // idle_session_timeout on the role ended its connection between beats, over and over.
    const pool = db.pool();
    const role = uniqueName('idle');
    await pool.query(`CREATE ROLE ${role} LOGIN; ALTER ROLE ${role} SET idle_session_timeout = '300ms'`);
    const url = new URL(db.url());
    url.username = role;
    const seen = recorder();
    const listener = new ChangeListener({ connection: { connectionString: url.toString() }, channel: changeChannel(db.schema()), heartbeatMs: 500, reconnectMs: { initial: 20, max: 50 }, ...seen.callbacks });
    try {
      expect(await listener.start()).toBe(true);
      const pid = listener.backendPid;
      const first = listener.confirmedAt;
      // Two heartbeats, each after 500 ms idle (a reconnect moves confirmedAt too, and shows in the events).
      await until(() => listener.confirmedAt > first + 900, 'two heartbeats');
      expect(seen.events).toEqual(['connect']);
      expect(listener.backendPid).toBe(pid);
    } finally {
      await listener.close();
      await pool.query(`DROP ROLE ${role}`);
    }
  });

  it('close() ends the listening connection on the server', async () => {
    const pool = db.pool();
    const listener = new ChangeListener({ connection: { connectionString: db.url() }, channel: 'closing', ...recorder().callbacks });
    await listener.start();
    const pid = listener.backendPid;
    await listener.close();
    await until(async () => (await pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0, 'the backend to go');
    expect(listener.listening).toBe(false);
  });
});
