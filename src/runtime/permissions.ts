// The seven permission names of the original Tool Registry project. A permission is only a
// name: the runtime compares names, it never grants anything by itself.

/** Read files. */
export const READ_FS = 'READ_FS';
/** Write files. */
export const WRITE_FS = 'WRITE_FS';
/** Make HTTP requests. */
export const NET_HTTP = 'NET_HTTP';
/** Run shell commands. */
export const EXEC_SHELL = 'EXEC_SHELL';
/** Read environment variables. */
export const READ_ENV = 'READ_ENV';
/** Read from a database. */
export const DB_READ = 'DB_READ';
/** Write to a database. */
export const DB_WRITE = 'DB_WRITE';

/** What a permission name must look like: `READ_FS`, `SEND_EMAIL`, `S3_WRITE`. */
export const PERMISSION_NAME_PATTERN = /^[A-Z][A-Z0-9_]*$/;
