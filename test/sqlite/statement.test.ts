// The one typed statement helper (issue 13, item 10): parameters are bound by name, and a
// statement's parameter object is type-checked at the call site (npm test typechecks this file).
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { compileStatement, queries } from '../../src/stores/sqlite/statement.js';
import { prepareStatements } from '../../src/stores/sqlite/statements.js';
import { migrate, shippedMigrations } from '../../src/stores/sqlite/migrations.js';

const handles: Database.Database[] = [];
afterEach(() => {
  for (const db of handles.splice(0)) db.close();
});

async function migrated(): Promise<Database.Database> {
  const db = new Database(':memory:');
  handles.push(db);
  await migrate({ db, migrations: shippedMigrations(), busyTimeoutMs: 1000, filename: ':memory:' });
  return db;
}

describe('compileStatement()', () => {
  it('binds by name, whatever order the object lists them in, and constants of the query stay bound', async () => {
    const db = await migrated();
    const sql = prepareStatements(db);
    sql.insertSpec.run({
      spec_json: '{}',
      first_registered_at: 'then',
      version: null,
      fingerprint: 'f'.repeat(64),
      tool_name: 'a',
    });
    sql.upsertRegistration.run({ created_at: null, enabled: 1, fingerprint: 'f'.repeat(64), tool_name: 'a' });
    sql.setEnabled.run({ enabled: 0, tool_name: 'a' });
    expect(sql.findRow.get({ tool_name: 'a' })).toMatchObject({ tool_name: 'a', enabled: 0, version: null, spec_json: '{}' });
    // enabledRows has the literal 1 of `where enabled = 1` bound as a constant.
    expect(sql.enabledRows.all()).toEqual([]);
    sql.setEnabled.run({ tool_name: 'a', enabled: 1 });
    expect(sql.enabledRows.all().map((row) => row.tool_name)).toEqual(['a']);
  });

  it('binds a parameter used twice to the same value', async () => {
    const db = await migrated();
    const twice = compileStatement((p: { x: number }) =>
      queries.selectNoFrom((eb) => [eb.val(p.x).as('first'), eb.val(p.x).as('second')]),
    ).prepare(db);
    expect(twice.get({ x: 7 })).toEqual({ first: 7, second: 7 });
  });

  it('prepares one compiled query on several connections, each running against its own database', async () => {
    const [first, second] = [await migrated(), await migrated()];
    const count = compileStatement(() => queries.selectFrom('tool_registrations').select((e) => e.fn.countAll<number>().as('n')));
    const [onFirst, onSecond] = [count.prepare(first), count.prepare(second)];
    prepareStatements(first).insertSpec.run({ tool_name: 'a', fingerprint: 'f'.repeat(64), version: null, spec_json: '{}', first_registered_at: 'then' });
    prepareStatements(first).upsertRegistration.run({ tool_name: 'a', fingerprint: 'f'.repeat(64), enabled: 1, created_at: null });
    expect([onFirst.get()?.n, onSecond.get()?.n]).toEqual([1, 0]);
  });

  it('refuses, when it compiles (its first use), a parameter that was read but never reached the compiled query', () => {
    const statement = compileStatement((p: { unused: string }) => {
      void p.unused;
      return queries.selectFrom('tool_registrations').select('tool_name');
    });
    expect(() => statement.sql).toThrow(/unused/);
  });

  it("compiles each query at its first use, and every one of the store's compiles and prepares on the migrated schema", async () => {
    let built = 0;
    const lazy = compileStatement(() => {
      built++;
      return queries.selectFrom('tool_registrations').select('tool_name');
    });
    expect(built).toBe(0);
    const db = await migrated();
    lazy.prepare(db);
    lazy.prepare(db);
    expect(built).toBe(1);
    // A query only a rare path runs (an upstream, the audit log) is compiled there: all of them here, once.
    const sql = prepareStatements(db);
    for (const [name, statement] of Object.entries(sql)) expect(typeof statement.run, name).toBe('function');
    expect(Object.keys(sql).length).toBeGreaterThan(20);
  });

  it('does not compile a call with swapped, missing, misspelt or extra parameters', async () => {
    const db = await migrated();
    const sql = prepareStatements(db);
    // Never run: only the type checker reads these calls (each line must be an error).
    const notCalled = (): void => {
      // @ts-expect-error enabled and tool_name swapped
      sql.setEnabled.run({ tool_name: 1, enabled: 'a' });
      // @ts-expect-error tool_name missing
      sql.setEnabled.run({ enabled: 1 });
      // @ts-expect-error misspelt name
      sql.findRow.get({ toolName: 'a' });
      // @ts-expect-error positional values are not accepted
      sql.findRow.get(['a']);
      // @ts-expect-error a statement without parameters takes none
      sql.rows.all({ tool_name: 'a' });
    };
    expect(typeof notCalled).toBe('function');
  });
});
