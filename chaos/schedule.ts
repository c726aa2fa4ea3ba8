// The chaos run's schedule: which faults, in which order, after which pauses and on which targets,
// drawn from one seed (CHAOS_SEED) so that a run can be replayed. Pure: no I/O, no clock.

/** Faults on the database path, one at a time: each needs the primary and its synchronous standby whole. */
const DATABASE_FAULTS = [
  'freeze-primary',
  'freeze-pgbouncer',
  'restart-pgbouncer',
  'kill-primary',
  'switchover',
  'partition-primary'
] as const

/** Faults on the instances, one at a time, while the database faults run: the two lanes overlap. */
const INSTANCE_FAULTS = ['kill-instance', 'clock-skew', 'partition-instance'] as const

export const FAULT_KINDS = [...DATABASE_FAULTS, ...INSTANCE_FAULTS] as const
/** A rolling upgrade's one fault: an instance stopped gracefully and started again from the new release. */
const UPGRADE_FAULT = 'replace-instance'
export type FaultKind = (typeof FAULT_KINDS)[number] | typeof UPGRADE_FAULT

const INSTANCE_NAMES = ['a', 'b', 'c'] as const
export type InstanceName = (typeof INSTANCE_NAMES)[number]

export interface ScheduledFault {
  /** Its place in the schedule, from 1: the report names each fault by it. */
  id: number
  lane: 'database' | 'instances'
  kind: FaultKind
  /** How long its lane pauses before injecting it, after the previous fault of the lane recovered. */
  pauseMs: number
  /** kill-instance and partition-instance: the instance; clock-skew: the one whose clock runs ahead. */
  instance?: InstanceName
  /** clock-skew: the one whose clock runs behind. */
  behind?: InstanceName
  /** clock-skew: how long the two clocks stay wrong. */
  holdMs?: number
}

export interface Schedule {
  seed: number
  faults: ScheduledFault[]
  /** A rolling upgrade: how long the load runs on the previous release before the new release migrates. */
  migrateAfterMs?: number
}

/** mulberry32: a small, fast 32-bit generator, the same sequence for the same seed everywhere. */
export function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** CHAOS_SEED as given (a whole number from 0 to 2^32 - 1), or a fresh one. */
export function seedFrom(text: string | undefined, fresh: () => number): number {
  if (text === undefined || text === '') return fresh() >>> 0
  const seed = Number(text)
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new Error(`CHAOS_SEED must be a whole number from 0 to 4294967295, not ${JSON.stringify(text)}`)
  }
  return seed
}

function shuffle<T>(items: T[], next: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[items[i], items[j]] = [items[j]!, items[i]!]
  }
  return items
}

/** Kills of the primary in every run: enough that one lands while the standby it promotes is still catching up. */
const PRIMARY_KILLS = 3

/**
 * Every kind at least once, the primary killed three times (with a second instance kill and a second
 * partition of an instance in a run of 180 s or more), in a seeded order with seeded pauses of 2 to
 * 6 s. Two kills of the primary never follow each other directly, so that the standby the second
 * kill promotes has been streaming for a while.
 */
export function makeSchedule(seed: number, seconds: number): Schedule {
  const next = random(seed)
  const long = seconds >= 180
  const database: FaultKind[] = [...DATABASE_FAULTS, ...Array<FaultKind>(PRIMARY_KILLS - 1).fill('kill-primary')]
  let order = shuffle([...database], next)
  for (let attempt = 0; adjacentKills(order) && attempt < 100; attempt++) order = shuffle(order, next)
  if (adjacentKills(order)) order = spreadKills(order)
  const instances = shuffle(
    [...INSTANCE_FAULTS, ...(long ? (['kill-instance', 'partition-instance'] as const) : [])],
    next
  )
  const pick = (exclude: InstanceName[] = []) => {
    const left = INSTANCE_NAMES.filter((name) => !exclude.includes(name))
    return left[Math.floor(next() * left.length)]!
  }
  const pause = () => 2000 + Math.floor(next() * 4000)
  const faults: ScheduledFault[] = []
  let id = 0
  for (const kind of order) faults.push({ id: ++id, lane: 'database', kind, pauseMs: pause() })
  for (const kind of instances) {
    const fault: ScheduledFault = { id: ++id, lane: 'instances', kind, pauseMs: pause() }
    if (kind === 'clock-skew') {
      fault.instance = pick()
      fault.behind = pick([fault.instance])
      fault.holdMs = Math.min(60_000, Math.max(15_000, (seconds * 1000) / 4))
    } else fault.instance = pick()
    faults.push(fault)
  }
  return { seed, faults }
}

/** How long old and new instances serve side by side between two replacements (and after the migration). */
const UPGRADE_PAUSE_MS = 10_000

/**
 * A rolling upgrade (CHAOS_UPGRADE_FROM), the same for every seed: the load runs on the previous
 * release, the new release's migrations run while it serves, then each instance in turn is replaced,
 * with a pause before each replacement in which both releases serve. No fault of the database.
 */
export function makeUpgradeSchedule(seed: number): Schedule {
  const faults = INSTANCE_NAMES.map((instance, i): ScheduledFault => ({
    id: i + 1,
    lane: 'instances',
    kind: UPGRADE_FAULT,
    pauseMs: UPGRADE_PAUSE_MS,
    instance
  }))
  return { seed, faults, migrateAfterMs: UPGRADE_PAUSE_MS }
}

const adjacentKills = (order: FaultKind[]) =>
  order.some((kind, i) => kind === 'kill-primary' && order[i + 1] === 'kill-primary')

/** Puts the kills of the primary first, third, fifth and so on: a fallback that never fails. */
function spreadKills(order: FaultKind[]): FaultKind[] {
  const kills = order.filter((kind) => kind === 'kill-primary')
  const others = order.filter((kind) => kind !== 'kill-primary')
  return kills.flatMap((kill, i) => [kill, ...(others[i] ? [others[i]] : [])]).concat(others.slice(kills.length))
}

/** The schedule as one line per fault, printed at the start of a run and kept in the report. */
export function describeSchedule(schedule: Schedule): string[] {
  const migration =
    schedule.migrateAfterMs === undefined
      ? []
      : [
          `migration: after ${(schedule.migrateAfterMs / 1000).toFixed(1)} s, the new release's migrations (not a fault)`
        ]
  const faults = schedule.faults.map((fault) => {
    const target =
      fault.kind === 'clock-skew'
        ? ` ${fault.instance} +5 s, ${fault.behind} -5 s for ${fault.holdMs! / 1000} s`
        : fault.instance
          ? ` instance ${fault.instance}`
          : ''
    return `#${fault.id} ${fault.lane}: after ${(fault.pauseMs / 1000).toFixed(1)} s, ${fault.kind}${target}`
  })
  return [...migration, ...faults]
}
