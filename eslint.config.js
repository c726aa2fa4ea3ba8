// Lint: neostandard's rules without its style rules (Prettier formats), and typescript-eslint's
// type-aware rules for promises, exhaustive switches and unused code.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    noStyle: true,
    ignores: [
      'dist/**',
      'dist-bench/**',
      'coverage/**',
      '.data/**',
      '.stryker-tmp/**',
      'reports/**',
      'client/src/schema.ts',
      'console/src/schema.ts'
    ]
  }),
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/require-await': 'off',
      // TypeBox declares a schema and its static type under one name.
      '@typescript-eslint/no-redeclare': 'off',
      // A promise's callbacks are named for what they settle (resolvePort, done), not always `resolve`.
      'promise/param-names': 'off',
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    // Test files share their worker's loaded modules (isolate: false in vitest.config.ts), so a module
    // mock reaches, or misses, whatever another file loaded first; tests pass what they fake instead.
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['mock', 'doMock', 'unmock', 'doUnmock'].map((property) => ({
          object: 'vi',
          property,
          message:
            'Pass the fake in (a constructor option) instead: module mocks leak between files in a shared worker.'
        }))
      ]
    }
  }
]
