/** What a bench run measures: its settings from the environment, and the scenarios. */

/** A problem the person running the bench must fix: printed as one message, no stack. */
export class BenchError extends Error {}

export const PET_COUNT = 10_000

/** Which keys send a scenario's requests; see database.ts for how each set is made. */
export type KeySet =
  | { kind: 'one' }
  | { kind: 'enterprise'; count: number }
  | { kind: 'plans'; count: number }
  | { kind: 'tail'; count: number }

export interface Scenario {
  id: string
  title: string
  /** wrk's first request path; scripts in bench/wrk/ choose the rest. */
  path: string
  script?: string
  keys: KeySet
  writes?: boolean
}

const plans = (id: string, count: number): Scenario => ({
  id,
  title: `plans, ${count.toLocaleString('en')} free and pro keys round robin`,
  path: '/v1/pets',
  script: 'mixed.lua',
  keys: { kind: 'plans', count },
  writes: true
})

export const SCENARIOS: Scenario[] = [
  { id: 'list', title: 'GET /v1/pets?limit=20', path: '/v1/pets?limit=20', keys: { kind: 'one' } },
  {
    id: 'list-available',
    title: 'GET /v1/pets?status=available&limit=100',
    path: '/v1/pets?status=available&limit=100',
    keys: { kind: 'one' }
  },
  { id: 'get', title: 'GET /v1/pets/{id}', path: '/v1/pets/1', script: 'pet-by-id.lua', keys: { kind: 'one' } },
  {
    id: 'create',
    title: 'POST /v1/pets',
    path: '/v1/pets',
    script: 'create-pet.lua',
    keys: { kind: 'one' },
    writes: true
  },
  {
    id: 'mixed',
    title: 'mixed, 1,000 keys round robin',
    path: '/v1/pets',
    script: 'mixed.lua',
    keys: { kind: 'enterprise', count: 1_000 },
    writes: true
  },
  plans('plans', 10_000),
  {
    id: 'tail',
    title: 'tail, 100,000 keys of four plans, Zipf (s = 1), no priming',
    path: '/v1/pets',
    script: 'tail.lua',
    keys: { kind: 'tail', count: 100_000 },
    writes: true
  },
  plans('plans-1k', 1_000),
  plans('plans-100k', 100_000),
  plans('plans-1m', 1_000_000)
]

/** The scenarios of the key-count table and plot. */
export const KEY_GROWTH = ['plans-1k', 'plans', 'plans-100k', 'plans-1m']

export type Baseline = 'bare' | 'spec' | 'redis'
const BASELINES: Baseline[] = ['bare', 'spec', 'redis']

export interface Settings {
  durationSeconds: number
  warmupSeconds: number
  rounds: number
  connections: number
  scenarios: Scenario[]
  /** Servers the service is compared with, each in the same rounds. */
  baselines: Baseline[]
  logLevel: string
  /** Ask each key once before a many-key run, so every key is cached. */
  prime: boolean
  /** Issue keys through the admin API (an admin listener on) rather than in bulk SQL. */
  keysThroughAdmin: boolean
  /** Reset the pets table and CHECKPOINT before every measurement, not only after runs that write. */
  resetBeforeEach: boolean
  setup: 'bench' | 'operator'
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name]
  if (!text) return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) {
    throw new BenchError(`${name} must be a whole number of at least 1, not '${text}'`)
  }
  return value
}

function list<T extends string>(env: NodeJS.ProcessEnv, name: string, known: readonly T[], fallback: T[]): T[] {
  const chosen = (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  for (const item of chosen) {
    if (!known.includes(item as T)) throw new BenchError(`${name}: unknown '${item}'; known: ${known.join(', ')}`)
  }
  return chosen.length ? (chosen as T[]) : fallback
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const text = env[name]
  if (!text) return fallback
  if (text !== '0' && text !== '1') throw new BenchError(`${name} must be 0 or 1, not '${text}'`)
  return text === '1'
}

/**
 * BENCH_SETUP=operator runs the service as an operator does (npm start's defaults: LOG_LEVEL info,
 * the admin listener on, keys issued through it, no priming, the pets reset before each run); each
 * part can be switched on its own to find what it costs.
 */
export function readSettings(env: NodeJS.ProcessEnv): Settings {
  const setup = list(env, 'BENCH_SETUP', ['bench', 'operator'], ['bench'])[0]!
  const operator = setup === 'operator'
  const ids = list(
    env,
    'BENCH_SCENARIOS',
    SCENARIOS.map((scenario) => scenario.id),
    ['list', 'list-available', 'get', 'create', 'mixed', 'plans', 'tail', ...KEY_GROWTH.filter((id) => id !== 'plans')]
  )
  return {
    durationSeconds: wholeNumber(env, 'BENCH_DURATION', 5),
    warmupSeconds: wholeNumber(env, 'BENCH_WARMUP', 2),
    rounds: wholeNumber(env, 'BENCH_ROUNDS', 3),
    connections: wholeNumber(env, 'BENCH_CONNECTIONS', 32),
    scenarios: SCENARIOS.filter((scenario) => ids.includes(scenario.id)),
    baselines: list(env, 'BENCH_BASELINE', BASELINES, ['bare', 'redis']),
    logLevel: env.BENCH_LOG_LEVEL || (operator ? 'info' : 'warn'),
    prime: flag(env, 'BENCH_PRIME', !operator),
    keysThroughAdmin: flag(env, 'BENCH_ADMIN_KEYS', operator),
    resetBeforeEach: flag(env, 'BENCH_RESET_EACH', operator),
    setup
  }
}
