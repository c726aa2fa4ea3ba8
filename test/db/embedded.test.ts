import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort, startEmbeddedPostgres } from '../../src/db/embedded.js'

// A port held by another listener, as when something binds the port freePort answered before
// PostgreSQL does.
let taken: Server
let takenPort: number
const dataDirs: string[] = []
beforeAll(async () => {
  taken = createServer()
  await new Promise<void>((listening) => taken.listen(0, '127.0.0.1', listening))
  takenPort = (taken.address() as AddressInfo).port
})
afterAll(async () => {
  await new Promise((closed) => taken.close(closed))
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true })
})

const newDataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-embedded-'))
  dataDirs.push(dir)
  return dir
}

it('starts on another port when the one it picked is taken before PostgreSQL binds it', async () => {
  const picked: number[] = []
  const log: string[] = []
  const embedded = await startEmbeddedPostgres({
    dataDir: await newDataDir(),
    database: 'port_race',
    ephemeral: true,
    log: (message) => log.push(message),
    pickPort: async () => {
      const port = picked.length === 0 ? takenPort : await freePort()
      picked.push(port)
      return port
    }
  })
  try {
    expect(picked).toHaveLength(2)
    expect(log.join('\n')).toContain('Address already in use')
    expect(new URL(embedded.url).port).toBe(String(picked[1]))
    const client = new pg.Client({ connectionString: embedded.url })
    await client.connect()
    try {
      expect((await client.query<{ name: string }>('SELECT current_database() AS name')).rows).toEqual([
        { name: 'port_race' }
      ])
    } finally {
      await client.end()
    }
  } finally {
    await embedded.stop()
  }
}, 60_000)

it('fails naming the port after five taken ones, rather than trying forever', async () => {
  let picks = 0
  const start = startEmbeddedPostgres({
    dataDir: await newDataDir(),
    database: 'port_race',
    ephemeral: true,
    pickPort: async () => {
      picks++
      return takenPort
    }
  })
  await expect(start).rejects.toThrow(`The embedded PostgreSQL exited before it was ready, on port ${takenPort}`)
  expect(picks).toBe(5)
}, 60_000)
