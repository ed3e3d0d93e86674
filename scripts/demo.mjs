// `npm run demo`: a short tour of the `tool-registry` command against ./tool-registry.db
// in the current folder. Every step is a new process, as an operator would type it. It can
// run again and again: the second time, registrations are "unchanged" rather than new.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

if (!existsSync(cli)) {
  console.log('# dist/ is missing: building first (npm run build)');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// The tour uses the embedded default ./tool-registry.db, whatever the shell says.
const env = { ...process.env };
delete env.TOOL_REGISTRY_DB;

const weather = {
  tool_name: 'get_weather',
  version: '1.0.0',
  description: 'Current weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  output_schema: { type: 'object', properties: { celsius: { type: 'number' } } },
  tags: ['demo', 'http'],
};
const convert = {
  tool_name: 'convert_currency',
  version: '2.1.0',
  description: 'Convert an amount between currencies',
  input_schema: {
    type: 'object',
    properties: { amount: { type: 'number' }, from: { type: 'string' }, to: { type: 'string' } },
    required: ['amount', 'from', 'to'],
  },
  output_schema: { type: 'object', properties: { amount: { type: 'number' } } },
  tags: ['demo', 'finance'],
};

/** Prints the command as a shell line, runs it, and checks its exit code. */
function step(title, args, { input, expect = 0 } = {}) {
  console.log(`\n# ${title}`);
  const quoted = args.map((arg) => (/^[\w./=-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ');
  console.log(input === undefined ? `$ tool-registry ${quoted}` : `$ tool-registry ${quoted} <<'JSON'\n${input}\nJSON`);
  // Captured, then written in order, so that the error line reads in place even when piped.
  const result = spawnSync(process.execPath, [cli, ...args], { env, input: input ?? '', encoding: 'utf8' });
  process.stdout.write(result.stdout ?? '');
  process.stderr.write(result.stderr ?? '');
  const code = result.status ?? 1;
  if (code !== expect) {
    console.log(`# !! exit code ${code}, expected ${expect}: the demo stops here`);
    process.exit(1);
  }
  if (expect !== 0) console.log(`# (exit code ${code}, as expected)`);
}

console.log(`# A tour of tool-registry in ${process.cwd()}`);
step('Register two tools from standard input (an array is all-or-nothing)', ['register', '-'], {
  input: `[\n  ${JSON.stringify(weather)},\n  ${JSON.stringify(convert)}\n]`,
});
step(
  'The same version with a different spec is refused: VERSION_CONFLICT, exit 1, nothing changes',
  ['register', '-'],
  { input: JSON.stringify({ ...weather, description: 'Weather, now with wind' }), expect: 1 },
);
step('Disable one tool (a redeploy of a new version keeps it disabled)', ['disable', 'convert_currency']);
step('List from a new process: the state is on disk', ['list', '--all']);
step('One tool in full', ['get', 'get_weather']);
step('Export a snapshot', ['export', '--out', 'tool-registry-snapshot.json']);
step('Plan its import into a second file: nothing is written', [
  '--db',
  'tool-registry-copy.db',
  'import',
  'tool-registry-snapshot.json',
  '--dry-run',
]);
step('Import it for real (all or nothing)', ['--db', 'tool-registry-copy.db', 'import', 'tool-registry-snapshot.json']);
step('The copy has the same tools, enabled flags and created_at', ['--db', 'tool-registry-copy.db', 'list', '--all']);
step('Status of the first file: schema version, counts, journal mode', ['status']);
step('An integrity check: every row against the contracts', ['verify']);

console.log('\n# Done. Files: ./tool-registry.db, ./tool-registry-copy.db, ./tool-registry-snapshot.json');
console.log('# Run it again: the registrations come back "unchanged" and the conflict is still refused.');
