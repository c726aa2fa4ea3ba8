import pg from 'pg'

// A run's databases on a shared server: its template, `test_template_<run>`, and a database for each
// file, `test_<run>_<id>`. The run drops them at its end; a run that is killed never gets there, so
// each run holds an advisory lock while it lasts, and the next run on the server drops the databases
// of every run whose lock nobody holds.

/** The names a run gives its databases: its template's, and the start of each file's. */
export const runNames = (run: string) => ({ template: `test_template_${run}`, prefix: `test_${run}_` })

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

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/** Every test database on the server, by the run that made it. */
async function databasesByRun(client: pg.Client): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT datname AS name FROM pg_database WHERE datname LIKE 'test\\_%' ORDER BY datname"
  )
  const byRun = new Map<string, string[]>()
  for (const { name } of rows) {
    const run = runOf(name)
    if (run !== undefined) byRun.set(run, [...(byRun.get(run) ?? []), name])
  }
  return byRun
}

async function dropDatabases(client: pg.Client, names: string[]): Promise<void> {
  for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`)
}

/** Drops what is left of the run's databases: the template, and the copies whose drop is still to come. */
export function dropRun(url: string, run: string): Promise<void> {
  return withClient(url, async (client) => dropDatabases(client, (await databasesByRun(client)).get(run) ?? []))
}

/** Drops what runs that ended without their teardown left: those whose lock no session holds. */
export function dropEndedRuns(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const dropped: string[] = []
    for (const [run, names] of await databasesByRun(client)) {
      const { rows } = await client.query<{ free: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS free', [
        lockKey(run)
      ])
      if (!rows[0]!.free) continue
      try {
        await dropDatabases(client, names)
        dropped.push(...names)
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(run)])
      }
    }
    return dropped
  })
}
