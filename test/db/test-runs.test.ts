import { randomBytes } from 'node:crypto'
import { describe, expect, inject, it } from 'vitest'
import { admin } from '../helpers/database.js'
import { dropEndedRuns, holdRunLock, runOf } from '../helpers/runs.js'

// A run killed before its teardown leaves its databases on the server; the next run drops them, and
// nothing of a run still going.
const id = () => randomBytes(6).toString('hex')
const existing = (names: string[]) =>
  admin(async (client) => {
    const { rows } = await client.query<{ name: string }>(
      'SELECT datname AS name FROM pg_database WHERE datname = ANY($1)',
      [names]
    )
    return rows.map((row) => row.name).sort()
  })

describe('the databases of ended test runs', () => {
  it("are dropped, template and files' databases, while a live run's, this run's and others' stay", async () => {
    const url = inject('adminDatabaseUrl')
    const ended = id()
    const live = id()
    const endedNames = [`test_template_${ended}`, `test_${ended}_${id()}`, `test_${ended}_${id()}`]
    const liveNames = [`test_template_${live}`, `test_${live}_${id()}`]
    const other = `test_${id()}`
    const all = [...endedNames, ...liveNames, other]
    // The live run holds its lock before its databases exist, as a run does: another run on the same
    // server, cleaning up meanwhile, would take them for an ended run's.
    const liveLock = await holdRunLock(url, live)
    await admin(async (client) => {
      for (const name of all) await client.query(`CREATE DATABASE ${name}`)
    })
    try {
      const dropped = await dropEndedRuns(url)
      for (const name of liveNames) expect(dropped).not.toContain(name)
      expect(dropped.map(runOf)).not.toContain(runOf(`${inject('databasePrefix')}${id()}`))
      expect(await existing(all)).toEqual([...liveNames, other].sort())
    } finally {
      await liveLock.release()
    }
    // Once the live run's session ends, its lock with it, the next clean-up takes its databases too
    // (this run's or another's: what is left is what counts).
    await dropEndedRuns(url)
    expect(await existing(all)).toEqual([other])
    await admin((client) => client.query(`DROP DATABASE ${other}`))
  })
})
