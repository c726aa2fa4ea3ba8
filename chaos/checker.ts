// Reads a chaos run's ledger and the pets table afterwards and says which promises held. Pure:
// everything it needs is in the report folder, so a run can be checked again later.
import type { FaultRecord } from './faults.js'
import type { KeyInfo } from './load.js'
import type { LedgerEntry } from './ledger.js'

export interface PetRow {
  id: string
  name: string
  categoryId: string
  status: string | null
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
  admissions: {
    admitted: number
    overAdmitted: number
    overAdmittedAfterDatabaseLoss: number
    underAdmitted: number
    admittedWhileBanned: number
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
const SHOWN_LINES = 10

/**
 * Whose limits a request counts against. Keys today; once keys belong to accounts, the account
 * (and `limitsOf` the account's limits).
 */
export const subjectOf = (entry: Pick<LedgerEntry, 'key'>): string => entry.key

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

/**
 * The span of instants at which the request may have been counted: from sending to answer, later by
 * the lead of an instance whose clock ran ahead. That instance moves a subject's windows forward
 * early, and since a window only moves forward the other instances then count into it too: so any
 * request while its clock ran ahead, and for as long again after, may be counted that much later.
 */
function countedBetween(entry: LedgerEntry, faults: FaultRecord[]): [number, number] {
  let lead = 0
  for (const { clock } of faults) {
    if (clock && entry.answeredAt >= clock.from && entry.sentAt <= clock.to + clock.aheadMs) {
      lead = Math.max(lead, clock.aheadMs)
    }
  }
  return [entry.sentAt, entry.answeredAt + lead]
}

/**
 * The fewest admissions that cannot fit under `limit` in any window, each admission placed in a
 * window its span touches: windows in order, each filled with the admissions whose spans end soonest.
 */
export function overAdmissions(spans: { entry: LedgerEntry; first: number; last: number }[], limit: number) {
  const over: { entry: LedgerEntry; window: number }[] = []
  const pending = [...spans].sort((a, b) => a.first - b.first)
  const open: typeof spans = []
  const windows = [...new Set(spans.flatMap((span) => [span.first, span.last]))].sort((a, b) => a - b)
  let next = 0
  for (const window of windows) {
    while (next < pending.length && pending[next]!.first <= window) open.push(pending[next++]!)
    open.sort((a, b) => a.last - b.last)
    open.splice(0, limit)
    for (let i = open.length - 1; i >= 0; i--) {
      if (open[i]!.last <= window) over.push({ entry: open.splice(i, 1)[0]!.entry, window })
    }
  }
  return over
}

export function check(input: {
  entries: LedgerEntry[]
  keys: KeyInfo[]
  pets: PetRow[]
  faults: FaultRecord[]
}): CheckResult {
  const { entries, pets, faults } = input
  const limitsOf = new Map(input.keys.map((key) => [key.prefix, key]))
  const violations: Violation[] = []
  const violation = (invariant: string, lines: LedgerEntry[], detail?: string[]) => {
    if (lines.length || detail?.length) {
      violations.push({ invariant, count: lines.length || detail!.length, lines: lines.slice(0, SHOWN_LINES), detail })
    }
  }

  // Faults: each must have happened, and the service must have come back from it.
  for (const fault of faults) {
    const evidence = [`injected at ${new Date(fault.at).toISOString()}`, ...fault.evidence]
    if (!fault.tookEffect) violation(`fault ${fault.kind} did not take effect`, [], evidence)
    else if (fault.recoveredMs === null) violation(`service did not recover from ${fault.kind}`, [], evidence)
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

  // Admissions per subject and window against its limit.
  const admitted = entries.filter(isAdmitted)
  const bySubject = new Map<string, LedgerEntry[]>()
  for (const entry of entries) bySubject.set(subjectOf(entry), [...(bySubject.get(subjectOf(entry)) ?? []), entry])
  const losses = faults.filter((fault) => fault.databaseLoss)
  const over: LedgerEntry[] = []
  const overAfterLoss: LedgerEntry[] = []
  const underAdmitted: LedgerEntry[] = []
  for (const [subject, own] of bySubject) {
    const key = limitsOf.get(subject)
    if (!key) continue
    const ownAdmitted = own.filter(isAdmitted)
    for (const window of WINDOWS) {
      const spans = ownAdmitted.map((entry) => {
        const [from, to] = countedBetween(entry, faults)
        return { entry, first: Math.floor(from / window.ms), last: Math.floor(to / window.ms) }
      })
      for (const { entry, window: index } of overAdmissions(spans, window.limit(key))) {
        const start = index * window.ms
        const afterLoss = losses.some(
          (loss) => loss.at >= start && loss.at < start + window.ms && entry.sentAt >= loss.at - 1000
        )
        ;(afterLoss ? overAfterLoss : over).push(entry)
      }
    }
    // A refusal for a rate limit while every window it may fall in had budget left.
    for (const refused of own.filter((entry) => entry.status === 429 && entry.code === 'rate_limited')) {
      const [from, to] = countedBetween(refused, faults)
      const budgetLeft = WINDOWS.every((window) => {
        const [first, last] = [Math.floor(from / window.ms), Math.floor(to / window.ms)]
        for (let index = first; index <= last; index++) {
          const mayCount = ownAdmitted.filter((entry) => {
            const [a, b] = countedBetween(entry, faults)
            return Math.floor(a / window.ms) <= index && Math.floor(b / window.ms) >= index
          }).length
          if (mayCount >= window.limit(key)) return false
        }
        return true
      })
      if (budgetLeft) underAdmitted.push(refused)
    }
  }
  violation('admissions over a limit outside a database loss', over)

  // A banned key is refused until its ban ends: Retry-After, less its rounding, from the refusal's sending.
  const whileBanned: LedgerEntry[] = []
  for (const own of bySubject.values()) {
    const bans = own.filter((entry) => entry.code === 'key_banned')
    for (const entry of own.filter(isAdmitted)) {
      const banned = bans.some((ban) => {
        const endsAfter = ban.sentAt + (Number(ban.headers['retry-after'] ?? 1) - 1) * 1000
        return entry.sentAt > ban.answeredAt && entry.answeredAt < endsAfter
      })
      const afterLoss = losses.some((loss) => entry.sentAt >= loss.at - 1000)
      if (banned && !afterLoss) whileBanned.push(entry)
    }
  }
  violation('admissions while the key was banned', whileBanned)

  // 5xx and timeouts: none outside a fault; inside one, each a 503 with Retry-After.
  const errors = entries.filter(isError)
  const outside = errors.filter((entry) => !duringFault(entry))
  violation('5xx or timeouts outside a fault', outside)
  const insideBad = errors.filter(
    (entry) => duringFault(entry) && !(entry.status === 503 && entry.headers['retry-after'] !== undefined)
  )
  violation('5xx or timeouts inside a fault that were not a 503 with Retry-After', insideBad)

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
    admissions: {
      admitted: admitted.length,
      overAdmitted: over.length,
      overAdmittedAfterDatabaseLoss: overAfterLoss.length,
      underAdmitted: underAdmitted.length,
      admittedWhileBanned: whileBanned.length
    },
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
