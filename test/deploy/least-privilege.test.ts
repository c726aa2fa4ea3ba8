import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { migrations } from '../../migrations/index.js'
import { freePort } from '../../src/db/embedded.js'
import { admin, createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { runCli, runEntry, startServer, type RunningServer } from '../../harness/processes.js'
import { describeWith } from '../helpers/requirements.js'
import { makeDeployRoles } from '../../harness/programs.js'
import { awayFromMinuteEnd } from '../helpers/traffic.js'

/** The database URL with another role and password. */
function urlAs(url: string, role: string, password: string): string {
  const parsed = new URL(url)
  parsed.username = role
  parsed.password = password
  return parsed.toString()
}

/** The SQLSTATE of what `statement` raises as `url`'s role, or 'ok'. */
async function outcome(url: string, statement: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(statement)
    return 'ok'
  } catch (error) {
    return (error as { code: string }).code
  } finally {
    await client.end()
  }
}

describeWith('psql')('the service under a role that cannot change the schema', () => {
  const suffix = randomBytes(4).toString('hex')
  const owner = { role: `animal_store_owner_${suffix}`, password: randomBytes(12).toString('hex') }
  const service = { role: `animal_store_service_${suffix}`, password: randomBytes(12).toString('hex') }
  let database: TestDatabase
  let ownerUrl: string
  let serviceUrl: string
  let server: RunningServer | undefined
  // Registered by the migration job (`migrate` with ADMIN_TOKEN set), as the owner: the service cannot.
  const adminToken = 'least-privilege-admin-token-0123456789'

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false })
    // The roles as deploy/postgres/roles.sql makes them in the compose stack, with this test's names.
    const made = await makeDeployRoles(database.url, {
      DATABASE_OWNER_ROLE: owner.role,
      DATABASE_OWNER_PASSWORD: owner.password,
      DATABASE_SERVICE_ROLE: service.role,
      DATABASE_SERVICE_PASSWORD: service.password
    })
    expect(made.stderr).toBe('')
    ownerUrl = urlAs(database.url, owner.role, owner.password)
    serviceUrl = urlAs(database.url, service.role, service.password)
    // The one-shot migration job: the owner, not a superuser, migrates.
    const migrated = await runCli(['migrate'], { DATABASE_URL: ownerUrl, ADMIN_TOKEN: adminToken })
    expect(migrated.stderr).toBe('')
    expect(migrated.stdout.trim()).toBe(`Applied ${Object.keys(migrations).join(', ')}`)
  })
  afterAll(async () => {
    await server?.stop()
    // Gone before its owner is.
    await database?.drop({ wait: true })
    await admin((client) => client.query(`DROP ROLE IF EXISTS ${service.role}, ${owner.role}`))
  })

  it('gives the service rows to read and write, and nothing to create, alter or drop', async () => {
    const { rows } = await database.pool.query<{ rolname: string; rolsuper: boolean; rolcreaterole: boolean }>(
      'SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname',
      [[owner.role, service.role]]
    )
    expect(rows).toEqual([
      { rolname: owner.role, rolsuper: false, rolcreaterole: false, rolcreatedb: false },
      { rolname: service.role, rolsuper: false, rolcreaterole: false, rolcreatedb: false }
    ])
    const owners = await database.pool.query<{ owner: string }>(
      "SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'"
    )
    expect(owners.rows).toEqual([{ owner: owner.role }])

    const refused = {
      createTable: await outcome(serviceUrl, 'CREATE TABLE intruder (id int)'),
      createTempTable: await outcome(serviceUrl, 'CREATE TEMP TABLE intruder (id int)'),
      alterTable: await outcome(serviceUrl, 'ALTER TABLE pets ADD COLUMN intruder int'),
      dropTable: await outcome(serviceUrl, 'DROP TABLE pets'),
      truncate: await outcome(serviceUrl, 'TRUNCATE account_counters'),
      deletePets: await outcome(serviceUrl, 'DELETE FROM pets'),
      // Plans are managed through the admin API, which updates them; none is ever deleted.
      deletePlans: await outcome(serviceUrl, "DELETE FROM plans WHERE name = 'free'"),
      writeMigrations: await outcome(serviceUrl, "DELETE FROM kysely_migration WHERE name = '0001_pets'"),
      updateEvents: await outcome(serviceUrl, "UPDATE audit_events SET actor = 'someone else'"),
      deleteEvents: await outcome(serviceUrl, 'DELETE FROM audit_events'),
      truncateEvents: await outcome(serviceUrl, 'TRUNCATE audit_events'),
      createRole: await outcome(serviceUrl, 'CREATE ROLE intruder')
    }
    expect(refused).toEqual({
      createTable: '42501',
      createTempTable: '42501',
      alterTable: '42501',
      dropTable: '42501',
      truncate: '42501',
      deletePets: '42501',
      deletePlans: '42501',
      writeMigrations: '42501',
      updateEvents: '42501',
      deleteEvents: '42501',
      truncateEvents: '42501',
      createRole: '42501'
    })
    // Events are appended through the one function and read; only the retention function deletes.
    expect(await outcome(serviceUrl, 'SELECT * FROM audit_events')).toBe('ok')
    expect(await outcome(serviceUrl, 'SELECT delete_audit_events_older_than(400)')).toBe('ok')
  })

  it('lets the service append audit events only as they happen, and purge none younger than the retention', async () => {
    const append = (actor: string) =>
      `SELECT append_audit_event('${actor}', 'key.revoked', NULL, NULL, '{}', NULL, NULL, NULL)`
    const forgeries = {
      // An event dated three days back, in the CLI's name.
      backdated: await outcome(
        serviceUrl,
        "INSERT INTO audit_events (at, actor, action) VALUES (now() - interval '3 days', 'cli:root', 'key.revoked')"
      ),
      // An id of its own choosing, which would sort first and later collide with the sequence.
      chosenId: await outcome(
        serviceUrl,
        "INSERT INTO audit_events (id, actor, action) OVERRIDING SYSTEM VALUE VALUES (999999, 'cli:root', 'key.revoked')"
      ),
      plainInsert: await outcome(serviceUrl, "INSERT INTO audit_events (actor, action) VALUES ('cli:root', 'x')"),
      moveSequence: await outcome(serviceUrl, "SELECT setval('audit_events_id_seq', 999999)"),
      update: await outcome(serviceUrl, "UPDATE audit_events SET at = now() - interval '3 days'"),
      delete: await outcome(serviceUrl, 'DELETE FROM audit_events'),
      // Retention: AUDIT_RETENTION_DAYS is 400; the function refuses anything shorter.
      purgeOneDay: await outcome(serviceUrl, 'SELECT delete_audit_events_older_than(1)'),
      purge399Days: await outcome(serviceUrl, 'SELECT delete_audit_events_older_than(399)'),
      lowerTheFloor: await outcome(serviceUrl, 'UPDATE audit_retention SET days = 1'),
      unknownOperator: await outcome(serviceUrl, append('operator:nobody')),
      unknownKey: await outcome(serviceUrl, append('key:ask_Nobody00')),
      noKnownShape: await outcome(serviceUrl, append('admin'))
    }
    expect(forgeries).toEqual({
      backdated: '42501',
      chosenId: '42501',
      plainInsert: '42501',
      moveSequence: '42501',
      update: '42501',
      delete: '42501',
      purgeOneDay: '22023',
      purge399Days: '22023',
      lowerTheFloor: '42501',
      unknownOperator: '22023',
      unknownKey: '22023',
      noKnownShape: '22023'
    })

    // What the function appends carries the database's time and the next id, whatever the caller.
    const client = new pg.Client({ connectionString: serviceUrl })
    await client.connect()
    try {
      await client.query('BEGIN')
      const appended = await client.query<{ id: string }>(`${append('cli:root')} AS id`)
      const { rows } = await client.query<{ fresh: boolean; last: boolean }>(
        'SELECT at >= now() AND at <= clock_timestamp() AS fresh, id = (SELECT max(id) FROM audit_events) AS last FROM audit_events WHERE id = $1',
        [appended.rows[0]!.id]
      )
      await client.query('COMMIT')
      expect(rows).toEqual([{ fresh: true, last: true }])
    } finally {
      await client.end()
    }
  })

  it('lets the service forge no admin: no operator minted, revived or revoked, no event in an admin’s name or dated back', async () => {
    const sha256 = (text: string) => `'\\x${createHash('sha256').update(text).digest('hex')}'::bytea`
    const operatorToken = `aso_Forged00_${'x'.repeat(32)}`
    const append = (actor: string, credential = 'NULL') =>
      `SELECT append_audit_event('${actor}', 'account.closed', NULL, NULL, '{}', NULL, NULL, ${credential})`
    // An admin and a revoked operator, made as the bootstrap admin whose ADMIN_TOKEN the migration registered.
    const make = (name: string, role: string, token: string) =>
      `SELECT id FROM create_operator(${sha256(adminToken)}, 'bootstrap', '${name}', '${role}', '${token.slice(0, 12)}', ${sha256(token)}, NULL, NULL)`
    const adminOperatorToken = `aso_RealAdmn_${'a'.repeat(32)}`
    const viewerToken = `aso_RealView_${'v'.repeat(32)}`
    const revokedToken = `aso_Revoked0_${'r'.repeat(32)}`
    expect(await outcome(serviceUrl, make('real-admin', 'admin', adminOperatorToken))).toBe('ok')
    expect(await outcome(serviceUrl, make('real-viewer', 'viewer', viewerToken))).toBe('ok')
    expect(await outcome(serviceUrl, make('revoked', 'admin', revokedToken))).toBe('ok')
    expect(
      await outcome(
        serviceUrl,
        `SELECT revoke_operator(${sha256(adminToken)}, 'bootstrap', (SELECT id FROM operators WHERE name = 'revoked'), NULL, NULL)`
      )
    ).toBe('ok')
    const before = await database.pool.query(
      "SELECT (SELECT string_agg(concat_ws(' ', id, name, role, revoked_at), ';' ORDER BY id) FROM operators) AS operators, (SELECT count(*) FROM audit_events) AS events"
    )

    const forgeries = {
      bootstrapEvent: await outcome(serviceUrl, append('bootstrap')),
      bootstrapEventWrongToken: await outcome(serviceUrl, append('bootstrap', sha256('guessed'))),
      operatorEvent: await outcome(serviceUrl, append('operator:real-admin')),
      // The form without a credential that the release before 0029 calls (kept by 0029) appends no admin's event either.
      bootstrapEventWithoutCredential: await outcome(
        serviceUrl,
        "SELECT append_audit_event('bootstrap', 'account.closed', NULL, NULL, '{}', NULL, NULL)"
      ),
      operatorEventWithoutCredential: await outcome(
        serviceUrl,
        "SELECT append_audit_event('operator:real-admin', 'account.closed', NULL, NULL, '{}', NULL, NULL)"
      ),
      operatorEventOtherToken: await outcome(serviceUrl, append('operator:real-admin', sha256(viewerToken))),
      revokedOperatorEvent: await outcome(serviceUrl, append('operator:revoked', sha256(revokedToken))),
      insertOperator: await outcome(
        serviceUrl,
        `INSERT INTO operators (name, role, prefix, token_hash) VALUES ('ghost', 'admin', 'aso_Forged00', ${sha256(operatorToken)})`
      ),
      reviveOperator: await outcome(serviceUrl, 'UPDATE operators SET revoked_at = NULL'),
      promoteOperator: await outcome(serviceUrl, "UPDATE operators SET role = 'admin'"),
      deleteOperator: await outcome(serviceUrl, 'DELETE FROM operators'),
      createWithoutCredential: await outcome(
        serviceUrl,
        `SELECT create_operator(NULL, 'bootstrap', 'ghost', 'admin', 'aso_Forged00', ${sha256(operatorToken)}, NULL, NULL)`
      ),
      createAsViewer: await outcome(
        serviceUrl,
        `SELECT create_operator(${sha256(viewerToken)}, 'operator:real-viewer', 'ghost', 'admin', 'aso_Forged00', ${sha256(operatorToken)}, NULL, NULL)`
      ),
      createAsRevoked: await outcome(
        serviceUrl,
        `SELECT create_operator(${sha256(revokedToken)}, 'operator:revoked', 'ghost', 'admin', 'aso_Forged00', ${sha256(operatorToken)}, NULL, NULL)`
      ),
      revokeWithoutCredential: await outcome(
        serviceUrl,
        "SELECT revoke_operator(NULL, 'cli:root', (SELECT id FROM operators WHERE name = 'real-admin'), NULL, NULL)"
      ),
      registerAdminToken: await outcome(
        serviceUrl,
        `INSERT INTO admin_credentials (token_hash) VALUES (${sha256('mine')})`
      ),
      readCredentials: await outcome(serviceUrl, 'SELECT * FROM admin_credentials'),
      askWhoseCredential: await outcome(serviceUrl, `SELECT credential_holder(${sha256(adminToken)})`)
    }
    expect(forgeries).toEqual({
      bootstrapEvent: '42501',
      bootstrapEventWrongToken: '42501',
      operatorEvent: '42501',
      bootstrapEventWithoutCredential: '42501',
      operatorEventWithoutCredential: '42501',
      operatorEventOtherToken: '42501',
      revokedOperatorEvent: '42501',
      insertOperator: '42501',
      reviveOperator: '42501',
      promoteOperator: '42501',
      deleteOperator: '42501',
      createWithoutCredential: '42501',
      createAsViewer: '42501',
      createAsRevoked: '42501',
      revokeWithoutCredential: '42501',
      registerAdminToken: '42501',
      readCredentials: '42501',
      askWhoseCredential: '42501'
    })
    const after = await database.pool.query(
      "SELECT (SELECT string_agg(concat_ws(' ', id, name, role, revoked_at), ';' ORDER BY id) FROM operators) AS operators, (SELECT count(*) FROM audit_events) AS events"
    )
    expect(after.rows).toEqual(before.rows)
    // With its own credential, an operator's event is appended; an admin's makes an operator.
    expect(await outcome(serviceUrl, append('operator:real-viewer', sha256(viewerToken)))).toBe('ok')

    // An event is dated when it is appended, not when its transaction began.
    const client = new pg.Client({ connectionString: serviceUrl })
    await client.connect()
    try {
      await client.query('BEGIN')
      await client.query('SELECT pg_sleep(1.5)')
      const appended = await client.query<{ id: string }>(`${append('cli:root')} AS id`)
      const { rows } = await client.query<{ late: boolean }>(
        "SELECT at >= now() + interval '1.5 seconds' AS late FROM audit_events WHERE id = $1",
        [appended.rows[0]!.id]
      )
      await client.query('COMMIT')
      expect(rows).toEqual([{ late: true }])
      const { rows: timeout } = await client.query('SHOW idle_in_transaction_session_timeout')
      expect(timeout).toEqual([{ idle_in_transaction_session_timeout: '2min' }])
    } finally {
      await client.end()
    }
  })

  it('gives the service’s sessions a check every second that their client is still there', async () => {
    const client = new pg.Client({ connectionString: serviceUrl })
    await client.connect()
    try {
      const { rows } = await client.query('SHOW client_connection_check_interval')
      expect(rows).toEqual([{ client_connection_check_interval: '1s' }])
    } finally {
      await client.end()
    }
  })

  // Two CLI runs, a server's start and some forty requests: 24 s alone on a loaded machine.
  it('runs the CLI’s key commands and the built service: pets, keys, limits, bans, idempotency, revocation', async () => {
    const asService = { DATABASE_URL: serviceUrl, MIGRATE_ON_START: 'false' }
    const issue = async (...args: string[]) => {
      const result = await runCli(['keys', 'create', ...args, '--json'], asService)
      expect(result.stderr).toBe('')
      return JSON.parse(result.stdout) as { id: number; key: string }
    }
    const main = await issue('--plan', 'enterprise', '--per-minute', '1000', '--per-day', '10000')
    const tight = await issue('--plan', 'enterprise', '--per-minute', '2', '--per-day', '100')

    const adminPort = await freePort()
    server = await startServer({
      ...asService,
      UNAUTHENTICATED_PER_MINUTE: '3',
      BAN_AFTER: '1',
      ADMIN_TOKEN: adminToken,
      ADMIN_PORT: String(adminPort)
    })
    const api = (path: string, key: string | undefined, init: RequestInit = {}) =>
      fetch(`${server!.url}${path}`, {
        ...init,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers }
      })

    // Creation with an Idempotency-Key, its replay, the list and the pet.
    const create = () =>
      api('/pets', main.key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'least-privilege-1' },
        body: JSON.stringify({ name: 'Rex', categoryId: 7, status: 'available' })
      })
    const created = await create()
    expect(created.status, await created.clone().text()).toBe(201)
    const pet = (await created.json()) as { id: number }
    const replayed = await create()
    expect(replayed.status).toBe(201)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    expect(await replayed.json()).toEqual(pet)
    const listed = await api('/pets?status=available', main.key)
    expect(listed.status).toBe(200)
    expect(await listed.json()).toEqual([{ id: pet.id, name: 'Rex', categoryId: 7, status: 'available' }])
    expect((await api(`/pets/${pet.id}`, main.key)).status).toBe(200)

    // A key's limit, then its ban, kept in the database; the six requests in one minute.
    await awayFromMinuteEnd(5000)
    const statuses: string[] = []
    for (let i = 0; i < 6; i++) {
      const response = await api('/pets', tight.key)
      statuses.push(response.status === 200 ? '200' : ((await response.json()) as { code: string }).code)
    }
    expect(statuses.slice(0, 3)).toEqual(['200', '200', 'rate_limited'])
    expect(statuses.at(-1)).toBe('key_banned')
    const ban = await database.pool.query('SELECT banned_until FROM api_key_bans WHERE api_key_id = $1', [tight.id])
    expect(ban.rows[0].banned_until).not.toBeNull()

    // The CLI lists and revokes; the server's key cache hears of it over LISTEN within a second.
    const list = await runCli(['keys', 'list', '--json'], asService)
    expect(list.stderr).toBe('')
    expect((JSON.parse(list.stdout) as { id: number }[]).map((key) => key.id)).toEqual([main.id, tight.id])
    const revoked = await runCli(['keys', 'revoke', String(main.id)], asService)
    expect(revoked.stderr).toBe('')
    // From the revoked key's first 401 to the third request without a key, in one minute of the address's budget.
    await awayFromMinuteEnd(3000)
    await vi.waitFor(async () => expect((await api('/pets', main.key)).status).toBe(401), {
      timeout: 1000,
      interval: 20
    })

    // The address budget of requests without a valid key, one of them spent by the revoked key's 401.
    const anonymous = []
    for (let i = 0; i < 3; i++) anonymous.push((await api('/pets', undefined)).status)
    expect(anonymous).toEqual([401, 401, 429])

    // The admin API too: a key issued, changed and its usage read, as the same role.
    const admin = (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${adminPort}/admin/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', ...init.headers }
      })
    const issued = await admin('/keys', { method: 'POST', body: JSON.stringify({ plan: 'pro' }) })
    expect(issued.status).toBe(201)
    const { id: issuedId } = (await issued.json()) as { id: number }
    expect(
      (await admin(`/keys/${issuedId}`, { method: 'PATCH', body: JSON.stringify({ plan: 'business' }) })).status
    ).toBe(200)
    expect((await admin(`/keys/${tight.id}/usage?days=2`)).status).toBe(200)

    expect((await fetch(server.url.replace(/\/v1$/, '/health/ready'))).status).toBe(200)
    expect(server.output()).not.toMatch(/permission denied|"level":5\d/)
    expect(await server.stop()).toBe(0)
    server = undefined
  }, 90_000)

  it('starts with MIGRATE_ON_START left at true as well, the schema being current', async () => {
    server = await startServer({ DATABASE_URL: serviceUrl })
    expect(server.output()).not.toMatch(/permission denied|"level":5\d/)
    expect(await server.stop()).toBe(0)
    server = undefined
  })
})

describe('start-up on a schema behind the code, with MIGRATE_ON_START=false', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false })
  })
  afterAll(async () => {
    await database.drop()
  })

  it.each([
    ['the server', () => runEntry('src/server.ts', [], { DATABASE_URL: database.url, MIGRATE_ON_START: 'false' })],
    ['a key command', () => runCli(['keys', 'list'], { DATABASE_URL: database.url, MIGRATE_ON_START: 'false' })]
  ])('stops %s with a message naming the migrate command, and changes nothing', async (_name, start) => {
    const result = await start()
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`migrations ${Object.keys(migrations).join(', ')} have not run`)
    expect(result.stderr).toContain('npm run --silent cli -- migrate')
    expect(result.stderr).toContain('node dist/src/cli.js migrate')
    const { rows } = await database.pool.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")
    expect(rows[0].n).toBe(0)
  })
})
