// The faults of a chaos run, one at a time: each is injected, shown to have taken effect, undone
// (or, for the primary's death, left to the failover manager), and timed until the service is whole.
import { readFileSync } from 'node:fs'
import { freezePostmaster } from '../harness/postmaster.js'
import type { LedgerEntry } from './ledger.js'
import { queryOnce, sleep, until, type Instance, type Topology } from './topology.js'

export const FAULT_KINDS = [
  'kill-instance',
  'freeze-primary',
  'freeze-pgbouncer',
  'restart-pgbouncer',
  'kill-primary',
  'clock-ahead'
] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export interface FaultRecord {
  kind: FaultKind
  /** Epoch ms at which it was injected. */
  at: number
  /** Epoch ms at which the run had undone it (for kill-primary: the manager's new primary took writes). */
  undoneAt: number
  tookEffect: boolean
  /** What showed that it took effect, or that it did not. */
  evidence: string[]
  /** From `at` until every instance was ready again; null if that never came. */
  readyMs: number | null
  /** From `at` until the first 2xx to a request sent once every instance was ready. */
  firstOkMs: number | null
  /** The larger of the two: the service whole again. */
  recoveredMs: number | null
  /** Whether counts committed asynchronously may have been lost (the primary died). */
  databaseLoss: boolean
  /** For clock-ahead: the instance whose clock ran ahead, by how much, and while which process served. */
  clock?: { instance: string; aheadMs: number; from: number; to: number }
}

const FREEZE_MS = 5000
const RECOVERY_TIMEOUT_MS = 120_000

/** A process's state letter from /proc: T while stopped. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}

const alive = (pid: number) => processState(pid) !== undefined && processState(pid) !== 'Z'

/** Whether the process stopped: a signal takes effect when the process is next scheduled, later on a busy machine. */
const stopped = (pid: number) =>
  until('the process to stop', async () => (processState(pid) === 'T' ? true : undefined), 5000, 50).catch(() => false)

function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name)
  } catch {}
}

/** Whether `url` answers a query within 30 s, asked again until it does. */
const answersAgain = (url: string) =>
  until('an answer', async () => ((await answers(url)) ? true : undefined), 30_000, 500).catch(() => false)

/** Whether `url` answers a query within a second. */
const answers = (url: string) =>
  queryOnce(url, 'SELECT 1', 1000).then(
    () => true,
    () => false
  )

/**
 * How far the instance's clock is from this machine's, in ms, from the Date header of its own answer
 * (whole seconds: a clock 2 s ahead shows at least 1 s ahead, a true one at most a round trip).
 * The quickest of five answers, measured from the middle of its round trip.
 */
async function clockOffset(instance: Instance): Promise<number> {
  let best = { roundTrip: Infinity, offset: 0 }
  for (let i = 0; i < 5; i++) {
    const before = Date.now()
    const response = await fetch(`${instance.url}/health/live`, { signal: AbortSignal.timeout(30_000) })
    const after = Date.now()
    const offset = Date.parse(response.headers.get('date') ?? '') - (before + after) / 2
    if (after - before < best.roundTrip) best = { roundTrip: after - before, offset: Math.round(offset) }
  }
  return best.offset
}

async function instanceReady(instance: Instance): Promise<boolean> {
  try {
    const response = await fetch(`${instance.url}/health/ready`, { signal: AbortSignal.timeout(2000) })
    return response.status === 200
  } catch {
    return false
  }
}

export interface FaultContext {
  topology: Topology
  entries: LedgerEntry[]
  /** How long the clock-ahead fault lasts. */
  clockAheadForMs: number
  log(message: string): void
}

/** Injects one fault, checks that it took effect, undoes it and waits until the service is whole. */
export async function runFault(kind: FaultKind, context: FaultContext): Promise<FaultRecord> {
  const record: FaultRecord = {
    kind,
    at: Date.now(),
    undoneAt: 0,
    tookEffect: false,
    evidence: [],
    readyMs: null,
    firstOkMs: null,
    recoveredMs: null,
    databaseLoss: kind === 'kill-primary'
  }
  const note = (message: string) => {
    record.evidence.push(message)
    context.log(`${kind}: ${message}`)
  }
  try {
    record.tookEffect = await inject(kind, context, record, note)
  } catch (error) {
    note(`failed: ${error instanceof Error ? error.message : String(error)}`)
  }
  record.undoneAt ||= Date.now()
  await measureRecovery(record, context, note)
  return record
}

async function inject(
  kind: FaultKind,
  context: FaultContext,
  record: FaultRecord,
  note: (message: string) => void
): Promise<boolean> {
  const { topology } = context
  switch (kind) {
    case 'kill-instance': {
      const instance = topology.instances[0]!
      const { pid } = instance.process.child
      record.at = Date.now()
      await topology.killInstance(instance)
      const { signal } = await instance.process.exited
      note(`instance ${instance.name} (pid ${pid}) ended by ${signal}`)
      await sleep(1000)
      await topology.startInstance(instance)
      record.undoneAt = Date.now()
      note(`instance ${instance.name} started again (pid ${instance.process.child.pid})`)
      return signal === 'SIGKILL'
    }
    case 'freeze-primary': {
      const primary = await until('the primary', () => topology.cluster.primary(), 60_000)
      record.at = Date.now()
      const pids = await freezePostmaster(primary.dataDir)
      // On a timer of its own: the checks below may be slow on a busy machine, the freeze must not be.
      const thawed = sleep(FREEZE_MS).then(() => pids.forEach((pid) => signal(pid, 'SIGCONT')))
      // Backends may end between being listed and being stopped: the postmaster is what must stop.
      const postmasterStopped = await stopped(pids[0]!)
      const silent = !(await answers(topology.cluster.nodeUrl(primary)))
      note(
        `${primary.name}: postmaster ${postmasterStopped ? 'stopped' : 'not stopped'} with ${pids.length - 1} children; ${silent ? 'no' : 'an'} answer to a query`
      )
      await thawed
      record.undoneAt = Date.now()
      const after = await topology.cluster.primary().catch(() => undefined)
      note(`continued after ${record.undoneAt - record.at} ms; primary now ${after?.name ?? 'unknown'}`)
      return postmasterStopped && silent
    }
    case 'freeze-pgbouncer': {
      const pid = topology.bouncer.child.pid!
      record.at = Date.now()
      signal(pid, 'SIGSTOP')
      const thawed = sleep(FREEZE_MS).then(() => signal(pid, 'SIGCONT'))
      const bouncerStopped = await stopped(pid)
      const silent = !(await answers(topology.bouncer.url))
      note(
        `PgBouncer (pid ${pid}) ${bouncerStopped ? 'stopped' : 'not stopped'}; ${silent ? 'no' : 'an'} answer to a query`
      )
      await thawed
      record.undoneAt = Date.now()
      return bouncerStopped && silent
    }
    case 'restart-pgbouncer': {
      record.at = Date.now()
      const { oldPid, newPid } = await topology.restartBouncer()
      record.undoneAt = Date.now()
      const answering = await answersAgain(topology.bouncer.url)
      note(`PgBouncer pid ${oldPid} ${alive(oldPid) ? 'still runs' : 'ended'}; pid ${newPid} answers: ${answering}`)
      // Whether it serves again is the recovery, timed below; here, that a new process took the old one's place.
      return !alive(oldPid) && newPid !== oldPid
    }
    case 'kill-primary': {
      const { cluster } = topology
      const primary = await until('the primary', () => cluster.primary(), 60_000)
      const postmaster = cluster.postmasterPid(primary)
      record.at = Date.now()
      cluster.kill(primary)
      await sleep(500)
      const dead = !alive(postmaster)
      note(`${primary.name} (postmaster ${postmaster}) ${dead ? 'killed' : 'still running'}`)
      // The manager, never the run, promotes: wait for the other node to be primary and take writes.
      const promoted = await until(
        'the standby to be promoted',
        async () => {
          const now = await cluster.primary()
          if (!now || now.name === primary.name) return undefined
          const [row] = await queryOnce<{ writable: boolean }>(
            topology.directUrl,
            "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable"
          )
          return row?.writable ? now : undefined
        },
        RECOVERY_TIMEOUT_MS
      ).catch(() => undefined)
      record.undoneAt = Date.now()
      note(
        promoted
          ? `${promoted.name} promoted by pg_auto_failover and writable through HAProxy after ${record.undoneAt - record.at} ms`
          : 'no failover'
      )
      if (!promoted) return false
      cluster.rejoin(primary)
      await cluster.waitHealthy(180_000)
      note(`${primary.name} back as a synchronous standby after ${Date.now() - record.at} ms`)
      return dead
    }
    case 'clock-ahead': {
      const instance = topology.instances[2]!
      const aheadMs = 2000
      record.at = Date.now()
      await topology.stopInstance(instance)
      await topology.startInstance(instance, aheadMs)
      const ahead = await clockOffset(instance)
      note(`instance ${instance.name} restarted under libfaketime: its Date header ${ahead} ms from this machine's`)
      const from = record.at
      await sleep(Math.max(0, record.at + context.clockAheadForMs - Date.now()))
      await topology.stopInstance(instance)
      record.clock = { instance: instance.name, aheadMs, from, to: Date.now() }
      await topology.startInstance(instance)
      record.undoneAt = Date.now()
      const back = await clockOffset(instance)
      note(`instance ${instance.name} restarted with the machine's clock: ${back} ms`)
      // Measured the same way, the two readings share their error: their difference is the lead.
      return ahead - back >= 1000
    }
  }
}

async function measureRecovery(record: FaultRecord, context: FaultContext, note: (message: string) => void) {
  const { instances } = context.topology
  try {
    const readyAt = await until(
      'every instance ready',
      async () => ((await Promise.all(instances.map(instanceReady))).every(Boolean) ? Date.now() : undefined),
      RECOVERY_TIMEOUT_MS,
      200
    )
    record.readyMs = readyAt - record.at
    const firstOk = await until(
      'a 2xx',
      async () => context.entries.find((entry) => entry.sentAt >= readyAt && entry.status >= 200 && entry.status < 300),
      RECOVERY_TIMEOUT_MS,
      100
    )
    record.firstOkMs = firstOk.answeredAt - record.at
    record.recoveredMs = Math.max(record.readyMs, record.firstOkMs)
    note(`ready after ${record.readyMs} ms, first 2xx after ${record.firstOkMs} ms`)
  } catch (error) {
    note(`did not recover: ${error instanceof Error ? error.message : String(error)}`)
  }
}
