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

/**
 * The layers of src/ (docs/architecture.md "The layers"): what each folder may import of the
 * rest of src/. Anything not listed is refused, so an import that points up a layer fails lint.
 * The workflow sandbox has its own, stricter rule below.
 */
const LAYERS = {
  domain: [],
  jobTypes: ['domain'],
  providers: ['domain', 'jobTypes'],
  db: ['domain', 'logger.ts'],
  telemetry: ['domain', 'db', 'workflows/traceHeader.ts'],
  certification: ['domain', 'db', 'jobTypes', 'providers'],
  service: ['domain', 'db', 'jobTypes', 'providers', 'telemetry', 'workflows', 'logger.ts'],
  health: ['domain', 'db', 'service', 'telemetry', 'logger.ts', 'settings'],
  activities: [
    'domain',
    'db',
    'jobTypes',
    'providers',
    'service',
    'telemetry',
    'workflows',
    'logger.ts',
  ],
  settings: ['domain', 'service'],
  'config.ts': ['domain', 'db', 'settings', 'temporal/connection.ts'],
};
const layerZones = Object.entries(LAYERS).map(([layer, allowed]) => ({
  target: `./src/${layer}`,
  from: './src',
  except: [layer, ...allowed].map((part) => `./${part}`),
  message: `src/${layer} may import only ${allowed.length ? allowed.join(', ') : 'itself'} of src/ (docs/architecture.md, "The layers").`,
}));
// The API, the CLI and the processes sit on top; the API and the CLI never import each other.
layerZones.push(
  {
    target: './src/api',
    from: './src/cli',
    message: 'The API and the CLI share src/service, not each other.',
  },
  {
    target: './src/cli',
    from: './src/api',
    message: 'The API and the CLI share src/service, not each other.',
  },
  {
    target: ['./src/!(bin)/**', './src/*.ts'],
    from: './src/bin',
    message: 'src/bin holds the processes: nothing imports them.',
  },
);

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
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      // Small modules with one job each: a file that outgrows these is two concerns.
      'max-lines': ['error', { max: 330 }],
      'max-lines-per-function': ['error', { max: 150 }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: only the SDK and our pure modules
    // (src/workflow.ts is what other services' workflow code imports of the package).
    files: ['src/workflows/**/*.ts', 'src/workflow.ts', 'tools/chaos/parentWorkflow.ts'],
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
