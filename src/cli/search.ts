// `tool-registry search "QUERY"` (issue 26): the library's registry.search on the command line.
import type { SearchPage } from '../index.js';
import type { CliContext } from './commands.js';
import { withRegistry } from './database.js';
import { cell, formatTable, toJson, truncateToWidth } from './output.js';

export interface SearchCommandOptions {
  readonly tag: readonly string[];
  readonly limit?: number;
  readonly all?: boolean;
  readonly json?: boolean;
}

/** Descriptions are cut to this many terminal columns in the table (`--json` has them whole). */
const DESCRIPTION_WIDTH = 60;

function shortDescription(description: string | null): string {
  if (description === null) return '-';
  // Escaped first, so what is shown (escapes included) fits the columns.
  return truncateToWidth(cell(description.replace(/\s+/g, ' ').trim()), DESCRIPTION_WIDTH);
}

/** The table of `search`: rank, score, name, enabled, description. */
export function formatSearchPage(page: SearchPage): string {
  return formatTable(
    ['#', 'SCORE', 'NAME', 'ENABLED', 'DESCRIPTION'],
    page.results.map((result, index) => [
      String(index + 1),
      result.score.toFixed(4),
      cell(result.registration.spec.tool_name),
      result.registration.enabled ? 'yes' : 'no',
      shortDescription(result.registration.spec.description),
    ]),
  );
}

/** Said under a table the limit cut short (it ended at 10 results, as if no more tools matched), as `calls` says `older calls`. */
function moreLine(page: SearchPage, limit: number): string {
  if (page.next_cursor === null) return '';
  return limit < 1000 ? `more tools match: raise --limit (${limit} shown, up to 1000)\n` : 'more tools match than 1000: narrow the query or add --tag\n';
}

/** How much of a query the "no tools match" line quotes. */
const QUOTED_QUERY_COLUMNS = 200;

export async function searchCommand(context: CliContext, query: string, options: SearchCommandOptions): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const page = await registry.search(query, { tags: options.tag, limit: options.limit ?? 10, includeDisabled: options.all === true });
    if (options.json === true) context.stdout.write(toJson(page));
    else if (page.results.length > 0) context.stdout.write(formatSearchPage(page) + moreLine(page, options.limit ?? 10));
    // The query quoted to a line's width: a 100 KB query was repeated whole.
    else context.stdout.write(`no ${options.all === true ? '' : 'enabled '}tools match ${truncateToWidth(JSON.stringify(query), QUOTED_QUERY_COLUMNS)}\n`);
  });
}
