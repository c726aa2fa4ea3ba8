import { describe, expect, it } from 'vitest'
import { check, overAdmissions, subjectOf, type PetRow } from '../../../chaos/checker.js'
import type { FaultRecord } from '../../../chaos/faults.js'
import type { KeyInfo } from '../../../chaos/load.js'
import type { LedgerEntry } from '../../../chaos/ledger.js'
import { parsePetsCsv, petsCsv } from '../../../chaos/report.js'

// 2026-11-25 12:00:00 UTC, the start of a minute.
const T = Date.UTC(2026, 10, 25, 12, 0, 0)
const KEY: KeyInfo = { prefix: 'ask_AAAAAAAA', plan: 'free', perMinute: 3, perDay: 1000, role: 'greedy' }

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

function fault(fields: Partial<FaultRecord> & { kind: FaultRecord['kind']; at: number }): FaultRecord {
  return {
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

const run = (entries: LedgerEntry[], options: { pets?: PetRow[]; faults?: FaultRecord[] } = {}) =>
  check({ entries, keys: [KEY], pets: options.pets ?? [], faults: options.faults ?? [] })

const invariants = (result: ReturnType<typeof run>) => result.violations.map((violation) => violation.invariant)

describe('the chaos checker', () => {
  it('passes a ledger within every limit', () => {
    const result = run([entry({ sentAt: T + 1000 }), entry({ sentAt: T + 2000 }), entry({ sentAt: T + 3000 })])
    expect(result.violations).toEqual([])
    expect(result.report.admissions).toMatchObject({ admitted: 3, overAdmitted: 0 })
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

  it('places an admission answered across a minute boundary in the window that has room', () => {
    const entries = [
      entry({ sentAt: T + 59_990, answeredAt: T + 60_020 }),
      ...[1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 })),
      ...[61, 62].map((second) => entry({ sentAt: T + second * 1000 }))
    ]
    expect(run(entries).report.admissions.overAdmitted).toBe(0)
  })

  it('allows for an instance whose clock ran ahead, only while it did', () => {
    const entries = [
      ...[1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 })),
      // Counted at 12:01:00.5 on an instance 2 s ahead: the next minute, which has room.
      entry({ sentAt: T + 58_500, answeredAt: T + 58_520, instance: 'c' })
    ]
    const clock = { instance: 'c', aheadMs: 2000, from: T + 30_000, to: T + 90_000 }
    expect(
      run(entries, { faults: [fault({ kind: 'clock-ahead', at: T + 30_000, clock })] }).report.admissions
    ).toMatchObject({ overAdmitted: 0 })
    expect(run(entries).report.admissions.overAdmitted).toBe(1)
  })

  it('allows the instances with the true clock to count into the window one ahead has moved forward', () => {
    // Three in the minute, then one from the instance 2 s ahead (its next minute), and one more from
    // an instance with the true clock in the same last 2 s: counted in the window the other opened.
    const entries = [
      ...[1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 })),
      entry({ sentAt: T + 58_300, answeredAt: T + 58_320, instance: 'c' }),
      entry({ sentAt: T + 58_500, answeredAt: T + 58_520, instance: 'b' })
    ]
    const clock = { instance: 'c', aheadMs: 2000, from: T + 30_000, to: T + 90_000 }
    const during = run(entries, { faults: [fault({ kind: 'clock-ahead', at: T + 30_000, clock })] })
    expect(during.report.admissions).toMatchObject({ overAdmitted: 0 })
    // Long after the clock is back, the same requests would be over the limit.
    const later = { ...clock, from: T - 600_000, to: T - 300_000 }
    expect(
      run(entries, { faults: [fault({ kind: 'clock-ahead', at: T - 600_000, clock: later })] }).report.admissions
        .overAdmitted
    ).toBe(2)
  })

  it('reports over-admissions after the primary died apart from the others', () => {
    const entries = [1, 2, 3, 40, 41].map((second) => entry({ sentAt: T + second * 1000 }))
    const result = run(entries, { faults: [fault({ kind: 'kill-primary', at: T + 30_000 })] })
    expect(result.report.admissions).toMatchObject({ overAdmitted: 0, overAdmittedAfterDatabaseLoss: 2 })
    expect(invariants(result)).toEqual([])
  })

  it('finds an acknowledged create missing from the pets table, and pets created twice for one key', () => {
    const created = (id: string, key: string) =>
      entry({
        sentAt: T + 1000,
        method: 'POST',
        path: '/v1/pets',
        status: 201,
        idempotencyKey: key,
        pet: { id, name: `chaos ${key}`, categoryId: '1', status: 'available' }
      })
    const pets: PetRow[] = [
      { id: '1', name: 'chaos k1', categoryId: '1', status: 'available' },
      { id: '3', name: 'chaos k3', categoryId: '1', status: 'available' },
      { id: '4', name: 'chaos k3', categoryId: '1', status: 'available' }
    ]
    const result = run([created('1', 'k1'), created('2', 'k2'), created('3', 'k3')], { pets })
    expect(result.report.creates).toEqual({ acknowledged: 3, missing: 1, duplicated: 1 })
    expect(invariants(result)).toEqual([
      'acknowledged creates missing from the database',
      'pets created twice for one Idempotency-Key'
    ])
  })

  it('accepts a 503 with Retry-After inside a fault, and nothing else', () => {
    const kill = fault({ kind: 'kill-instance', at: T + 10_000 })
    const entries = [
      entry({ sentAt: T + 11_000, status: 503, headers: { 'retry-after': '5' } }),
      entry({ sentAt: T + 12_000, status: 502 }),
      entry({ sentAt: T + 30_000, status: 503, headers: { 'retry-after': '5' } }),
      entry({ sentAt: T + 31_000, answeredAt: T + 41_000, status: 0, error: 'timeout' })
    ]
    const result = run(entries, { faults: [kill] })
    expect(result.report.errorsOutsideFaults).toBe(2)
    expect(result.report.errorsInsideFaultsWithoutRetryAfter).toBe(1)
    expect(result.violations.map((v) => [v.invariant, v.lines.map((shown) => shown.line)])).toEqual([
      ['5xx or timeouts outside a fault', [entries[2]!.line, entries[3]!.line]],
      ['5xx or timeouts inside a fault that were not a 503 with Retry-After', [entries[1]!.line]]
    ])
  })

  it('fails a fault that did not take effect or never recovered', () => {
    const faults = [
      fault({ kind: 'freeze-pgbouncer', at: T, tookEffect: false, evidence: ['PgBouncer not stopped'] }),
      fault({ kind: 'kill-primary', at: T + 60_000, recoveredMs: null })
    ]
    expect(invariants(run([], { faults }))).toEqual([
      'fault freeze-pgbouncer did not take effect',
      'service did not recover from kill-primary'
    ])
  })

  it('finds a key admitted while its ban lasts', () => {
    const entries = [
      entry({ sentAt: T + 1000, status: 429, code: 'key_banned', headers: { 'retry-after': '20' } }),
      entry({ sentAt: T + 5000 }),
      entry({ sentAt: T + 22_000 })
    ]
    const result = run(entries)
    expect(result.report.admissions.admittedWhileBanned).toBe(1)
    expect(result.violations[0]!.lines).toEqual([entries[1]])
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

  it('counts refusals while the ledger shows budget left', () => {
    const entries = [entry({ sentAt: T + 1000 }), entry({ sentAt: T + 2000, status: 429, code: 'rate_limited' })]
    expect(run(entries).report.admissions.underAdmitted).toBe(1)
    const spent = [1, 2, 3].map((second) => entry({ sentAt: T + second * 1000 }))
    expect(
      run([...spent, entry({ sentAt: T + 4000, status: 429, code: 'rate_limited' })]).report.admissions
    ).toMatchObject({ underAdmitted: 0 })
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
        1
      )
    ).toHaveLength(1)
    expect(
      overAdmissions(
        spans([
          [0, 1],
          [0, 0],
          [1, 1]
        ]),
        2
      )
    ).toHaveLength(0)
    expect(
      overAdmissions(
        spans([
          [0, 0],
          [0, 0],
          [0, 1]
        ]),
        2
      )
    ).toHaveLength(0)
  })
})

it('groups requests by key', () => {
  expect(subjectOf({ key: 'ask_12345678' })).toBe('ask_12345678')
})

it('writes and reads pets.csv, names with commas and quotes included', () => {
  const pets: PetRow[] = [
    { id: '1', name: 'Rex, "the" dog', categoryId: '9223372036854775807', status: null },
    { id: '2', name: 'Tom', categoryId: '2', status: 'sold' }
  ]
  expect(petsCsv(pets).split('\n')[0]).toBe('id,name,categoryId,status')
  expect(parsePetsCsv(petsCsv(pets))).toEqual(pets)
})
