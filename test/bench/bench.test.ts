import { describe, expect, it } from 'vitest'
import { summarizeProfile } from '../../bench/profile-top.js'
import { evaluateGoals, median, summarizeScenarios, type RunRecord } from '../../bench/report.js'
import { SCENARIOS } from '../../bench/harness.js'

describe('summarizeProfile', () => {
  const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 9, columnNumber: 0 })
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)') },
      { id: 2, callFrame: frame('(idle)') },
      { id: 3, callFrame: frame('listPets', 'file:///repo/dist/src/repositories/pets.js') },
      { id: 4, callFrame: frame('parseRow', 'file:///repo/node_modules/pg/lib/result.js') },
      { id: 5, callFrame: frame('listPets', 'file:///repo/dist/src/repositories/pets.js') }
    ],
    startTime: 0,
    endTime: 100,
    // Each sample lasts until the next one; the last until endTime.
    samples: [2, 3, 4, 5, 2],
    timeDeltas: [0, 10, 30, 20, 15]
  }

  it('gives each sample the time until the next one and merges frames of one function', () => {
    const summary = summarizeProfile(profile, '/repo')
    expect(summary.totalMs).toBeCloseTo(0.1)
    expect(summary.idleMs).toBeCloseTo(0.01 + 0.025)
    const byName = Object.fromEntries(summary.functions.map((entry) => [entry.functionName, entry]))
    expect(byName.listPets!.selfMs).toBeCloseTo(0.03 + 0.015)
    expect(byName.listPets!.location).toBe('dist/src/repositories/pets.js:10')
    expect(byName.parseRow).toMatchObject({ owner: 'pg', location: 'pg/lib/result.js:10' })
    expect(summary.owners.find((owner) => owner.owner === 'service')!.selfMs).toBeCloseTo(0.045)
  })
})

describe('bench report', () => {
  const run = (server: 'service' | 'baseline', round: number, requestsPerSecond: number, p99: number): RunRecord => ({
    round,
    scenario: 'list',
    server,
    order: 1,
    requests: requestsPerSecond * 5,
    requestsPerSecond,
    latencyMs: { mean: 1, p50: 1, p90: 2, p99, max: p99 },
    errors: { connect: 0, read: 0, write: 0, status: 0, timeout: 0 },
    peakRssMB: server === 'service' ? 150 : 90,
    serverCpuUsPerRequest: 100,
    postgresCpuUsPerRequest: 60,
    writesPerRequest: 2,
    otherCpuPercent: 0,
    machineCpuPercent: 190,
    quietWaitSeconds: 1
  })

  it('takes medians over rounds and compares them with the baseline', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 2, 3])).toBe(2.5)
    const runs = [
      run('service', 1, 800, 10),
      run('baseline', 1, 1000, 5),
      run('service', 2, 900, 30),
      run('baseline', 2, 1000, 5),
      run('service', 3, 700, 12),
      run('baseline', 3, 1100, 6)
    ]
    const [summary] = summarizeScenarios([SCENARIOS[0]!], runs)
    expect(summary).toMatchObject({
      requestsPerSecondRatio: 0.8,
      p99Ratio: 2.4,
      roundRatios: [0.8, 0.9, 0.64],
      service: { requestsPerSecond: 800, p99Ms: 12, peakRssMB: 150 },
      baseline: { requestsPerSecond: 1000, p99Ms: 5 }
    })
    const goals = evaluateGoals([summary!])
    // 0.8 of the baseline is below the 0.9 goal; p99 at 2.4 times is above its 2.
    expect(goals.map((goal) => goal.pass)).toEqual([false, false, true])
  })
})
