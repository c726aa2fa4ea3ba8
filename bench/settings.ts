/** What a bench run measures: its settings from the environment, and the scenarios. */

/** A problem the person running the bench must fix: printed as one message, no stack. */
export class BenchError extends Error {}

export const PET_COUNT = 10_000

/** Which keys send a scenario's requests; see database.ts for how each set is made. */
export interface KeySet {
  kind: 'one' | 'enterprise' | 'plans' | 'tail'
  count: number
}

export interface Scenario {
  id: string
  title: string
  /** wrk's first request path; scripts in bench/wrk/ choose the rest. */
  path: string
  script?: string
  keys: KeySet
  writes?: boolean
  /** Each key asked once before a run, as in a fleet that keeps sending; not the sets of 100,000 and more, which outgrow the key cache's 50,000. */
  primed?: boolean
}

const one: KeySet = { kind: 'one', count: 1 }
const many = (id: string, title: string, keys: KeySet): Scenario => ({
  id,
  title,
  path: '/v1/pets',
  script: 'mixed.lua',
  keys,
  writes: true,
  primed: keys.kind !== 'tail' && keys.count <= 10_000
})
const plans = (id: string, count: number) =>
  many(id, `plans, ${count.toLocaleString('en')} free and pro keys round robin`, { kind: 'plans', count })

export const SCENARIOS: Scenario[] = [
  { id: 'list', title: 'GET /v1/pets?limit=20', path: '/v1/pets?limit=20', keys: one },
  {
    id: 'list-available',
    title: 'GET /v1/pets?status=available&limit=100',
    path: '/v1/pets?status=available&limit=100',
    keys: one
  },
  { id: 'get', title: 'GET /v1/pets/{id}', path: '/v1/pets/1', script: 'pet-by-id.lua', keys: one },
  { id: 'create', title: 'POST /v1/pets', path: '/v1/pets', script: 'create-pet.lua', keys: one, writes: true },
  many('mixed', 'mixed, 1,000 keys round robin', { kind: 'enterprise', count: 1_000 }),
  plans('plans', 10_000),
  many('tail', 'tail, 100,000 keys of four plans, Zipf (s = 1), no priming', { kind: 'tail', count: 100_000 }),
  plans('plans-1k', 1_000),
  plans('plans-100k', 100_000),
  plans('plans-1m', 1_000_000)
]

export type Settings = ReturnType<typeof readSettings>
export type Baseline = Settings['baselines'][number]

/** Key sets up to this size are issued through the admin API when it is on; larger ones in bulk SQL. */
export const ADMIN_KEYS_MAX = 10_000

/**
 * By default the service runs as an operator runs it (`npm start`'s defaults: LOG_LEVEL info, the
 * admin listener on, keys issued through it, no priming, the pets reset before each run), and the
 * baselines with Fastify's own logger at info. BENCH_SETUP=lean is the setup the bench had before:
 * the service at warn, keys in bulk SQL and primed, the baselines without a logger. Each part can be
 * switched on its own to find what it costs.
 */
export function readSettings(env: NodeJS.ProcessEnv) {
  const wholeNumber = (name: string, fallback: number) => {
    const value = Number(env[name] || fallback)
    if (!Number.isInteger(value) || value < 1) {
      throw new BenchError(`${name} must be a whole number of at least 1, not '${env[name]}'`)
    }
    return value
  }
  const list = <T extends string>(name: string, known: readonly T[], fallback: readonly T[]): T[] => {
    const chosen = (env[name] ?? '').split(',').flatMap((item) => item.trim() || [])
    const unknown = chosen.find((item) => !known.includes(item as T))
    if (unknown) throw new BenchError(`${name}: unknown '${unknown}'; known: ${known.join(', ')}`)
    return chosen.length ? (chosen as T[]) : [...fallback]
  }
  const flag = (name: string, fallback: boolean) => {
    if (!env[name]) return fallback
    if (env[name] !== '0' && env[name] !== '1') throw new BenchError(`${name} must be 0 or 1, not '${env[name]}'`)
    return env[name] === '1'
  }
  const level = (name: string, fallback: string) => {
    const value = env[name] || fallback
    if (!LOG_LEVELS.includes(value)) {
      throw new BenchError(`${name}: unknown '${value}'; known: ${LOG_LEVELS.join(', ')}`)
    }
    return value
  }
  const ratio = (name: string) => {
    if (!env[name]) return undefined
    const value = Number(env[name])
    if (!(value > 0 && value <= 1)) {
      throw new BenchError(`${name} must be a sampling ratio above 0 and at most 1, not '${env[name]}'`)
    }
    return value
  }
  const setup = list('BENCH_SETUP', ['operator', 'lean'], ['operator'])[0]!
  const lean = setup === 'lean'
  const all = SCENARIOS.map((scenario) => scenario.id)
  const ids = list('BENCH_SCENARIOS', all, all)
  return {
    durationSeconds: wholeNumber('BENCH_DURATION', 5),
    warmupSeconds: wholeNumber('BENCH_WARMUP', 2),
    rounds: wholeNumber('BENCH_ROUNDS', 3),
    connections: wholeNumber('BENCH_CONNECTIONS', 32),
    scenarios: SCENARIOS.filter((scenario) => ids.includes(scenario.id)),
    /** Servers the service is compared with, each in the same rounds. */
    baselines: list('BENCH_BASELINE', ['bare', 'redis'], ['bare', 'redis']),
    /** The service's LOG_LEVEL. */
    logLevel: level('BENCH_LOG_LEVEL', lean ? 'warn' : 'info'),
    /** The level of the baselines' Fastify logger (its default, a line on arrival and one on completion); `silent`: none. */
    baselineLogLevel: level('BENCH_BASELINE_LOG_LEVEL', lean ? 'silent' : 'info'),
    /** Ask each key once before a run of a scenario that is primed. */
    prime: flag('BENCH_PRIME', lean),
    /** Issue keys through the admin API (an admin listener on) rather than in bulk SQL, sets up to ADMIN_KEYS_MAX. */
    keysThroughAdmin: flag('BENCH_ADMIN_KEYS', !lean),
    /** Reset the pets table and CHECKPOINT before every measurement, not only after runs that write. */
    resetBeforeEach: flag('BENCH_RESET_EACH', !lean),
    /** The service traces this share of requests, its spans sent to a sink in the bench process; unset: tracing off. */
    tracing: ratio('BENCH_OTEL'),
    setup
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
