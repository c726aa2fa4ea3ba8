import { describe, expect, it } from 'vitest'
import { tailPlan } from '../../../bench/database.js'
import {
  benchmarkBlock,
  goals,
  growthPlot,
  median,
  replaceBetweenMarkers,
  resultsTable,
  roundRatios,
  type BenchResults,
  type RunRecord
} from '../../../bench/report.js'
import { readSettings } from '../../../bench/settings.js'

const run = (
  scenario: string,
  server: string,
  round: number,
  requestsPerSecond: number,
  peakRssMB = 150
): RunRecord => ({
  round,
  scenario,
  server,
  requests: requestsPerSecond * 5,
  requestsPerSecond,
  p50Ms: 1,
  p99Ms: 5,
  errors: 0,
  peakRssMB,
  cpuUsPerRequest: 100,
  postgresCpuUsPerRequest: 80,
  roundTripsPerRequest: 2,
  counting: { statements: 10, accounts: 125, seconds: 0.5 }
})

const results = (runs: RunRecord[], scenarios: string[]): BenchResults => ({
  generatedAt: '2026-11-25T17:00:00.000Z',
  commit: 'abc1234',
  machine: ['a machine'],
  settings: { ...readSettings({}), rounds: 3, baselines: ['bare', 'redis'], scenarios },
  runs
})

describe('bench report', () => {
  it('takes the median of the per-round ratios, not the ratio of medians', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 2, 3])).toBe(2.5)
    const runs = [
      run('plans', 'service', 1, 1100),
      run('plans', 'redis', 1, 1000),
      run('plans', 'service', 2, 500),
      run('plans', 'redis', 2, 400),
      run('plans', 'service', 3, 1300),
      run('plans', 'redis', 3, 1000)
    ]
    // The ratio of the medians would be 1100 / 1000; the rounds give 1.1, 1.25 and 1.3.
    expect(roundRatios(runs, 'plans', 'redis')).toEqual({ rounds: [1.1, 1.25, 1.3], median: 1.25 })
    const found = goals(results(runs, ['plans']))
    expect(found).toEqual([
      expect.objectContaining({
        value: 1.25,
        pass: false,
        text: expect.stringContaining('median of 3 per-round ratios')
      })
    ])
  })

  it('judges the million keys on peak RSS and on req/s against 10,000 keys', () => {
    const runs = [run('plans', 'service', 1, 1000, 140), run('plans-1m', 'service', 1, 550, 260)]
    const found = goals(results(runs, ['plans', 'plans-1m']))
    expect(found.map((goal) => [goal.value, goal.pass])).toEqual([
      [260, false],
      [0.55, false]
    ])
  })

  it('prints each baseline ratio with its rounds, and tables and draws the key counts in order', () => {
    const runs = [
      run('plans', 'service', 1, 900),
      run('plans', 'bare', 1, 1000),
      run('plans', 'redis', 1, 800),
      run('plans-1k', 'service', 1, 1200),
      // A round whose requests were all decided from leases: no counting statement to divide by.
      { ...run('plans-1k', 'service', 2, 1200), counting: { statements: 0, accounts: 0, seconds: 0 } },
      // A run from before the database's CPU was measured.
      { ...run('plans-1m', 'service', 1, 600), postgresCpuUsPerRequest: undefined, counting: undefined }
    ]
    const table = resultsTable(results(runs, ['plans'])).join('\n')
    expect(table).toContain(
      '| plans, 10,000 free and pro keys round robin | service | 900 | 5.00 | **0.90** (0.90) | **1.13** (1.13) | 150.0 | 100 | 80 | 2.00 |'
    )
    expect(benchmarkBlock(results(runs, ['plans'])).join('\n')).toContain(
      [
        '| keys | service req/s | round trips/req | peak RSS MB | CPU µs/req | PostgreSQL CPU µs/req | accounts a counting statement |',
        '|---:|---:|---:|---:|---:|---:|---:|',
        '| 1,000 | 1,200 | 2.00 | 150.0 | 100 | 80 | 12.5 |',
        '| 10,000 | 900 | 2.00 | 150.0 | 100 | 80 | 12.5 |',
        '| 1,000,000 | 600 | 2.00 | 150.0 | 100 | - | - |',
        ''
      ].join('\n')
    )
    const svg = growthPlot(results(runs, ['plans-1k', 'plans', 'plans-1m']))
    expect(svg.match(/<circle/g)).toHaveLength(6)
    expect(svg).toContain('abc1234')
  })

  it('replaces only what lies between the markers, and refuses a file without them', () => {
    const text = 'intro\n<!-- bench:results:start -->\nold\n<!-- bench:results:end -->\nrest\n'
    expect(replaceBetweenMarkers(text, ['new'])).toBe(
      'intro\n<!-- bench:results:start -->\nnew\n<!-- bench:results:end -->\nrest\n'
    )
    expect(() => replaceBetweenMarkers('no markers', ['new'])).toThrow('bench:results')
  })
})

describe('the tail of 100,000 keys', () => {
  it('puts every key on a plan whose minute its Zipf share stays within up to 20,000 req/s', () => {
    const count = 100_000
    let harmonic = 0
    for (let rank = 1; rank <= count; rank++) harmonic += 1 / rank
    const perMinute: Record<string, number> = { free: 60, pro: 300, business: 1000, enterprise: 2_000_000_000 }
    const plans = new Set<string>()
    const over: string[] = []
    for (let rank = 1; rank <= count; rank++) {
      const { plan } = tailPlan(rank)
      plans.add(plan)
      if ((20_000 * 60) / (rank * harmonic) > perMinute[plan]!) over.push(`rank ${rank} on ${plan}`)
    }
    expect(over).toEqual([])
    expect([...plans].sort()).toEqual(['business', 'enterprise', 'free', 'pro'])
  })
})

describe('bench settings', () => {
  it("runs as an operator does by default, each part still switchable, the baselines at Fastify's default logging", () => {
    expect(readSettings({})).toMatchObject({
      setup: 'operator',
      logLevel: 'info',
      baselineLogLevel: 'info',
      prime: false,
      keysThroughAdmin: true,
      resetBeforeEach: true,
      baselines: ['bare', 'redis']
    })
    expect(readSettings({ BENCH_SETUP: 'operator', BENCH_PRIME: '1' }).prime).toBe(true)
    expect(readSettings({ BENCH_LOG_LEVEL: 'warn' })).toMatchObject({ logLevel: 'warn', baselineLogLevel: 'info' })
    expect(() => readSettings({ BENCH_BASELINE: 'nginx' })).toThrow("unknown 'nginx'")
    expect(() => readSettings({ BENCH_LOG_LEVEL: 'loud' })).toThrow("unknown 'loud'")
    expect(() => readSettings({ BENCH_SETUP: 'bench' })).toThrow("unknown 'bench'")
  })

  it('keeps the old setup as BENCH_SETUP=lean: warn, keys in bulk and primed, baselines without a logger', () => {
    expect(readSettings({ BENCH_SETUP: 'lean' })).toMatchObject({
      setup: 'lean',
      logLevel: 'warn',
      baselineLogLevel: 'silent',
      prime: true,
      keysThroughAdmin: false,
      resetBeforeEach: false
    })
    expect(readSettings({ BENCH_SETUP: 'lean', BENCH_LOG_LEVEL: 'info' }).logLevel).toBe('info')
  })
})

describe('bench goals', () => {
  it("judge the operator's setup by its goals: reads 0.9 × bare, counted scenarios 0.75, plans 1.5 × redis, tail 1.15 round trips", () => {
    const runs = [
      run('list', 'service', 1, 890),
      run('list', 'bare', 1, 1000),
      run('plans', 'service', 1, 1500),
      run('plans', 'bare', 1, 2000),
      run('plans', 'redis', 1, 1000),
      { ...run('tail', 'service', 1, 740), roundTripsPerRequest: 1.15 },
      run('tail', 'bare', 1, 1000)
    ]
    const found = goals(results(runs, ['list', 'plans', 'tail']))
    expect(found.map((goal) => [goal.text.split(' (')[0], goal.value, goal.pass])).toEqual([
      ['list: service req/s at least 0.9 × bare', 0.89, false],
      ['plans: service req/s at least 0.75 × bare', 0.75, true],
      ['tail: service req/s at least 0.75 × bare', 0.74, false],
      ['plans: service req/s at least 1.5 × redis', 1.5, true],
      ['tail: service round trips per request at most 1.15', 1.15, true],
      ["list: service CPU at most 50 µs a request more than bare's", 0, true]
    ])
  })

  it("judge a request that counts nothing on the CPU it costs beyond bare's", () => {
    const cpu = (record: RunRecord, cpuUsPerRequest: number) => ({ ...record, cpuUsPerRequest })
    const runs = [
      cpu(run('get', 'service', 1, 1000), 190),
      cpu(run('get', 'bare', 1, 1000), 145),
      cpu(run('list', 'service', 1, 1000), 240),
      cpu(run('list', 'bare', 1, 1000), 185)
    ]
    const found = goals(results(runs, ['get', 'list', 'plans'])).filter((goal) => goal.text.includes('CPU'))
    expect(found.map((goal) => [goal.text.split(':')[0], goal.value, goal.pass])).toEqual([
      ['list', 55, false],
      ['get', 45, true]
    ])
  })

  it('judge the lean setup by the goals it had', () => {
    const runs = [run('list', 'service', 1, 850), run('list', 'bare', 1, 1000), run('plans-1m', 'service', 1, 1, 240)]
    const lean = {
      ...results(runs, ['list', 'plans-1m']),
      settings: { ...results(runs, []).settings, setup: 'lean' as const }
    }
    expect(goals(lean).map((goal) => [goal.text.split(' (')[0], goal.pass])).toEqual([
      ['list: service req/s at least 0.9 × bare', false],
      ['plans-1m: service peak RSS under 250 MB', true]
    ])
  })
})
