// Reads a chaos run's ledger, the pets table and the read-back afterwards and says which promises
// held. Pure: everything it needs is in the report folder, so a run can be checked again later.
// It excuses nothing but the documented loss of counts when the primary dies or is cut off.
import type { FaultRecord } from './faults.js'
import type { KeyInfo } from './load.js'
import type { LedgerEntry } from './ledger.js'
import type { ReadBack } from './readback.js'
import type { ScheduledFault } from './schedule.js'
import type { UpgradeRecord } from './upgrade.js'

export interface PetRow {
  id: string
  name: string
  categoryId: string
  status: string | null
}

/** A row of idempotency_keys with its key's prefix: which Idempotency-Key of which key made which pet. */
export interface IdempotencyRow {
  key: string
  prefix: string
  petId: string
}

/** One database node's copy of the tables the run writes, after the standby caught up. */
export interface NodeCopy {
  name: string
  role: string
  /** The row count and an md5 of every row in id order, per table. */
  tables: Record<string, { rows: number; md5: string }>
}

/** A calendar minute of the load that no fault's window touches, and what it saw. */
export interface QuietMinute {
  minute: string
  created: number
  rateLimited: number
  banned: number
}

export interface Violation {
  invariant: string
  count: number
  /** The ledger lines that show it (the first few). */
  lines: LedgerEntry[]
  detail?: string[]
}

export interface ChaosReport {
  faults: (Pick<FaultRecord, 'kind' | 'at' | 'tookEffect' | 'recoveredMs'> &
    Omit<FaultRecord, 'kind' | 'at' | 'tookEffect' | 'recoveredMs'>)[]
  requests: { total: number; byStatus: Record<string, number> }
  creates: { acknowledged: number; missing: number; duplicated: number }
  reads: {
    /** GETs of an acknowledged pet answered 404 during the run. */
    notFound: number
    /** After the run: pets read back by id, and those not found as acknowledged, by id or in the list. */
    readBack: { checked: number; wrongById: number; notListed: number; listComplete: boolean } | null
  }
  admissions: {
    admitted: number
    /** Over a limit in a window that holds no loss of counts: must be 0. */
    overAdmitted: number
    /** Over a limit in a window that holds a loss of counts, within the loss bound. */
    overAdmittedAfterDatabaseLoss: number
    /** Over a limit in a window that holds a loss of counts, past the loss bound: must be 0. */
    overAdmittedBeyondLossBound: number
    /** 429 rate_limited while the ledger shows budget left. */
    underAdmitted: number
    /** Of those, with more units unaccounted for than the under-admission bound of their window: must be 0. */
    underAdmittedBeyondBound: number
    admittedWhileBanned: number
  }
  /** Liveness: the run must have seen each of these at least once. */
  seen: { created: number; rateLimited: number; banned: number }
  /** Per role: its accounts, and how many were refused at their minute limit and at their day limit. */
  limitsReached: Partial<Record<KeyInfo['role'], { accounts: number; atMinuteLimit: number; atDayLimit: number }>>
  /** Liveness: each whole minute of the load without a fault must show a 201, a 429 and a ban. */
  quietMinutes: QuietMinute[]
  /** idempotency_keys against the ledger: rows, and those that disagree with it. */
  idempotency: { rows: number; disagreeing: number } | null
  /** The two database nodes' copies after the run: whether they held the same rows. */
  nodes: { copies: NodeCopy[]; same: boolean } | null
  /**
   * A rolling upgrade: its migration's length, the 5xx and timeouts while it ran (counted in
   * errorsOutsideFaults too), and the answers of each release's instances on the new schema.
   */
  upgrade?: UpgradeRecord & {
    migrationMs: number | null
    errorsWhileMigrating: number
    answeredByPreviousOnNewSchema: number
    answeredByNew: number
  }
  errorsOutsideFaults: number
  /** 5xx and timeouts inside a fault's window that were not a 503 with Retry-After. */
  errorsInsideFaultsWithoutRetryAfter: number
  slowestAdmittedMs: number
  slowestAdmittedOutsideFaultsMs: number
  violations: { invariant: string; count: number; lines: number[] }[]
}

export interface CheckResult {
  report: ChaosReport
  /** Each broken invariant with the ledger lines that show it. */
  violations: Violation[]
}

/** A fault's window ends this long after the service was whole again: answers already on their way. */
const FAULT_GRACE_MS = 2000
/** The most from the new primary being writable to the service's first 2xx after the primary died (docs/deploy.md). */
const FIRST_OK_AFTER_WRITABLE_MS = 3000
const SHOWN_LINES = 10
/**
 * The harness's clock is the database's (PostgreSQL runs on the same machine, never under
 * libfaketime; the run measures the difference at its start): a decision is placed between the
 * request's sending and its answer, widened by this much.
 */
const CLOCK_SLACK_MS = 50
/** The faults before which the run must have seen a synchronous standby. */
const CHANGES_PRIMARY = new Set<FaultRecord['kind']>(['kill-primary', 'switchover', 'partition-primary'])
/** Instances that may hold a lease of an account's units at once. */
const INSTANCES = 3

/** Whose limits a request counts against: the account of its key, whose windows its keys share. */
export const subjectOf = (entry: Pick<LedgerEntry, 'key'>, keys: Map<string, KeyInfo>): string | undefined =>
  keys.get(entry.key)?.accountId

/**
 * The most units an instance leases ahead for an account with this limit (src/limits/lease-policy.ts:
 * a thirty-second of what is left, at most 1,000): the units a lost count or a killed instance may
 * take from a window without a ledger line to show for it.
 */
export const leaseAllowance = (limit: number) => Math.min(1000, Math.floor(limit / 32))

/** A request that passed the limiter: answered by the route, whatever the route said. */
const isAdmitted = (entry: LedgerEntry) =>
  entry.status >= 200 && entry.status < 500 && entry.status !== 401 && entry.status !== 403 && entry.status !== 429

const isError = (entry: LedgerEntry) => entry.status === 0 || entry.status >= 500

interface Window {
  name: 'minute' | 'day'
  ms: number
  limit: (key: KeyInfo) => number
}

const WINDOWS: Window[] = [
  { name: 'minute', ms: 60_000, limit: (key) => key.perMinute },
  { name: 'day', ms: 86_400_000, limit: (key) => key.perDay }
]

/** The span of instants, in the database's time, at which the request may have been decided. */
const decidedBetween = (entry: LedgerEntry): [number, number] => [
  entry.sentAt - CLOCK_SLACK_MS,
  entry.answeredAt + CLOCK_SLACK_MS
]

const touches = (entry: LedgerEntry, from: number, to: number) => {
  const [a, b] = decidedBetween(entry)
  return a < to && b >= from
}

/**
 * The fewest admissions that cannot fit in any window, each placed in a window its span touches and
 * each window holding at most `capacity(window)`: windows in order, each filled with the admissions
 * whose spans end soonest (which leaves the fewest over). Each is named with the last window it
 * could have gone in.
 */
export function overAdmissions(
  spans: { entry: LedgerEntry; first: number; last: number }[],
  capacity: (window: number) => number
) {
  const over: { entry: LedgerEntry; window: number }[] = []
  const pending = [...spans].sort((a, b) => a.first - b.first)
  const open: typeof spans = []
  const windows = [...new Set(spans.flatMap((span) => [span.first, span.last]))].sort((a, b) => a - b)
  let next = 0
  for (const window of windows) {
    while (next < pending.length && pending[next]!.first <= window) open.push(pending[next++]!)
    open.sort((a, b) => a.last - b.last)
    open.splice(0, capacity(window))
    while (open.length > 0 && open[0]!.last <= window) over.push({ entry: open.shift()!.entry, window })
  }
  return over
}

/**
 * The loss bound of one account's window: when counts committed asynchronously are lost (the primary
 * died, was cut off and demoted, or was switched over), the account may be admitted again for what it was admitted
 * while they were committed, and for the units instances held leased then. Nothing else.
 */
function lossBound(
  own: LedgerEntry[],
  losses: { from: number; to: number }[],
  window: { start: number; ms: number },
  limit: number
): number {
  const inWindow = losses.filter((loss) => loss.from < window.start + window.ms && loss.to >= window.start)
  if (!inWindow.length) return 0
  const lost = own.filter((entry) => isAdmitted(entry) && inWindow.some((loss) => touches(entry, loss.from, loss.to)))
  return lost.length + inWindow.length * INSTANCES * leaseAllowance(limit)
}

/**
 * The under-admission bound of one account's window, in units: a refusal while the ledger shows
 * budget left is explained only by units counted for requests whose outcome the ledger does not know (no answer, a
 * 5xx after the count, or an instance that failed before answering and that nginx passed the request
 * on from) and by units held leased by the instances.
 */
function underBound(own: LedgerEntry[], window: { start: number; ms: number }, limit: number): number {
  let unknown = 0
  for (const entry of own) {
    if (!touches(entry, window.start, window.start + window.ms)) continue
    unknown += (isError(entry) ? 1 : 0) + Math.max(0, (entry.upstreams ?? 1) - 1)
  }
  return unknown + INSTANCES * leaseAllowance(limit)
}

export function check(input: {
  entries: LedgerEntry[]
  keys: KeyInfo[]
  pets: PetRow[]
  faults: FaultRecord[]
  /** What the run meant to do: each scheduled fault must have a record, and have taken effect. */
  schedule?: ScheduledFault[]
  /** Acknowledged pets read back through the API after the run; null when it could not be done. */
  readBack?: ReadBack | null
  /** The database's clock less the harness's, measured at the start of the run. */
  databaseClockOffsetMs?: number
  /** When the load began and ended: its whole minutes without a fault must each show liveness. */
  load: { from: number; to: number }
  /** idempotency_keys read from the primary after the run; null when it could not be read. */
  idempotency?: IdempotencyRow[] | null
  /** Each database node's copy after the standby caught up; null when they could not be read. */
  nodes?: NodeCopy[] | null
  /** A rolling upgrade: the releases and the migration; its faults are the replacements. */
  upgrade?: UpgradeRecord
}): CheckResult {
  const { entries, pets, faults } = input
  const keys = new Map(input.keys.map((key) => [key.prefix, key]))
  const violations: Violation[] = []
  const violation = (invariant: string, lines: LedgerEntry[], detail?: string[]) => {
    if (lines.length || detail?.length) {
      violations.push({ invariant, count: lines.length || detail!.length, lines: lines.slice(0, SHOWN_LINES), detail })
    }
  }

  const offset = input.databaseClockOffsetMs
  if (offset !== undefined && Math.abs(offset) > CLOCK_SLACK_MS) {
    violation(
      'the harness clock is not the database clock',
      [],
      [`the database's clock is ${offset} ms from the harness's`]
    )
  }

  // Faults: each scheduled one must have run and happened, and the service must have come back from it.
  for (const scheduled of input.schedule ?? []) {
    if (!faults.some((fault) => fault.id === scheduled.id)) {
      violation(`scheduled fault #${scheduled.id} ${scheduled.kind} never ran`, [], [JSON.stringify(scheduled)])
    }
  }
  for (const fault of faults) {
    const evidence = [`#${fault.id} injected at ${new Date(fault.at).toISOString()}`, ...fault.evidence]
    if (!fault.tookEffect) violation(`fault ${fault.kind} did not take effect`, [], evidence)
    else if (fault.recoveredMs === null) violation(`service did not recover from ${fault.kind}`, [], evidence)
    if (fault.replication && !fault.replication.sync) {
      violation(`no synchronous standby before ${fault.kind}`, [], evidence)
    }
    if (CHANGES_PRIMARY.has(fault.kind) && !fault.replication) {
      violation(`no check of the synchronous standby before ${fault.kind}`, [], evidence)
    }
    if (
      fault.writableAt !== undefined &&
      !(fault.firstOkAfterWritableMs != null && fault.firstOkAfterWritableMs <= FIRST_OK_AFTER_WRITABLE_MS)
    ) {
      violation(
        `first 2xx more than ${FIRST_OK_AFTER_WRITABLE_MS / 1000} s after the new primary was writable`,
        [],
        [`#${fault.id} ${fault.kind}: ${fault.firstOkAfterWritableMs ?? 'no'} ms`, ...fault.evidence]
      )
    }
  }
  const windows = faults.map((fault) => ({
    from: fault.at,
    to: Math.max(fault.undoneAt, fault.at + (fault.recoveredMs ?? Infinity)) + FAULT_GRACE_MS
  }))
  const duringFault = (entry: LedgerEntry) =>
    windows.some((window) => entry.answeredAt >= window.from && entry.sentAt <= window.to)

  // Creates: every acknowledged pet is stored, under one id, and no Idempotency-Key made two pets.
  const acknowledged = new Map<string, LedgerEntry[]>()
  for (const entry of entries) {
    if (entry.status === 201 && entry.idempotencyKey && entry.pet) {
      acknowledged.set(entry.idempotencyKey, [...(acknowledged.get(entry.idempotencyKey) ?? []), entry])
    }
  }
  const petsById = new Map(pets.map((pet) => [pet.id, pet]))
  const missing = [...acknowledged.values()].flat().filter((entry) => {
    const stored = petsById.get(entry.pet!.id)
    return stored?.name !== entry.pet!.name || stored.categoryId !== entry.pet!.categoryId
  })
  violation('acknowledged creates missing from the database', missing)
  const petsByName = new Map<string, PetRow[]>()
  for (const pet of pets) petsByName.set(pet.name, [...(petsByName.get(pet.name) ?? []), pet])
  const twice = [...petsByName.entries()].filter(([, rows]) => rows.length > 1)
  const twiceAcknowledged = [...acknowledged.values()].filter((acks) => new Set(acks.map((a) => a.pet!.id)).size > 1)
  violation(
    'pets created twice for one Idempotency-Key',
    [...twiceAcknowledged.flat(), ...twice.flatMap(([name]) => entries.filter((e) => e.pet?.name === name))],
    twice.map(([name, rows]) => `${name}: ids ${rows.map((row) => row.id).join(', ')}`)
  )

  // Reads: a GET of a pet acknowledged before it was sent must find it.
  const acknowledgedAt = new Map<string, number>()
  for (const entry of [...acknowledged.values()].flat()) {
    const at = acknowledgedAt.get(entry.pet!.id)
    if (at === undefined || entry.answeredAt < at) acknowledgedAt.set(entry.pet!.id, entry.answeredAt)
  }
  const notFound = entries.filter((entry) => {
    const id = entry.method === 'GET' ? /^\/v1\/pets\/(\d+)$/.exec(entry.path)?.[1] : undefined
    const at = id === undefined ? undefined : acknowledgedAt.get(id)
    return entry.status === 404 && at !== undefined && entry.sentAt > at
  })
  violation('acknowledged pets answered 404', notFound)
  const readBack = input.readBack
  if (readBack === null) violation('acknowledged pets not read back after the run', [], ['the read-back did not run'])
  if (readBack) {
    violation(
      'acknowledged pets not read back by id as acknowledged',
      [],
      readBack.byId.map(
        ({ expected, status, found }) => `${JSON.stringify(expected)}: ${status} ${JSON.stringify(found)}`
      )
    )
    violation(
      'acknowledged pets missing from the list, or listed otherwise',
      [],
      readBack.notListed.map(({ expected, found }) => `${JSON.stringify(expected)}: ${JSON.stringify(found)}`)
    )
    if (!readBack.listComplete) violation('the list of pets could not be read to its end', [], ['a page failed'])
    if (readBack.checked !== acknowledgedAt.size) {
      violation(
        'acknowledged pets not read back after the run',
        [],
        [`${readBack.checked} read back of ${acknowledgedAt.size} acknowledged`]
      )
    }
  }

  // Admissions per account and window against its limit, in the database's time.
  const admitted = entries.filter(isAdmitted)
  const byAccount = new Map<string, LedgerEntry[]>()
  for (const entry of entries) {
    const account = subjectOf(entry, keys)
    if (account !== undefined) byAccount.set(account, [...(byAccount.get(account) ?? []), entry])
  }
  const losses = faults.flatMap((fault) => (fault.databaseLoss && fault.loss ? [fault.loss] : []))
  const over: LedgerEntry[] = []
  const overWithinLoss: LedgerEntry[] = []
  const overBeyondLoss: LedgerEntry[] = []
  const overDetail: string[] = []
  const beyondDetail: string[] = []
  const underAdmitted: LedgerEntry[] = []
  const underBeyond: LedgerEntry[] = []
  const underDetail: string[] = []
  for (const [account, own] of byAccount) {
    const limits = keys.get(own[0]!.key)!
    const ownAdmitted = own.filter(isAdmitted)
    for (const window of WINDOWS) {
      const limit = window.limit(limits)
      const spans = ownAdmitted.map((entry) => {
        const [from, to] = decidedBetween(entry)
        return { entry, first: Math.floor(from / window.ms), last: Math.floor(to / window.ms) }
      })
      const bounds = new Map<number, number>()
      const bound = (index: number) => {
        if (!bounds.has(index)) {
          bounds.set(index, lossBound(own, losses, { start: index * window.ms, ms: window.ms }, limit))
        }
        return bounds.get(index)!
      }
      // Over the limit alone, and over the limit with what each window's database losses allow: the
      // difference is what the losses explain.
      const excess = overAdmissions(spans, (index) => limit + bound(index))
      const unexplained = new Set(excess.map(({ entry }) => entry))
      const overLimit = overAdmissions(spans, () => limit)
      overWithinLoss.push(
        ...overLimit
          .map(({ entry }) => entry)
          .filter((entry) => !unexplained.has(entry))
          .slice(0, overLimit.length - excess.length)
      )
      const byIndex = new Map<number, LedgerEntry[]>()
      for (const { entry, window: index } of excess) byIndex.set(index, [...(byIndex.get(index) ?? []), entry])
      for (const [index, entries] of byIndex) {
        const at = `account ${account}, ${window.name} of ${new Date(index * window.ms).toISOString()}, limit ${limit}`
        if (bound(index) === 0) {
          over.push(...entries)
          overDetail.push(`${at}: ${entries.length} over`)
        } else {
          overBeyondLoss.push(...entries)
          beyondDetail.push(`${at}: ${entries.length} over, loss bound ${bound(index)}`)
        }
      }
    }
    // A refusal for a rate limit while every window it may fall in had budget left: the units the
    // ledger cannot account for are what the window still had left by its admissions.
    const under = new Map<number, { refused: LedgerEntry; left: number }[]>()
    for (const refused of own.filter((entry) => entry.status === 429 && entry.code === 'rate_limited')) {
      const [from, to] = decidedBetween(refused)
      let left = Infinity
      for (const window of WINDOWS) {
        const [first, last] = [Math.floor(from / window.ms), Math.floor(to / window.ms)]
        for (let index = first; index <= last; index++) {
          const mayCount = ownAdmitted.filter((entry) => {
            const [a, b] = decidedBetween(entry)
            return Math.floor(a / window.ms) <= index && Math.floor(b / window.ms) >= index
          }).length
          left = Math.min(left, window.limit(limits) - mayCount)
        }
      }
      if (left > 0) {
        underAdmitted.push(refused)
        const minute = Math.floor(to / 60_000)
        under.set(minute, [...(under.get(minute) ?? []), { refused, left }])
      }
    }
    for (const [minute, refusals] of under) {
      const start = minute * 60_000
      const bound = underBound(own, { start, ms: 60_000 }, limits.perMinute)
      const past = refusals.filter(({ left }) => left > bound)
      if (past.length) {
        underBeyond.push(...past.map(({ refused }) => refused))
        underDetail.push(
          `account ${account}, minute of ${new Date(start).toISOString()}: refused with up to ${Math.max(...past.map(({ left }) => left))} units unaccounted for, bound ${bound}`
        )
      }
    }
  }
  if (over.length) violation('admissions over a limit outside a database loss', over, overDetail)
  if (overBeyondLoss.length) violation('admissions over a limit past the loss bound', overBeyondLoss, beyondDetail)
  if (underBeyond.length) {
    violation('refusals with budget left past the under-admission bound', underBeyond, underDetail)
  }

  // A banned key (bans belong to a key, not to its account) is refused until its ban ends:
  // Retry-After, less its rounding, from the refusal's sending. No excuse, a database loss included.
  const byKey = new Map<string, LedgerEntry[]>()
  for (const entry of entries) byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry])
  const whileBanned: LedgerEntry[] = []
  for (const own of byKey.values()) {
    const bans = own.filter((entry) => entry.code === 'key_banned')
    for (const entry of own.filter(isAdmitted)) {
      const banned = bans.some((ban) => {
        const endsAfter = ban.sentAt + (Number(ban.headers['retry-after'] ?? 1) - 1) * 1000
        return entry.sentAt > ban.answeredAt + CLOCK_SLACK_MS && entry.answeredAt < endsAfter - CLOCK_SLACK_MS
      })
      if (banned) whileBanned.push(entry)
    }
  }
  violation('admissions while the key was banned', whileBanned)

  // Liveness: a run that never created, refused or banned shows nothing of the limiter.
  const seen = {
    created: entries.filter((entry) => entry.status === 201).length,
    rateLimited: entries.filter((entry) => entry.status === 429 && entry.code === 'rate_limited').length,
    banned: entries.filter((entry) => entry.code === 'key_banned').length
  }
  for (const [what, count] of Object.entries(seen)) {
    if (count === 0) {
      violation(`no ${what === 'created' ? '201' : what === 'rateLimited' ? '429' : 'ban'} in the run`, [], [what])
    }
  }

  // The accounts driven to their limits must have reached them: each daily one its day limit, each
  // leased one (leases of a thirty-second of its minute limit) its minute limit.
  const reached: ChaosReport['limitsReached'] = {}
  const accounts = new Map(input.keys.map((key) => [key.accountId, key]))
  for (const [account, limits] of accounts) {
    const own = byAccount.get(account) ?? []
    const refusedAt = (limit: number) =>
      own.some((entry) => entry.code === 'rate_limited' && entry.headers['x-ratelimit-limit'] === String(limit))
    const role = (reached[limits.role] ??= { accounts: 0, atMinuteLimit: 0, atDayLimit: 0 })
    role.accounts++
    const [minute, day] = [refusedAt(limits.perMinute), refusedAt(limits.perDay)]
    if (minute) role.atMinuteLimit++
    if (day) role.atDayLimit++
    if ((limits.role === 'daily' && !day) || (limits.role === 'leased' && !minute)) {
      violation(
        `a ${limits.role} account that never reached its ${limits.role === 'daily' ? 'day' : 'minute'} limit`,
        [],
        [`account ${account}: ${own.length} requests, ${own.filter(isAdmitted).length} admitted`]
      )
    }
  }

  // Liveness again, minute by minute: each whole minute of the load that no fault's window touches.
  const quietMinutes: QuietMinute[] = []
  const firstMinute = Math.ceil(input.load.from / 60_000)
  const lastMinute = Math.floor(input.load.to / 60_000) - 1
  for (let minute = firstMinute; minute <= lastMinute; minute++) {
    const [from, to] = [minute * 60_000, (minute + 1) * 60_000]
    if (windows.some((window) => window.from < to && window.to >= from)) continue
    const own = entries.filter((entry) => entry.answeredAt >= from && entry.answeredAt < to)
    const quiet = {
      minute: new Date(from).toISOString(),
      created: own.filter((entry) => entry.status === 201).length,
      rateLimited: own.filter((entry) => entry.status === 429 && entry.code === 'rate_limited').length,
      banned: own.filter((entry) => entry.code === 'key_banned').length
    }
    quietMinutes.push(quiet)
    const absent = [quiet.created ? '' : '201', quiet.rateLimited ? '' : '429', quiet.banned ? '' : 'ban'].filter(
      Boolean
    )
    if (absent.length) {
      violation(
        'a minute without faults that lacked a 201, a 429 or a ban',
        [],
        [`${quiet.minute}: no ${absent.join(', no ')}`]
      )
    }
  }

  if (!quietMinutes.length) violation('no whole minute of the load without a fault', [], ['liveness not shown'])

  // idempotency_keys against the ledger: each acknowledged create has its row, under its key, naming its
  // pet; each row was sent by the run under that key, and names a pet that is stored.
  let idempotency: ChaosReport['idempotency'] = null
  if (input.idempotency === null) violation('idempotency_keys not read after the run', [], ['the query failed'])
  if (input.idempotency) {
    const rows = new Map(input.idempotency.map((row) => [row.key, row]))
    const sent = new Map<string, string>()
    for (const entry of entries) {
      if (entry.method === 'POST' && entry.idempotencyKey) sent.set(entry.idempotencyKey, entry.key)
    }
    const withoutRow = [...acknowledged.values()].flat().filter((entry) => {
      const row = rows.get(entry.idempotencyKey!)
      return row?.prefix !== entry.key || row.petId !== entry.pet!.id
    })
    violation('acknowledged creates without their idempotency key, or with another pet', withoutRow)
    const unknown = input.idempotency.filter((row) => sent.get(row.key) !== row.prefix || !petsById.has(row.petId))
    violation(
      'idempotency keys the ledger never sent, or naming a pet that is not stored',
      [],
      unknown.map((row) => JSON.stringify(row))
    )
    const keyed = new Set(input.idempotency.map((row) => row.petId))
    const unkeyed = pets.filter((pet) => pet.name.startsWith('chaos ') && !keyed.has(pet.id))
    violation(
      'pets without an idempotency key',
      [],
      unkeyed.map((pet) => JSON.stringify(pet))
    )
    idempotency = { rows: input.idempotency.length, disagreeing: withoutRow.length + unknown.length + unkeyed.length }
  }

  // Both database nodes hold the same rows once the standby has caught up.
  let nodes: ChaosReport['nodes'] = null
  if (input.nodes === null) violation('the database nodes not compared after the run', [], ['a node could not be read'])
  if (input.nodes) {
    const [first, ...others] = input.nodes
    const differing = others.flatMap((other) =>
      Object.entries(first?.tables ?? {})
        .filter(([table, copy]) => other.tables[table]?.md5 !== copy.md5)
        .map(
          ([table, copy]) =>
            `${table}: ${first!.name} (${first!.role}) ${copy.rows} rows, md5 ${copy.md5}; ${other.name} (${other.role}) ${other.tables[table]?.rows ?? 'no'} rows, md5 ${other.tables[table]?.md5 ?? 'none'}`
        )
    )
    if (input.nodes.length < 2) differing.push(`${input.nodes.length} node(s) read`)
    violation('the database nodes hold different rows', [], differing)
    nodes = { copies: input.nodes, same: differing.length === 0 }
  }

  // 5xx and timeouts: none outside a fault; inside one, each a 503 with Retry-After.
  const errors = entries.filter(isError)
  const outside = errors.filter((entry) => !duringFault(entry))
  violation('5xx or timeouts outside a fault', outside)
  const insideBad = errors.filter(
    (entry) => duringFault(entry) && !(entry.status === 503 && entry.headers['retry-after'] !== undefined)
  )
  violation('5xx or timeouts inside a fault that were not a 503 with Retry-After', insideBad)

  // A rolling upgrade: the migration succeeded, is no fault's window, and both releases served on the new schema.
  let upgrade: ChaosReport['upgrade']
  if (input.upgrade) {
    const { migration } = input.upgrade
    if (!migration?.ok) {
      violation("the new release's migrations failed", [], [migration ? migration.output : 'they never ran'])
    }
    const replacedAt = new Map(
      faults.filter((fault) => fault.kind === 'replace-instance').map((fault) => [fault.target, fault])
    )
    const answered = entries.filter((entry) => entry.instance !== null && entry.status !== 0)
    // Sent after the migration, answered before the instance's replacement began: the previous release on the new schema.
    const byPrevious = migration
      ? answered.filter((entry) => {
          const replaced = replacedAt.get(`instance ${entry.instance}`)
          return entry.sentAt > migration.endedAt && entry.answeredAt < (replaced?.at ?? Infinity)
        })
      : []
    const byNew = answered.filter((entry) => {
      const replaced = replacedAt.get(`instance ${entry.instance}`)
      return replaced !== undefined && entry.sentAt > replaced.undoneAt
    })
    if (migration?.ok && !byPrevious.length) {
      violation('the previous release answered nothing on the new schema', [], [`migrated at ${migration.endedAt}`])
    }
    upgrade = {
      ...input.upgrade,
      migrationMs: migration ? migration.endedAt - migration.at : null,
      errorsWhileMigrating: migration
        ? errors.filter((entry) => entry.answeredAt >= migration.at && entry.sentAt <= migration.endedAt).length
        : 0,
      answeredByPreviousOnNewSchema: byPrevious.length,
      answeredByNew: byNew.length
    }
  }

  const slowest = (list: LedgerEntry[]) => Math.max(0, ...list.map((entry) => entry.answeredAt - entry.sentAt))
  const byStatus: Record<string, number> = {}
  for (const entry of entries) {
    const label = entry.status === 0 ? (entry.error ?? 'none') : String(entry.status)
    byStatus[label] = (byStatus[label] ?? 0) + 1
  }
  const report: ChaosReport = {
    faults: faults.map((fault) => ({ ...fault })),
    requests: { total: entries.length, byStatus },
    creates: {
      acknowledged: acknowledged.size,
      missing: missing.length,
      duplicated: twice.length + twiceAcknowledged.length
    },
    reads: {
      notFound: notFound.length,
      readBack: readBack
        ? {
            checked: readBack.checked,
            wrongById: readBack.byId.length,
            notListed: readBack.notListed.length,
            listComplete: readBack.listComplete
          }
        : null
    },
    admissions: {
      admitted: admitted.length,
      overAdmitted: over.length,
      overAdmittedAfterDatabaseLoss: overWithinLoss.length,
      overAdmittedBeyondLossBound: overBeyondLoss.length,
      underAdmitted: underAdmitted.length,
      underAdmittedBeyondBound: underBeyond.length,
      admittedWhileBanned: whileBanned.length
    },
    seen,
    limitsReached: reached,
    quietMinutes,
    idempotency,
    nodes,
    ...(upgrade ? { upgrade } : {}),
    errorsOutsideFaults: outside.length,
    errorsInsideFaultsWithoutRetryAfter: insideBad.length,
    slowestAdmittedMs: slowest(admitted),
    slowestAdmittedOutsideFaultsMs: slowest(admitted.filter((entry) => !duringFault(entry))),
    violations: violations.map(({ invariant, count, lines }) => ({
      invariant,
      count,
      lines: lines.map((entry) => entry.line)
    }))
  }
  return { report, violations }
}
