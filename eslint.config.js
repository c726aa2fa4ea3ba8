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
  }
]
