import { describe, expect, it } from 'vitest'
import { check, leaseAllowance, overAdmissions, subjectOf, type PetRow } from '../../../chaos/checker.js'
import type { FaultRecord } from '../../../chaos/faults.js'
import type { KeyInfo } from '../../../chaos/load.js'
import type { LedgerEntry } from '../../../chaos/ledger.js'
import type { ReadBack } from '../../../chaos/readback.js'
import { parsePetsCsv, petsCsv } from '../../../chaos/report.js'

// 2026-11-25 12:00:00 UTC, the start of a minute.
const T = Date.UTC(2026, 10, 25, 12, 0, 0)
const KEY: KeyInfo = {
  prefix: 'ask_AAAAAAAA',
  accountId: '1',
  plan: 'free',
  perMinute: 3,
  perDay: 1000,
  role: 'greedy'
}
/** A second key of the same account: the account's windows are shared. */
const SIBLING: KeyInfo = { ...KEY, prefix: 'ask_BBBBBBBB' }
/** An account of its own, with a limit of one a minute, that shows the liveness the checker asks for. */
const LIVELY: KeyInfo = { ...KEY, prefix: 'ask_LLLLLLLL', accountId: '9', perMinute: 1 }

let line = 0
function entry(fields: Partial<LedgerEntry> & { sentAt: number }): LedgerEntry {
  return {
    line: ++line,
    answeredAt: fields.sentAt + 10,
    instance: 'a',
    method: 'GET',
    path: '/v1/pets?limit=5',
    key: KEY.prefix,
    idempotencyKey: null,
    attempt: 1,
    status: 200,
    headers: {},
    ...fields
  }
}

/** A create acknowledged at T + 1 s: pet `id`, named after its Idempotency-Key as the run names them. */
const created = (id: string, key: string) =>
  entry({
    sentAt: T + 1000,
    method: 'POST',
    path: '/v1/pets',
    status: 201,
    idempotencyKey: key,
    pet: { id, name: `chaos ${key}`, categoryId: '1', status: 'available' }
  })

const LIVELY_PET: PetRow = { id: '100', name: 'chaos live', categoryId: '1', status: 'available' }

/** A 201, a 429 and a ban on an account of their own, far from the entries under test. */
const liveness = () => [
  entry({
    sentAt: T - 600_000,
    key: LIVELY.prefix,
    method: 'POST',
    path: '/v1/pets',
    status: 201,
    idempotencyKey: 'live',
    pet: { ...LIVELY_PET }
  }),
  entry({ sentAt: T - 599_000, key: LIVELY.prefix, status: 429, code: 'rate_limited' }),
  entry({ sentAt: T - 598_000, key: LIVELY.prefix, status: 429, code: 'key_banned', headers: { 'retry-after': '1' } })
]

function fault(fields: Partial<FaultRecord> & { kind: FaultRecord['kind']; at: number }): FaultRecord {
  return {
    id: 1,
    target: 'the primary',
    undoneAt: fields.at + 5000,
    tookEffect: true,
    evidence: [],
    readyMs: 6000,
    firstOkMs: 6000,
    recoveredMs: 6000,
    databaseLoss: fields.kind === 'kill-primary',
    ...fields
  }
}

/** The primary killed at `at`: counts committed in the second before may be lost. */
const kill = (at: number) =>
  fault({
    kind: 'kill-primary',
    at,
    loss: { from: at - 1000, to: at },
    replication: {
      synchronousStandbyNames: 'ANY 1 (pgautofailover_standby_2)',
      standbys: 'streaming quorum',
      sync: true
    }
  })

const run = (
  entries: LedgerEntry[],
  options: Partial<Omit<Parameters<typeof check>[0], 'entries'>> & { lively?: boolean } = {}
) =>
  check({
    entries: options.lively === false ? entries : [...liveness(), ...entries],
    keys: [KEY, SIBLING, LIVELY],
    pets: [...(options.pets ?? []), LIVELY_PET],
    faults: options.faults ?? [],
    schedule: options.schedule,
    readBack: options.readBack,
    databaseClockOffsetMs: options.databaseClockOffsetMs,
    // The liveness entries' minute: the one whole minute of the load, and no fault in it.
    load: options.load ?? { from: T - 600_000, to: T - 540_000 },
    idempotency: options.idempotency,
    nodes: options.nodes,
    upgrade: options.upgrade
  })

const invariants = (result: ReturnType<typeof run>) => result.violations.map((violation) => violation.invariant)

describe('the chaos checker', () => {
  it('passes a ledger within every limit', () => {
    const result = run([entry({ sentAt: T + 1000 }), entry({ sentAt: T + 2000 }), entry({ sentAt: T + 3000 })])
    expect(result.violations).toEqual([])
    expect(result.report.admissions).toMatchObject({ admitted: 4, overAdmitted: 0 })
  })

  it('counts admissions over a minute limit and names their ledger lines', () => {
    const entries = [1, 2, 3, 4, 5].map((second) => entry({ sentAt: T + second * 1000 }))
    const result = run(entries)
    expect(result.report.admissions.overAdmitted).toBe(2)
    expect(result.violations).toEqual([
      expect.objectContaining({ invariant: 'admissions over a limit outside a database loss', count: 2 })
    ])
    expect(result.violations[0]!.lines).toHaveLength(2)
  })

  it("counts an account's keys in one window: two keys of one account share its limit", () => {
    const entries = [1, 2].map((second) => entry({ sentAt: T + second * 1000 }))
    const sibling = [3, 4].map((second) => entry({ sentAt: T + second * 1000, key: SIBLING.prefix }))
    expect(run([...entries, ...sibling]).report.admissions.overAdmitted).toBe(1)
    expect(subjectOf({ key: SIBLING.prefix }, new Map([[SIBLING.prefix, SIBLING]]))).toBe('1')
  })

  it('places an admission answered across a minute boundary in the window that has room', () => {
    const entries = [
      entry({ sentAt: T + 59_990, answeredAt: T + 60_020 }),
      ...[1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 })),
      ...[61, 62].map((second) => entry({ sentAt: T + second * 1000 }))
    ]
    expect(run(entries).report.admissions.overAdmitted).toBe(0)
  })

  it('allows 50 ms between the database clock and the ledger, and not more', () => {
    const spent = [1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 }))
    // Answered 30 ms before the minute ended: it may have been decided in the next one.
    expect(run([...spent, entry({ sentAt: T + 59_900, answeredAt: T + 59_970 })]).report.admissions.overAdmitted).toBe(
      0
    )
    // Answered 100 ms before: it was not.
    expect(run([...spent, entry({ sentAt: T + 59_800, answeredAt: T + 59_900 })]).report.admissions.overAdmitted).toBe(
      1
    )
  })

  it('makes no allowance for an instance whose clock was wrong', () => {
    const entries = [
      ...[1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 })),
      // Admitted at 12:00:58.5 by an instance 5 s ahead: over the limit of the minute it was sent in.
      entry({ sentAt: T + 58_500, answeredAt: T + 58_520, instance: 'c' })
    ]
    const clocks = [{ instance: 'c', offsetMs: 5000, measuredMs: 5000, from: T, to: T + 90_000 }]
    const result = run(entries, { faults: [fault({ kind: 'clock-skew', at: T, clocks })] })
    expect(result.report.admissions.overAdmitted).toBe(1)
    expect(invariants(result)).toEqual(['admissions over a limit outside a database loss'])
  })

  it("bounds over-admission after the primary's death by what was admitted while counts could be lost", () => {
    // Three in the minute, one of them in the second before the kill: one more may follow.
    const entries = [1, 2, 29.5, 40].map((second) => entry({ sentAt: T + second * 1000 }))
    const within = run(entries, { faults: [kill(T + 30_000)] })
    expect(within.report.admissions).toMatchObject({
      overAdmitted: 0,
      overAdmittedAfterDatabaseLoss: 1,
      overAdmittedBeyondLossBound: 0
    })
    expect(invariants(within)).toEqual([])
    const past = run([...entries, entry({ sentAt: T + 41_000 })], { faults: [kill(T + 30_000)] })
    expect(past.report.admissions).toMatchObject({ overAdmittedAfterDatabaseLoss: 1, overAdmittedBeyondLossBound: 1 })
    expect(invariants(past)).toEqual(['admissions over a limit past the loss bound'])
    // The loss excuses nothing in a window it is not in.
    const elsewhere = run(
      [61, 62, 63, 64].map((second) => entry({ sentAt: T + second * 1000 })),
      { faults: [kill(T + 30_000)] }
    )
    expect(invariants(elsewhere)).toEqual(['admissions over a limit outside a database loss'])
  })

  it('counts the leases instances may hold in the loss bound', () => {
    expect(leaseAllowance(12)).toBe(0)
    expect(leaseAllowance(600)).toBe(18)
    expect(leaseAllowance(1_000_000)).toBe(1000)
  })

  it('finds a key admitted while its ban lasts, also after the primary died', () => {
    const entries = [
      entry({ sentAt: T + 1000, status: 429, code: 'key_banned', headers: { 'retry-after': '20' } }),
      entry({ sentAt: T + 5000 }),
      entry({ sentAt: T + 22_000 })
    ]
    const result = run(entries)
    expect(result.report.admissions.admittedWhileBanned).toBe(1)
    expect(result.violations[0]!.lines).toEqual([entries[1]])
    const afterLoss = run(entries, { faults: [kill(T + 3000)] })
    expect(afterLoss.report.admissions.admittedWhileBanned).toBe(1)
    expect(invariants(afterLoss)).toEqual(['admissions while the key was banned'])
  })

  it("bans a key, not its account: a sibling key's admissions are not a broken ban", () => {
    const entries = [
      entry({ sentAt: T + 1000, status: 429, code: 'key_banned', headers: { 'retry-after': '20' } }),
      entry({ sentAt: T + 5000, key: SIBLING.prefix })
    ]
    expect(run(entries).report.admissions.admittedWhileBanned).toBe(0)
  })

  it('does not count an admission that may have come after a slowly answered ban ended', () => {
    const entries = [
      // Decided between 1 s and 4 s: the ban of 20 s may have ended as early as 20 s.
      entry({
        sentAt: T + 1000,
        answeredAt: T + 4000,
        status: 429,
        code: 'key_banned',
        headers: { 'retry-after': '20' }
      }),
      entry({ sentAt: T + 21_000 })
    ]
    expect(run(entries).report.admissions.admittedWhileBanned).toBe(0)
  })

  it('fails refusals with budget left beyond what unknown outcomes explain', () => {
    const refusal = (second: number) => entry({ sentAt: T + second * 1000, status: 429, code: 'rate_limited' })
    const result = run([entry({ sentAt: T + 1000 }), refusal(2)])
    expect(result.report.admissions).toMatchObject({ underAdmitted: 1, underAdmittedBeyondBound: 1 })
    expect(invariants(result)).toEqual(['refusals with budget left past the under-admission bound'])
    // A request without an answer in the minute may have spent a unit: a refusal one unit short is explained.
    const explained = run([
      entry({ sentAt: T + 500 }),
      entry({ sentAt: T + 1000 }),
      entry({ sentAt: T + 1500, status: 0, error: 'timeout' }),
      refusal(2)
    ])
    expect(explained.report.admissions).toMatchObject({ underAdmitted: 1, underAdmittedBeyondBound: 0 })
    expect(invariants(explained)).not.toContain('refusals with budget left past the under-admission bound')
    // So may one that nginx passed on from an instance that failed before answering.
    const passedOn = run([entry({ sentAt: T + 1000 }), entry({ sentAt: T + 1500, upstreams: 2 }), refusal(2)])
    expect(passedOn.report.admissions).toMatchObject({ underAdmitted: 1, underAdmittedBeyondBound: 0 })
    // The bound is in units: one unit unaccounted for explains any number of refusals, two do not.
    const many = run([entry({ sentAt: T + 500 }), entry({ sentAt: T + 1000, upstreams: 2 }), refusal(2), refusal(3)])
    expect(many.report.admissions).toMatchObject({ underAdmitted: 2, underAdmittedBeyondBound: 0 })
    const twoUnits = run([entry({ sentAt: T + 1000, upstreams: 2 }), refusal(2), refusal(3)])
    expect(twoUnits.report.admissions).toMatchObject({ underAdmitted: 2, underAdmittedBeyondBound: 2 })
    const spent = [1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 }))
    expect(run([...spent, refusal(4)]).report.admissions).toMatchObject({ underAdmitted: 0 })
  })

  it('fails a run that never created, refused or banned', () => {
    const result = run([entry({ sentAt: T + 1000 })], { lively: false })
    expect(invariants(result)).toEqual([
      'no 201 in the run',
      'no 429 in the run',
      'no ban in the run',
      'a minute without faults that lacked a 201, a 429 or a ban'
    ])
    expect(result.report.seen).toEqual({ created: 0, rateLimited: 0, banned: 0 })
  })

  it('fails a whole minute without a fault that lacks a 201, a 429 or a ban, and a run with no such minute', () => {
    // The load ran three whole minutes from T: the first lacks a ban, the second is a fault's, the third is lively.
    const load = { from: T - 500, to: T + 180_500 }
    const entries = [
      entry({ sentAt: T + 1000, method: 'POST', path: '/v1/pets', status: 201, idempotencyKey: 'q1' }),
      entry({ sentAt: T + 1100 }),
      entry({ sentAt: T + 1200 }),
      entry({ sentAt: T + 2000, status: 429, code: 'rate_limited' }),
      entry({ sentAt: T + 121_000, key: LIVELY.prefix, method: 'POST', path: '/v1/pets', status: 201 }),
      entry({ sentAt: T + 122_000, key: LIVELY.prefix, status: 429, code: 'rate_limited' }),
      entry({
        sentAt: T + 123_000,
        key: LIVELY.prefix,
        status: 429,
        code: 'key_banned',
        headers: { 'retry-after': '1' }
      })
    ]
    const faults = [fault({ kind: 'kill-instance', at: T + 70_000, databaseLoss: false })]
    const result = run(entries, { load, faults })
    expect(result.report.quietMinutes).toEqual([
      { minute: new Date(T).toISOString(), created: 1, rateLimited: 1, banned: 0 },
      { minute: new Date(T + 120_000).toISOString(), created: 1, rateLimited: 1, banned: 1 }
    ])
    expect(result.violations).toEqual([
      expect.objectContaining({
        invariant: 'a minute without faults that lacked a 201, a 429 or a ban',
        detail: [`${new Date(T).toISOString()}: no ban`]
      })
    ])
    // A fault in every minute: liveness is not shown.
    const busy = run([], {
      load: { from: T, to: T + 60_000 },
      faults: [fault({ kind: 'kill-instance', at: T + 1000 })]
    })
    expect(invariants(busy)).toEqual(['no whole minute of the load without a fault'])
  })

  it('fails a daily account that never reached its day limit and a leased one that never reached its minute limit', () => {
    const daily: KeyInfo = { ...KEY, prefix: 'ask_DDDDDDDD', accountId: '20', role: 'daily', perMinute: 40, perDay: 50 }
    const leased: KeyInfo = {
      ...KEY,
      prefix: 'ask_EEEEEEEE',
      accountId: '21',
      role: 'leased',
      perMinute: 480,
      perDay: 9000
    }
    // The limit spent first (the day's by this account before the run), so that the refusal is owed.
    const refused = (key: KeyInfo, limit: number) => [
      ...Array.from({ length: key.perMinute }, (_, i) => entry({ sentAt: T + i, key: key.prefix })),
      entry({
        sentAt: T + 1000,
        key: key.prefix,
        status: 429,
        code: 'rate_limited',
        headers: { 'x-ratelimit-limit': String(limit) }
      })
    ]
    const check_ = (entries: LedgerEntry[]) =>
      check({
        entries: [...liveness(), ...entries],
        keys: [KEY, LIVELY, daily, leased],
        pets: [LIVELY_PET],
        faults: [],
        load: { from: T - 600_000, to: T - 540_000 }
      })
    // Refused at their minute limits only: the daily account never reached its day limit.
    const short = check_([...refused(daily, 40), ...refused(leased, 480)])
    expect(short.violations.map((violation) => violation.invariant)).toEqual([
      'a daily account that never reached its day limit'
    ])
    expect(short.report.limitsReached).toMatchObject({
      daily: { accounts: 1, atMinuteLimit: 1, atDayLimit: 0 },
      leased: { accounts: 1, atMinuteLimit: 1, atDayLimit: 0 }
    })
    expect(check_(refused(daily, 50)).violations.map((violation) => violation.invariant)).toEqual([
      'a leased account that never reached its minute limit'
    ])
    expect(check_([...refused(daily, 50), ...refused(leased, 480)]).violations).toEqual([])
  })

  it('fails idempotency_keys that disagree with the ledger', () => {
    const pets: PetRow[] = [
      { id: '1', name: 'chaos k1', categoryId: '1', status: 'available' },
      { id: '2', name: 'chaos k2', categoryId: '1', status: 'available' }
    ]
    const entries = [created('1', 'k1'), created('2', 'k2')]
    const rows = [
      { key: 'live', prefix: LIVELY.prefix, petId: '100' },
      { key: 'k1', prefix: KEY.prefix, petId: '1' },
      { key: 'k2', prefix: KEY.prefix, petId: '2' }
    ]
    const agreeing = run(entries, { pets, idempotency: rows })
    expect(agreeing.violations).toEqual([])
    expect(agreeing.report.idempotency).toEqual({ rows: 3, disagreeing: 0 })
    // k2's row names another pet, k3 was never sent, and pet 2 has no row of its own.
    const wrong = run(entries, {
      pets,
      idempotency: [
        rows[0]!,
        rows[1]!,
        { key: 'k2', prefix: KEY.prefix, petId: '1' },
        { key: 'k3', prefix: KEY.prefix, petId: '1' }
      ]
    })
    expect(invariants(wrong)).toEqual([
      'acknowledged creates without their idempotency key, or with another pet',
      'idempotency keys the ledger never sent, or naming a pet that is not stored',
      'pets without an idempotency key'
    ])
    expect(wrong.violations[0]!.lines).toEqual([entries[1]])
    // A row under another key than the one that sent it.
    expect(
      invariants(run(entries, { pets, idempotency: [rows[0]!, rows[1]!, { ...rows[2]!, prefix: SIBLING.prefix }] }))
    ).toEqual([
      'acknowledged creates without their idempotency key, or with another pet',
      'idempotency keys the ledger never sent, or naming a pet that is not stored'
    ])
    expect(invariants(run(entries, { pets, idempotency: null }))).toEqual(['idempotency_keys not read after the run'])
  })

  it('fails database nodes that hold different rows', () => {
    const copy = (name: string, role: string, md5: string) => ({
      name,
      role,
      tables: { pets: { rows: 2, md5: 'a' }, idempotency_keys: { rows: 2, md5 } }
    })
    const same = run([], { nodes: [copy('node1', 'primary', 'b'), copy('node2', 'standby', 'b')] })
    expect(same.violations).toEqual([])
    expect(same.report.nodes?.same).toBe(true)
    const differ = run([], { nodes: [copy('node1', 'primary', 'b'), copy('node2', 'standby', 'c')] })
    expect(differ.violations).toEqual([
      expect.objectContaining({
        invariant: 'the database nodes hold different rows',
        detail: ['idempotency_keys: node1 (primary) 2 rows, md5 b; node2 (standby) 2 rows, md5 c']
      })
    ])
    expect(invariants(run([], { nodes: [copy('node1', 'primary', 'b')] }))).toEqual([
      'the database nodes hold different rows'
    ])
    expect(invariants(run([], { nodes: null }))).toEqual(['the database nodes not compared after the run'])
  })

  it('fails a first 2xx more than 3 s after the new primary was writable', () => {
    const replication = { synchronousStandbyNames: 'ANY 1 (node2)', standbys: 'node2 streaming quorum', sync: true }
    const killed = (firstOkAfterWritableMs: number | null) =>
      fault({ kind: 'kill-primary', at: T, writableAt: T + 15_000, firstOkAfterWritableMs, replication })
    expect(invariants(run([], { faults: [killed(3000)] }))).toEqual([])
    expect(invariants(run([], { faults: [killed(3001)] }))).toEqual([
      'first 2xx more than 3 s after the new primary was writable'
    ])
    expect(invariants(run([], { faults: [killed(null)] }))).toEqual([
      'first 2xx more than 3 s after the new primary was writable'
    ])
    // And a primary changed with no check of its synchronous standby first.
    expect(invariants(run([], { faults: [fault({ kind: 'switchover', at: T })] }))).toEqual([
      'no check of the synchronous standby before switchover'
    ])
  })

  it('fails a 404 to a read of a pet acknowledged before it, and only then', () => {
    const created = entry({
      sentAt: T + 1000,
      method: 'POST',
      path: '/v1/pets',
      status: 201,
      idempotencyKey: 'k1',
      pet: { id: '7', name: 'chaos k1', categoryId: '1', status: 'sold' }
    })
    const before = entry({ sentAt: T + 500, path: '/v1/pets/7', status: 404 })
    const after = entry({ sentAt: T + 2000, path: '/v1/pets/7', status: 404 })
    const pets = [{ id: '7', name: 'chaos k1', categoryId: '1', status: 'sold' }]
    const result = run([before, created, after], { pets })
    expect(result.report.reads.notFound).toBe(1)
    expect(result.violations).toEqual([
      expect.objectContaining({ invariant: 'acknowledged pets answered 404', lines: [after] })
    ])
  })

  it('fails acknowledged pets the read-back did not find as acknowledged', () => {
    const pet = { id: '100', name: 'chaos live', categoryId: '1', status: 'available' }
    const good: ReadBack = { checked: 1, byId: [], listed: 1, notListed: [], listComplete: true }
    expect(invariants(run([], { readBack: good }))).toEqual([])
    const bad: ReadBack = {
      checked: 1,
      byId: [{ expected: pet, status: 404, found: null }],
      listed: 0,
      notListed: [{ expected: pet, found: null }],
      listComplete: false
    }
    expect(invariants(run([], { readBack: bad }))).toEqual([
      'acknowledged pets not read back by id as acknowledged',
      'acknowledged pets missing from the list, or listed otherwise',
      'the list of pets could not be read to its end'
    ])
    expect(invariants(run([], { readBack: null }))).toEqual(['acknowledged pets not read back after the run'])
  })

  it('finds an acknowledged create missing from the pets table, and pets created twice for one key', () => {
    const pets: PetRow[] = [
      { id: '1', name: 'chaos k1', categoryId: '1', status: 'available' },
      { id: '3', name: 'chaos k3', categoryId: '1', status: 'available' },
      { id: '4', name: 'chaos k3', categoryId: '1', status: 'available' }
    ]
    const result = run([created('1', 'k1'), created('2', 'k2'), created('3', 'k3')], { pets })
    expect(result.report.creates).toEqual({ acknowledged: 4, missing: 1, duplicated: 1 })
    expect(invariants(result)).toEqual([
      'acknowledged creates missing from the database',
      'pets created twice for one Idempotency-Key'
    ])
  })

  it('accepts a 503 with Retry-After inside a fault, and nothing else', () => {
    const instanceKill = fault({ kind: 'kill-instance', at: T + 10_000, databaseLoss: false })
    const entries = [
      entry({ sentAt: T + 11_000, status: 503, headers: { 'retry-after': '5' } }),
      entry({ sentAt: T + 12_000, status: 502 }),
      entry({ sentAt: T + 30_000, status: 503, headers: { 'retry-after': '5' } }),
      entry({ sentAt: T + 31_000, answeredAt: T + 41_000, status: 0, error: 'timeout' })
    ]
    const result = run(entries, { faults: [instanceKill] })
    expect(result.report.errorsOutsideFaults).toBe(2)
    expect(result.report.errorsInsideFaultsWithoutRetryAfter).toBe(1)
    expect(result.violations.map((v) => [v.invariant, v.lines.map((shown) => shown.line)])).toEqual([
      ['5xx or timeouts outside a fault', [entries[2]!.line, entries[3]!.line]],
      ['5xx or timeouts inside a fault that were not a 503 with Retry-After', [entries[1]!.line]]
    ])
  })

  it('fails a fault that did not take effect, never recovered, never ran or had no synchronous standby', () => {
    const faults = [
      fault({ kind: 'freeze-pgbouncer', at: T, tookEffect: false, evidence: ['PgBouncer not stopped'] }),
      fault({
        id: 2,
        kind: 'kill-primary',
        at: T + 60_000,
        recoveredMs: null,
        replication: { synchronousStandbyNames: '', standbys: 'none', sync: false }
      })
    ]
    const schedule = [
      { id: 1, lane: 'database' as const, kind: 'freeze-pgbouncer' as const, pauseMs: 2000 },
      { id: 2, lane: 'database' as const, kind: 'kill-primary' as const, pauseMs: 2000 },
      { id: 3, lane: 'instances' as const, kind: 'kill-instance' as const, pauseMs: 2000, instance: 'a' as const }
    ]
    expect(invariants(run([], { faults, schedule }))).toEqual([
      'scheduled fault #3 kill-instance never ran',
      'fault freeze-pgbouncer did not take effect',
      'service did not recover from kill-primary',
      'no synchronous standby before kill-primary'
    ])
  })

  it('fails a rolling upgrade whose migration failed, or answered a 5xx while migrating, or whose previous release never served on the new schema', () => {
    const migration = {
      at: T + 10_000,
      endedAt: T + 11_000,
      ok: true,
      output: 'Applied 0034_counters_one_row_per_account'
    }
    const replace = (id: number, instance: string, at: number) =>
      fault({ id, kind: 'replace-instance', target: `instance ${instance}`, at, databaseLoss: false })
    const faults = [replace(1, 'a', T + 20_000), replace(2, 'b', T + 40_000)]
    const upgrade = { from: '2d40fdd', to: '5198b67', migration }
    const served = [
      // b, still the previous release, after the migration; a, the new release, after its replacement.
      entry({ sentAt: T + 12_000, instance: 'b' }),
      entry({ sentAt: T + 30_000, instance: 'a' }),
      // a 503 during a's replacement is its fault window's; during the migration it is no one's.
      entry({ sentAt: T + 21_000, instance: 'a', status: 503, headers: { 'retry-after': '1' } })
    ]
    const held = run(served, { faults, upgrade })
    expect(held.violations).toEqual([])
    expect(held.report.upgrade).toMatchObject({
      migrationMs: 1000,
      errorsWhileMigrating: 0,
      answeredByPreviousOnNewSchema: 1,
      answeredByNew: 1
    })

    const whileMigrating = entry({ sentAt: T + 10_500, instance: 'c', status: 503, headers: { 'retry-after': '1' } })
    const broken = run([...served, whileMigrating], { faults, upgrade })
    expect(invariants(broken)).toEqual(['5xx or timeouts outside a fault'])
    expect(broken.report.upgrade?.errorsWhileMigrating).toBe(1)

    expect(invariants(run([served[1]!], { faults, upgrade }))).toEqual([
      'the previous release answered nothing on the new schema'
    ])
    expect(
      invariants(
        run(served, { faults, upgrade: { ...upgrade, migration: { ...migration, ok: false, output: 'lock timeout' } } })
      )
    ).toEqual(["the new release's migrations failed"])
  })

  it("fails a run whose clock is not the database's", () => {
    expect(invariants(run([], { databaseClockOffsetMs: 20 }))).toEqual([])
    expect(invariants(run([], { databaseClockOffsetMs: -80 }))).toEqual(['the harness clock is not the database clock'])
  })
})

describe('overAdmissions', () => {
  const spans = (windows: [number, number][]) =>
    windows.map(([first, last]) => ({ entry: entry({ sentAt: T }), first, last }))

  it('fills each window with the admissions that must go first', () => {
    expect(
      overAdmissions(
        spans([
          [0, 1],
          [0, 0],
          [1, 1]
        ]),
        () => 1
      )
    ).toHaveLength(1)
    expect(
      overAdmissions(
        spans([
          [0, 1],
          [0, 0],
          [1, 1]
        ]),
        () => 2
      )
    ).toHaveLength(0)
    expect(
      overAdmissions(
        spans([
          [0, 0],
          [0, 0],
          [0, 1]
        ]),
        () => 2
      )
    ).toHaveLength(0)
  })

  it('fills a window a loss allows more in before an admission is called over in the next', () => {
    // Window 0 holds two that must go there and may hold one more; the third could go in 0 or 1, and
    // window 1 is full with its own.
    const five = spans([
      [0, 0],
      [0, 0],
      [0, 1],
      [1, 1],
      [1, 1]
    ])
    expect(overAdmissions(five, () => 2)).toHaveLength(1)
    expect(overAdmissions(five, (window) => (window === 0 ? 3 : 2))).toHaveLength(0)
    const over = overAdmissions(five, (window) => (window === 0 ? 2 : 1))
    expect(over.map(({ window }) => window)).toEqual([1, 1])
  })
})

it('writes and reads pets.csv, names with commas and quotes included', () => {
  const pets: PetRow[] = [
    { id: '1', name: 'Rex, "the" dog', categoryId: '9223372036854775807', status: null },
    { id: '2', name: 'Tom', categoryId: '2', status: 'sold' }
  ]
  expect(petsCsv(pets).split('\n')[0]).toBe('id,name,categoryId,status')
  expect(parsePetsCsv(petsCsv(pets))).toEqual(pets)
})
