// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.onejob/', 'test-output/', 'coverage/'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly' },
    },
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
    // Workflow code runs in Temporal's deterministic sandbox: only the SDK and our pure modules.
    files: ['src/workflows/**/*.ts'],
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
            {
              group: ['../db/*', '../api/*', '../providers/*', '../service/*', '../dev/*'],
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
