// The PostgreSQL store, loaded when `--db` is a PostgreSQL URL only: a command on a SQLite file
// starts without that code (the `postgres` chunk).
export { openPostgresToolRegistry } from '../index.js';
