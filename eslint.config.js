// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.tmp/', 'bench/.deps/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // The console's pages run in the browser: plain ES modules, no build step.
    files: ['console/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['document', 'window', 'location', 'history', 'sessionStorage', 'fetch', 'URLSearchParams', 'TextDecoderStream', 'AbortController', 'Node', 'setTimeout', 'clearTimeout'].map((name) => [name, 'readonly']),
      ),
    },
  },
);
