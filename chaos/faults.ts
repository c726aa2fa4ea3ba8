// The faults of a chaos run: each is injected, shown to have taken effect, undone (or, for the
// primary's death, left to the failover manager), and timed until the service is whole. The
// schedule (schedule.ts) runs them one at a time in each of two lanes, so that faults overlap.
import { readFileSync, statSync } from 'node:fs'
import { freezePostmaster } from '../harness/postmaster.js'
import type { LedgerEntry } from './ledger.js'
import type { FaultKind, ScheduledFault } from './schedule.js'
import { queryOnce, sleep, until, type HaNode, type Instance, type Topology } from './topology.js'
import type { Release } from './upgrade.js'

export interface FaultRecord {
  /** Its number in the schedule. */
  id: number
  kind: FaultKind
  /** What it was done to: an instance, a database node, PgBouncer. */
  target: string
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
  /**
   * When the primary died: from the new primary being writable through HAProxy to the first 2xx to a
   * request sent after the fault began (the old primary served none of them).
   */
  firstOkAfterWritableMs?: number | null
  /** When the primary died: the instant the new primary was writable through HAProxy. */
  writableAt?: number
  /**
   * Whether counts committed asynchronously may have been lost, and the instants between which they
   * were committed (the primary died, was cut off and demoted, or was switched over).
   */
  databaseLoss: boolean
  loss?: { from: number; to: number }
  /** Before a fault that changes the primary: synchronous replication as the primary reported it. */
  replication?: { synchronousStandbyNames: string; standbys: string; sync: boolean }
  /** For clock-skew: each instance whose clock was wrong, by how much, and while which process served. */
  clocks?: { instance: string; offsetMs: number; measuredMs: number; from: number; to: number }[]
}

const FREEZE_MS = 5000
/** How far clock-skew moves an instance's clock, ahead on one and behind on another. */
const SKEW_MS = 5000
/** How long an instance stays cut off from the database path. */
const PARTITION_MS = 10_000
/** Counts committed this long before the primary died may not have reached the standby (three wal_writer_delay and more). */
const LOSS_LEAD_MS = 1000
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
  log(message: string): void
  /** In a rolling upgrade, the release that replace-instance starts an instance from. */
  upgradeTo?: Release
}

const instanceNamed = (topology: Topology, name: string | undefined) =>
  topology.instances.find((instance) => instance.name === name) ?? topology.instances[0]!

/** Injects one scheduled fault, checks that it took effect, undoes it and waits until the service is whole. */
export async function runFault(fault: ScheduledFault, context: FaultContext): Promise<FaultRecord> {
  const { kind } = fault
  const record: FaultRecord = {
    id: fault.id,
    kind,
    target: fault.instance
      ? kind === 'clock-skew'
        ? `instances ${fault.instance} and ${fault.behind}`
        : `instance ${fault.instance}`
      : kind.includes('pgbouncer')
        ? 'PgBouncer'
        : 'the primary',
    at: Date.now(),
    undoneAt: 0,
    tookEffect: false,
    evidence: [],
    readyMs: null,
    firstOkMs: null,
    recoveredMs: null,
    // A switchover too: pg_auto_failover stops the old primary while it promotes the standby, and
    // counts committed asynchronously in between may not have reached it (docs/reliability.md).
    databaseLoss: kind === 'kill-primary' || kind === 'partition-primary' || kind === 'switchover'
  }
  const note = (message: string) => {
    record.evidence.push(message)
    context.log(`#${fault.id} ${kind}: ${message}`)
  }
  try {
    record.tookEffect = await inject(fault, context, record, note)
  } catch (error) {
    note(`failed: ${error instanceof Error ? error.message : String(error)}`)
  }
  record.undoneAt ||= Date.now()
  if (fault.lane === 'instances') await restartStopped(context.topology, note)
  await measureRecovery(record, context, note)
  return record
}

/** After a fault on the instances that failed halfway: every instance that is not running is started again. */
async function restartStopped(topology: Topology, note: (message: string) => void) {
  for (const instance of topology.instances) {
    const { child } = instance.process
    if (child.exitCode === null && child.signalCode === null) continue
    note(`instance ${instance.name} was not running: started again with the machine's clock`)
    await topology
      .startInstance(instance, 0)
      .catch((error: unknown) => note(`instance ${instance.name}: ${String(error)}`))
  }
}

/**
 * What a keeper logged from byte `from` on about the monitor, its standby, partitions and its states:
 * each distinct message once, with the time it first appeared (pg_autoctl repeats them every second).
 */
export function keeperDecisions(log: string, from: number): string[] {
  const seen = new Map<string, string>()
  for (const line of readFileSync(log).subarray(from).toString('utf8').split('\n')) {
    const [, time, message] = /^(\d\d:\d\d:\d\d) \d+ (.*)$/.exec(line) ?? []
    if (time && message && /monitor|standby|partition|demote|state/i.test(message) && !seen.has(message)) {
      seen.set(message, `${time} ${message}`)
    }
  }
  return [...seen.values()].slice(0, 20)
}

/**
 * Before the primary is killed, switched over or cut off: `synchronous_standby_names` set on the
 * primary and a standby streaming in sync (pg_auto_failover's `ANY 1 (...)` shows as `quorum`).
 * Waits up to a minute for it and records what it saw.
 */
async function confirmSynchronous(topology: Topology, record: FaultRecord, note: (message: string) => void) {
  const { cluster } = topology
  let last = { synchronousStandbyNames: '', standbys: '', sync: false }
  await until(
    'synchronous replication',
    async () => {
      const primary = await cluster.primary()
      if (!primary) return undefined
      const [row] = await queryOnce<{ names: string; standbys: string | null; sync: boolean }>(
        cluster.nodeUrl(primary),
        `SELECT current_setting('synchronous_standby_names') AS names,
          (SELECT string_agg(application_name || ' ' || state || ' ' || sync_state, ', ') FROM pg_stat_replication) AS standbys,
          EXISTS (SELECT FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')) AS sync`,
        5000
      )
      if (!row) return undefined
      last = {
        synchronousStandbyNames: row.names,
        standbys: row.standbys ?? 'none',
        sync: row.sync && row.names !== ''
      }
      return last.sync ? true : undefined
    },
    60_000,
    500
  ).catch(() => {})
  record.replication = last
  note(
    `before: synchronous_standby_names = '${last.synchronousStandbyNames}', standbys: ${last.standbys} (${last.sync ? 'in sync' : 'NOT in sync'})`
  )
  return last.sync
}

/** Waits for a node other than `old` to be primary and writable through HAProxy; returns it, or undefined. */
async function newPrimary(topology: Topology, old: HaNode) {
  return until(
    'another node to be primary and writable',
    async () => {
      const now = await topology.cluster.primary()
      if (!now || now.name === old.name) return undefined
      const [row] = await queryOnce<{ writable: boolean }>(
        topology.directUrl,
        "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable"
      )
      return row?.writable ? now : undefined
    },
    RECOVERY_TIMEOUT_MS
  ).catch(() => undefined)
}

/**
 * The first instant HAProxy leads to a writable primary, polled every 100 ms from the kill: the old
 * primary is dead, so it is the new one. newPrimary, which asks the monitor too, sees it later.
 */
const writableThroughProxy = (topology: Topology) =>
  until(
    'a writable primary through HAProxy',
    async () => {
      const [row] = await queryOnce<{ writable: boolean }>(
        topology.directUrl,
        "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable",
        1000
      )
      return row?.writable ? Date.now() : undefined
    },
    RECOVERY_TIMEOUT_MS,
    100
  ).catch(() => undefined)

/** Restarts an instance with its clock `offsetMs` from the machine's and measures where it ended up. */
async function restartWithClock(topology: Topology, instance: Instance, offsetMs: number) {
  await topology.stopInstance(instance)
  await topology.startInstance(instance, offsetMs)
  return clockOffset(instance)
}

async function inject(
  fault: ScheduledFault,
  context: FaultContext,
  record: FaultRecord,
  note: (message: string) => void
): Promise<boolean> {
  const { topology } = context
  switch (fault.kind) {
    case 'replace-instance': {
      const instance = instanceNamed(topology, fault.instance)
      const to = context.upgradeTo
      if (!to) throw new Error('replace-instance needs the release to start from')
      const { pid } = instance.process.child
      const from = instance.release.commit
      record.at = Date.now()
      // As a deploy replaces a pod: SIGTERM, its in-flight requests finish, then the new release starts.
      await topology.stopInstance(instance)
      const { code, signal } = await instance.process.exited
      note(`instance ${instance.name} (pid ${pid}, ${from}) stopped after SIGTERM: ${signal ?? `exit ${code}`}`)
      await topology.startInstance(instance, 0, to)
      record.undoneAt = Date.now()
      note(`instance ${instance.name} started from ${to.commit} (pid ${instance.process.child.pid}) and ready`)
      return code === 0 && from !== to.commit
    }
    case 'kill-instance': {
      const instance = instanceNamed(topology, fault.instance)
      const { pid } = instance.process.child
      record.at = Date.now()
      await topology.killInstance(instance)
      const { signal } = await instance.process.exited
      note(`instance ${instance.name} (pid ${pid}) ended by ${signal}`)
      await sleep(1000)
      await topology.startInstance(instance, instance.clockOffsetMs)
      record.undoneAt = Date.now()
      note(`instance ${instance.name} started again (pid ${instance.process.child.pid})`)
      return signal === 'SIGKILL'
    }
    case 'freeze-primary': {
      const primary = await until('the primary', () => topology.cluster.primary(), 60_000)
      record.target = primary.name
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
      record.target = primary.name
      const sync = await confirmSynchronous(topology, record, note)
      const postmaster = cluster.postmasterPid(primary)
      record.at = Date.now()
      // Counts committed asynchronously in the primary's last moments may not have reached the standby.
      record.loss = { from: record.at - LOSS_LEAD_MS, to: record.at }
      cluster.kill(primary)
      const writable = writableThroughProxy(topology)
      await sleep(500)
      const dead = !alive(postmaster)
      note(`${primary.name} (postmaster ${postmaster}) ${dead ? 'killed' : 'still running'}`)
      // The manager, never the run, promotes: wait for the other node to be primary and take writes.
      const promoted = await newPrimary(topology, primary)
      record.undoneAt = Date.now()
      if (promoted) record.writableAt = (await writable) ?? record.undoneAt
      note(
        promoted
          ? `${promoted.name} promoted by pg_auto_failover: writable through HAProxy ${record.writableAt! - record.at} ms after the kill, the monitor agreeing after ${record.undoneAt - record.at} ms`
          : 'no failover'
      )
      if (!promoted) return false
      cluster.rejoin(primary)
      await cluster.waitHealthy(180_000)
      note(`${primary.name} back as a synchronous standby after ${Date.now() - record.at} ms`)
      return dead && sync
    }
    case 'switchover': {
      const { cluster } = topology
      const primary = await until('the primary', () => cluster.primary(), 60_000)
      record.target = primary.name
      const sync = await confirmSynchronous(topology, record, note)
      record.at = Date.now()
      // The monitor refuses a switchover while it is still settling a node: asked again, as an operator would.
      for (let attempt = 1; attempt <= 3; attempt++) {
        const result = await cluster.switchover()
        note(`pg_autoctl perform switchover (attempt ${attempt}): ${result.output}`)
        if (result.ok) break
        await sleep(5000)
      }
      const promoted = await newPrimary(topology, primary)
      record.undoneAt = Date.now()
      // Counts committed from just before the switchover until the standby took writes may be lost.
      record.loss = { from: record.at - LOSS_LEAD_MS, to: record.undoneAt }
      note(
        promoted
          ? `${promoted.name} primary and writable through HAProxy after ${record.undoneAt - record.at} ms`
          : 'no switchover'
      )
      if (!promoted) return false
      await cluster.waitHealthy(180_000)
      note(`${primary.name} a synchronous standby after ${Date.now() - record.at} ms`)
      return sync
    }
    case 'partition-instance': {
      const instance = instanceNamed(topology, fault.instance)
      const { databasePath } = topology.network
      record.at = Date.now()
      const heal = await topology.network.drop(databasePath, instance.namespace.address)
      const routes = await topology.network.drops()
      // Cut off from PgBouncer and HAProxy, still reached by nginx: readiness fails, liveness does not.
      const lost = await until(
        'the instance to lose its database',
        async () => ((await instanceReady(instance)) ? undefined : true),
        20_000,
        250
      ).catch(() => false)
      const live = await fetch(`${instance.url}/health/live`, { signal: AbortSignal.timeout(5000) }).then(
        (response) => response.status === 200,
        () => false
      )
      note(
        `instance ${instance.name} (${instance.namespace.address}): '${routes.join(', ')}' on the host; /health/ready ${lost ? 'failing' : 'still 200'}, /health/live ${live ? '200' : 'not answering'}`
      )
      await sleep(Math.max(0, record.at + PARTITION_MS - Date.now()))
      await heal()
      record.undoneAt = Date.now()
      note(`healed after ${record.undoneAt - record.at} ms`)
      return lost && live
    }
    case 'partition-primary': {
      const { cluster } = topology
      const primary = await until('the primary', () => cluster.primary(), 60_000)
      const standby = cluster.nodes.find((node) => node.name !== primary.name)!
      record.target = primary.name
      const sync = await confirmSynchronous(topology, record, note)
      const postmaster = cluster.postmasterPid(primary)
      const keeperLog = cluster.logPath(primary)
      const logFrom = statSync(keeperLog).size
      record.at = Date.now()
      await primary.namespace.cut([cluster.monitorNamespace.address, standby.host])
      note(
        `${primary.name} cut off from the monitor and ${standby.name}: ${(await primary.namespace.blackholes()).join(', ')}; HAProxy still reaches it`
      )
      // A write sent to the cut-off primary itself must not be acknowledged: its commit waits for a
      // synchronous standby it cannot reach. Sent at once, while it still has connections to give.
      const probe = queryOnce(
        cluster.nodeUrl(primary),
        'CREATE TABLE IF NOT EXISTS chaos_probe (at timestamptz); INSERT INTO chaos_probe VALUES (clock_timestamp())',
        10_000
      ).then(
        () => 'acknowledged',
        (error: unknown) => `not acknowledged (${error instanceof Error ? error.message : String(error)})`
      )
      // Hearing from neither the monitor nor a standby, its keeper demotes it (network_partition_timeout)
      // and stops its PostgreSQL: gone, or answering as read-only. A node too busy to answer is neither.
      // Watched from the cut, so that the report shows whether it was fenced before the standby's promotion.
      let lastSeen = 'nothing yet'
      // Each connection the service gives up on leaves a backend waiting on the cut-off primary.
      let mostWaiting = 0
      const fenced = until(
        'the old primary to stop taking writes',
        async () => {
          if (!alive(postmaster)) return Date.now()
          const [row] = await queryOnce<{ writable: boolean; waiting: number }>(
            cluster.nodeUrl(primary),
            `SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable,
              (SELECT count(*)::int FROM pg_stat_activity WHERE wait_event = 'SyncRep') AS waiting`,
            2000
          ).catch((error: unknown) => {
            lastSeen = `no answer (${error instanceof Error ? error.message : String(error)})`
            throw error
          })
          lastSeen = row?.writable ? 'answered as writable' : 'answered as read-only'
          mostWaiting = Math.max(mostWaiting, row?.waiting ?? 0)
          return row?.writable === false ? Date.now() : undefined
        },
        90_000,
        250
      ).catch(() => undefined)
      const promoted = await newPrimary(topology, primary)
      const promotedAt = Date.now()
      note(
        promoted
          ? `${promoted.name} promoted by pg_auto_failover and writable through HAProxy after ${promotedAt - record.at} ms`
          : 'no failover'
      )
      const probed = await probe
      note(`a write sent to ${primary.name} directly just after the cut: ${probed}`)
      const demoted = await fenced
      // Counts it committed asynchronously from just before the cut until it stopped are lost.
      record.loss = { from: record.at - LOSS_LEAD_MS, to: demoted ?? Date.now() }
      note(
        demoted
          ? `${primary.name} stopped taking writes ${demoted - record.at} ms after the cut, ${demoted <= promotedAt ? 'before' : 'AFTER'} the standby was writable; at most ${mostWaiting} commits seen waiting for the standby`
          : `${primary.name} not seen fenced 90 s after the cut: its postmaster alive, last ${lastSeen}, at most ${mostWaiting} commits seen waiting for the standby`
      )
      if (!demoted) for (const line of keeperDecisions(keeperLog, logFrom)) note(`${primary.name}'s keeper: ${line}`)
      await primary.namespace.heal()
      record.undoneAt = Date.now()
      note(`healed after ${record.undoneAt - record.at} ms`)
      await cluster.waitHealthy(180_000)
      note(`${primary.name} back as a synchronous standby after ${Date.now() - record.at} ms`)
      return sync && promoted !== undefined && demoted !== undefined && probed !== 'acknowledged'
    }
    case 'clock-skew': {
      const ahead = instanceNamed(topology, fault.instance)
      const behind = instanceNamed(topology, fault.behind)
      record.at = Date.now()
      const clocks: NonNullable<FaultRecord['clocks']> = []
      for (const [instance, offsetMs] of [
        [ahead, SKEW_MS],
        [behind, -SKEW_MS]
      ] as const) {
        const from = Date.now()
        const measuredMs = await restartWithClock(topology, instance, offsetMs)
        note(`instance ${instance.name} restarted under libfaketime (${offsetMs} ms): its Date header ${measuredMs} ms`)
        clocks.push({ instance: instance.name, offsetMs, measuredMs, from, to: 0 })
      }
      await sleep(Math.max(0, record.at + (fault.holdMs ?? 15_000) - Date.now()))
      let moved = true
      for (const clock of clocks) {
        const instance = instanceNamed(topology, clock.instance)
        await topology.stopInstance(instance)
        clock.to = Date.now()
        await topology.startInstance(instance, 0)
        const back = await clockOffset(instance)
        note(`instance ${instance.name} restarted with the machine's clock: ${back} ms`)
        // Measured the same way, the two readings share their error: their difference is the skew.
        moved &&= Math.abs(clock.measuredMs - back - clock.offsetMs) < 1500
      }
      record.undoneAt = Date.now()
      record.clocks = clocks
      return moved
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
    if (record.writableAt !== undefined) {
      // A 2xx to a request sent a second after the fault began needed the new primary.
      const after = context.entries.find(
        (entry) => entry.sentAt >= record.at + 1000 && entry.status >= 200 && entry.status < 300
      )
      record.firstOkAfterWritableMs = after ? after.answeredAt - record.writableAt : null
      note(`first 2xx ${record.firstOkAfterWritableMs} ms after the new primary was writable`)
    }
  } catch (error) {
    note(`did not recover: ${error instanceof Error ? error.message : String(error)}`)
  }
}
