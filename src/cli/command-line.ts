// `upstream add --command "CMD ARG..."`: the string is split into words the way a POSIX shell
// splits a simple command, but no shell ever runs it: nothing is expanded and an operator
// character a shell would act on is refused rather than passed on as a word.

/** Characters a shell would treat as operators or expansions when they stand unquoted. */
const SHELL_ONLY = new Set(['|', '&', ';', '<', '>', '(', ')', '`', '$', '*', '?', '[']);
/** Shell-only at the start of a word (a comment, the home folder). */
const SHELL_ONLY_FIRST = new Set(['#', '~']);

/**
 * Splits a command line into words: blanks separate words; '...' keeps everything literally;
 * "..." keeps everything but lets a backslash escape " \ $ `; an unquoted backslash escapes the
 * next character. Unquoted `| & ; < > ( ) $ \` * ? [`, and `#` or `~` starting a word, are refused (the command is not run by
 * a shell: quote them to pass them on), and so is `${` anywhere (words are never expanded: pass
 * secrets with --env K=${VAR}).
 * @throws Error with a message that says what and where
 */
export function splitCommandLine(text: string): string[] {
  if (text.includes('${')) {
    throw new Error('the command names ${...}, but its words are never expanded (no shell runs it); pass a secret as --env NAME=${VAR}, which is expanded when the gateway connects');
  }
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === ' ' || char === '\t' || char === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      index += 1;
      continue;
    }
    if (!inWord && SHELL_ONLY_FIRST.has(char)) {
      throw new Error(`the command has a word starting with an unquoted ${JSON.stringify(char)} (at character ${index + 1}); no shell runs it, so quote it to pass it on`);
    }
    inWord = true;
    if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end < 0) throw new Error(`the command has an unterminated ' (at character ${index + 1})`);
      word += text.slice(index + 1, end);
      index = end + 1;
    } else if (char === '"') {
      index += 1;
      for (;;) {
        if (index >= text.length) throw new Error('the command has an unterminated "');
        const inner = text[index] as string;
        if (inner === '"') break;
        if (inner === '\\' && index + 1 < text.length && '"\\$`'.includes(text[index + 1] as string)) {
          word += text[index + 1];
          index += 2;
        } else {
          word += inner;
          index += 1;
        }
      }
      index += 1;
    } else if (char === '\\') {
      if (index + 1 >= text.length) throw new Error('the command ends with a lone backslash');
      word += text[index + 1];
      index += 2;
    } else if (SHELL_ONLY.has(char)) {
      throw new Error(`the command has an unquoted ${JSON.stringify(char)} (at character ${index + 1}); no shell runs it, so quote it to pass it on as part of a word`);
    } else {
      word += char;
      index += 1;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new Error('the command is empty: give the program and its arguments');
  return words;
}
