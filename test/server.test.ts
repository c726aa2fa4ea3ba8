import { existsSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/db/embedded.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { eventually, holdPort, runCli, runEntry, startServer } from '../harness/processes.js'

describe('npm start with no DATABASE_URL', () => {
  let dataDir: string
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'animal-store-start-'))
    await chmod(dataDir, 0o755)
  })
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true, maxRetries: 5 })
  })

  // Two starts of the server and two of the CLI, each with its own start-up of the embedded database.
  it(
    'starts an embedded Postgres in the data folder, migrates it, serves /v1, and keeps data across restarts',
    { timeout: 90_000 },
    async () => {
      const port = await freePort()
      const env = { PORT: String(port), EMBEDDED_DATA_DIR: join(dataDir, '.data') }
      const first = await startServer(env)
      try {
        expect(first.url).toBe(`http://127.0.0.1:${port}/v1`)
        expect(first.output()).toContain(`using embedded PostgreSQL in ${join(dataDir, '.data')}/pg`)
        // The key goes to the terminal on stderr; stdout, the log stream a collector keeps, is JSON lines without it.
        // stderr is a pipe of its own, which may trail the "listening" line on stdout.
        await eventually(() => (first.stderr().includes('curl -H') ? true : undefined))
        expect(first.stderr()).toContain('Development API key (free plan), shown only this once:')
        expect(first.stderr()).toMatch(new RegExp(`curl -H 'Authorization: Bearer ask_\\S+' ${first.url}/pets`))
        expect(first.stdout()).not.toContain('ask_')
        for (const line of first.stdout().split('\n').filter(Boolean)) {
          expect(() => JSON.parse(line), line).not.toThrow()
        }
        const withoutKey = await fetch(`${first.url}/pets`)
        expect(withoutKey.status).toBe(401)
        const created = await fetch(`${first.url}/pets`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(await authHeader(first.output())) },
          body: JSON.stringify({ name: 'Kept', categoryId: 3 })
        })
        expect(created.status).toBe(201)

        // The CLI, with the same (empty) configuration, joins the running embedded database.
        const issued = await runCli(['keys', 'create', '--plan', 'pro', '--json'], env)
        expect(issued.stderr).toBe('')
        const { key } = JSON.parse(issued.stdout)
        expect((await fetch(`${first.url}/pets`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
      } finally {
        expect(await first.stop('SIGTERM')).toBe(0)
      }
      // With no server running, the CLI starts the embedded database itself and stops it again.
      const listed = await runCli(['keys', 'list', '--json'], env)
      expect(listed.code).toBe(0)
      expect(JSON.parse(listed.stdout).map((key: { plan: string }) => key.plan)).toEqual(['free', 'pro'])
      expect(existsSync(join(dataDir, '.data', 'pg', 'PG_VERSION'))).toBe(true)

      const second = await startServer(env)
      try {
        expect(second.output()).not.toContain('Development API key')
        const listed = await fetch(`${second.url}/pets`, { headers: await authHeader(first.output()) })
        expect(listed.status).toBe(200)
        expect(await listed.json()).toEqual([{ id: 1, name: 'Kept', categoryId: 3 }])
      } finally {
        expect(await second.stop('SIGINT')).toBe(0)
      }
    }
  )
})

describe('npm start with DATABASE_URL', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false })
  })
  afterAll(async () => {
    await database.drop()
  })

  it('uses that server, migrates it, starts no embedded Postgres and never logs the password', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-unused-'))
    const server = await startServer({
      DATABASE_URL: database.url,
      EMBEDDED_DATA_DIR: join(dataDir, '.data')
    })
    try {
      const url = new URL(database.url)
      expect(server.output()).toContain(`using postgres://${url.hostname}:${url.port}/${database.name}`)
      if (url.password) expect(server.output()).not.toContain(url.password)
      expect(existsSync(join(dataDir, '.data'))).toBe(false)
      expect(server.output()).not.toContain('Development API key')
      expect(server.output()).not.toContain('ask_')
      const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM pets')
      expect(rows[0].n).toBe(0)
    } finally {
      expect(await server.stop()).toBe(0)
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

describe('start-up when a side listener cannot listen', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database.drop()
  })

  it('exits 1 before it listens on the public port, rather than after announcing it', async () => {
    const taken = await holdPort()
    const adminPort = taken.port
    const port = await freePort()
    try {
      const result = await runEntry('src/server.ts', [], {
        DATABASE_URL: database.url,
        PORT: String(port),
        METRICS_PORT: '0',
        ADMIN_TOKEN: 'a-side-listener-test-token-0123456789',
        ADMIN_PORT: String(adminPort)
      })
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        `Start-up failed: listen EADDRINUSE: address already in use 127.0.0.1:${adminPort}`
      ])
      expect(result.stdout).not.toContain('listening on')
    } finally {
      taken.release()
    }
  })
})

describe('start-up with bad configuration', () => {
  it.each([
    ['PORT', 'not-a-port'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['PUBLIC_BASE_URL', 'https://api.example.com/v2'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '1'],
    ['TRUST_PROXY', 'nginx']
  ])('stops with a one-line message naming %s=%s and a non-zero exit', async (name, value) => {
    const result = await runEntry('src/server.ts', [], { [name]: value })
    expect(result.code).not.toBe(0)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^Invalid configuration: /)
    expect(lines[0]).toContain(name)
  })

  it('stops with a one-line message naming ADMIN_TOKEN, without echoing it, when it is under 32 characters', async () => {
    const token = 'short-admin-token-31-characters'
    const result = await runEntry('src/server.ts', [], { ADMIN_TOKEN: token })
    expect(result.code).not.toBe(0)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^Invalid configuration: ADMIN_TOKEN .*32/)
    expect(lines[0]).not.toContain(token)
  })
})

// The development key the first embedded start prints.
async function authHeader(output: string): Promise<Record<string, string>> {
  const match = output.match(/Authorization: Bearer (ask_\S+?)'/)
  if (!match) throw new Error(`no development key in:\n${output}`)
  return { authorization: `Bearer ${match[1]}` }
}
