import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'

// Two projects: `unit` (test/unit/**: pure logic, no database, no build, seconds) and `integration`
// (the rest of test/, each file on its own database of the server test/global-setup.ts provides).
/** Also the whole of vitest.unit.config.ts, the configuration mutation testing runs. */
export const unitProject = { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } }

export default defineConfig({
  test: {
    maxWorkers: 2,
    teardownTimeout: 30_000,
    projects: [
      unitProject,
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**'],
          // Absolute, so that a run under another --root (test/exit-codes.test.ts) still starts the database.
          globalSetup: [fileURLToPath(new URL('test/global-setup.ts', import.meta.url))],
          pool: 'forks',
          // Each worker keeps its loaded modules from file to file instead of starting afresh, which
          // saves most of the import time. So no file may depend on what another leaves: each closes
          // what it opens and restores what it patches (recordQueries, spies).
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000
        }
      }
    ]
  }
})
