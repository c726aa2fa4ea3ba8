import pg from 'pg'

// A run's databases on a shared server: its template, `test_template_<run>`, and a database for each
// file, `test_<run>_<id>`. The run drops them at its end; a run that is killed never gets there, so
// each run holds an advisory lock while it lasts, and the next run on the server drops the databases
// of every run whose lock nobody holds.

const runName = /^test_(?:template_([0-9a-f]{12})(?:_building)?|([0-9a-f]{12})_[0-9a-f]{12})$/

/** The run a test database belongs to, or undefined for a database no run of this suite made. */
export function runOf(database: string): string | undefined {
  const match = runName.exec(database)
  return match ? (match[1] ?? match[2]) : undefined
}

const lockKey = (run: string) => `animal-store-service test run ${run}`

/** Holds the run's lock on a session of its own until released; the server frees it if the run dies. */
export async function holdRunLock(url: string, run: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url })
  // A server that goes away ends the run's databases with it; the run must not end on the error.
  client.on('error', () => {})
  await client.connect()
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey(run)])
  return { release: () => client.end() }
}

/** Drops the databases of one run, by their names. */
export async function dropRunDatabases(client: pg.Client, run: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT datname AS name FROM pg_database WHERE datname LIKE 'test\\_%' ORDER BY datname"
  )
  const names = rows.map((row) => row.name).filter((name) => runOf(name) === run)
  for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`)
  return names
}

/** Drops what runs that ended without their teardown left: those whose lock no session holds. */
export async function dropEndedRuns(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT datname AS name FROM pg_database WHERE datname LIKE 'test\\_%'"
    )
    const runs = new Set(rows.map((row) => runOf(row.name)).filter((run) => run !== undefined))
    const dropped: string[] = []
    for (const run of runs) {
      const { rows: lock } = await client.query<{ free: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1)) AS free',
        [lockKey(run)]
      )
      if (!lock[0]!.free) continue
      try {
        dropped.push(...(await dropRunDatabases(client, run)))
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(run)])
      }
    }
    return dropped
  } finally {
    await client.end()
  }
}
