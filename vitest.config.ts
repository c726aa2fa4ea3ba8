import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

// Two projects: `unit` (test/unit/**: pure logic, no database, no build, seconds) and `integration`
// (the rest of test/, each file on its own database of the server test/global-setup.ts provides).
/** Also the whole of vitest.unit.config.ts, the configuration mutation testing runs. */
export const unitProject = { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } }

/**
 * Files that spend most of their time waiting on what they start (nested test runs, a browser,
 * processes they kill, half a minute of idling): started first, so that the workers end together
 * rather than one of them running these alone at the end. Vitest orders the rest (by the last
 * run's durations when it has them, else larger files first).
 */
const STARTED_FIRST = [
  'test/exit-codes.test.ts',
  'test/admin/console.test.ts',
  'test/reliability/crash.test.ts',
  'test/reliability/hostile-input.test.ts',
  'test/deploy/idle.test.ts',
  'test/server.test.ts',
  'test/start-together.test.ts',
  'test/admin/console-roles.test.ts'
].map((file) => fileURLToPath(new URL(file, import.meta.url)))
for (const file of STARTED_FIRST) if (!existsSync(file)) throw new Error(`vitest.config.ts: no test file ${file}`)

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = STARTED_FIRST.indexOf(file.moduleId)
      return index === -1 ? STARTED_FIRST.length : index
    }
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  test: {
    // Three on two cores: the files wait on processes, browsers and the database about half their time
    // (docs/testing.md, 189 s against 156 s).
    maxWorkers: 3,
    sequence: { sequencer: SlowFirst },
    teardownTimeout: 30_000,
    projects: [
      // One process for the unit files, as for the integration ones: a fresh one per file took three
      // times as long (15 s against 5).
      { test: { ...unitProject.test, isolate: false } },
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
          hookTimeout: 60_000,
          // How long expect.poll waits for a state unless a test says: vitest's 1 s was too short for a
          // page to render an answer on a busy machine (test/admin/console.test.ts in CI at 069d99d).
          expect: { poll: { timeout: 10_000 } }
        }
      }
    ]
  }
})
