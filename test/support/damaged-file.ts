// A SQLite file damaged after it was written, as a failing disk or a stray write leaves it.
import { closeSync, openSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';

/** The tables every command reads or writes: damaging their pages reaches every operation. */
const TOOL_TABLES = ['tool_registrations', 'tool_specs'];

/**
 * Overwrites every page of the tools' tables (their roots included) with 0xff: the header and
 * the schema are intact, so the file opens, and any read of a tool then fails with
 * SQLITE_CORRUPT. Which pages those are comes from the file itself (`dbstat`), not from a fixed
 * offset: a new migration moves the tables, and a fixed range then missed what a write reads.
 */
export function damagePages(file: string): void {
  const reader = new Database(file, { readonly: true });
  let pages: { pageno: number }[];
  let pageSize: number;
  try {
    pageSize = reader.pragma('page_size', { simple: true }) as number;
    pages = reader.prepare(`SELECT pageno FROM dbstat WHERE name IN (${TOOL_TABLES.map(() => '?').join(', ')})`).all(...TOOL_TABLES) as { pageno: number }[];
  } finally {
    reader.close();
  }
  if (pages.length < 20) throw new Error(`damagePages: the tools' tables span ${pages.length} pages; the file must hold more tools`);
  const fd = openSync(file, 'r+');
  try {
    const junk = Buffer.alloc(pageSize, 0xff);
    for (const { pageno } of pages) writeSync(fd, junk, 0, pageSize, (pageno - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}
