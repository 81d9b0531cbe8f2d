// @ts-check
import eslint from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const sourceExtensions = ['.ts', '.js', '.mjs', '.cjs'];

/** What no file of src/ may import (the workflow sandbox's rule repeats it, as rules replace). */
const PRODUCT_ONLY = {
  group: ['**/tools/**', '**/test/**', '**/bench/**'],
  message: 'src/ is the product: it imports nothing from tools/, test/ or bench/.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'client/dist/',
      'node_modules/',
      '.onejob/',
      'test-output/',
      'coverage/',
      'bench/output/',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // CommonJS as jest loads it (its config and test sequencer): require is how these import.
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  {
    // No import cycles: nothing a module imports may lead back to it. The rule follows value
    // imports only (`import type` is erased at run time and skipped), so keep type-only cycles
    // out by hand: put a type both sides need where both can import it (as domain/providerKind).
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': sourceExtensions,
      'import-x/parsers': { '@typescript-eslint/parser': sourceExtensions },
      'import-x/resolver-next': [createNodeResolver({ extensions: sourceExtensions })],
    },
    rules: {
      'import-x/no-cycle': 'error',
      // Imports in one order everywhere: packages first, then ours, each alphabetical.
      'import-x/order': [
        'error',
        {
          groups: [
            ['builtin', 'external'],
            ['parent', 'sibling', 'index'],
          ],
          alphabetize: { order: 'asc', caseInsensitive: true },
          'newlines-between': 'never',
        },
      ],
    },
  },
  {
    // src/ is the product: it never reaches into the tools, the tests or the benchmark.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [PRODUCT_ONLY] }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: only the SDK and our pure modules.
    files: ['src/workflows/**/*.ts', 'tools/chaos/parentWorkflow.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@temporalio/activity', '@temporalio/client', '@temporalio/worker'],
              message: 'Not allowed in workflow code.',
            },
            {
              group: [
                'pg',
                'fastify',
                'openai',
                'pino',
                'zod',
                'node:*',
                'fs',
                'crypto',
                'http',
                'net',
              ],
              message: 'Not allowed in workflow code.',
            },
            PRODUCT_ONLY,
            {
              group: ['../db/*', '../api/*', '../providers/*', '../service/*'],
              message: 'Workflows import only domain/ and their definitions.',
            },
            {
              group: ['../activities', '../activities/*'],
              allowTypeImports: true,
              message: 'Workflows may import activity types only.',
            },
          ],
        },
      ],
    },
  },
);
