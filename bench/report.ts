/** Medians over rounds, ratios to the baseline, the goals, and the table `npm run bench` prints. */
import type { MachineFacts, Scenario, ScenarioId, ServerName, Settings, WrkResult } from './harness.js'

export interface RunRecord {
  round: number
  scenario: ScenarioId
  server: ServerName
  /** Which of the pair ran first in this round. */
  order: number
  requests: number
  requestsPerSecond: number
  latencyMs: WrkResult['latencyMs']
  errors: WrkResult['errors']
  /** Peak RSS during this run's warm-up and measurement. */
  peakRssMB: number
  /** CPU time of the server process per request. */
  serverCpuUsPerRequest: number
  /** CPU time of the bench's Postgres per request; null on BENCH_DATABASE_URL. */
  postgresCpuUsPerRequest: number | null
  /** Write system calls of the server per request: about 1 per HTTP response + 1 per database round trip. */
  writesPerRequest: number
  /** CPU that processes outside the bench took during the measurement, in % of one core. */
  otherCpuPercent: number
  /** Busy CPU of the whole machine during the measurement, in % of one core. */
  machineCpuPercent: number
  /** Seconds spent before the run waiting for other processes to quieten. */
  quietWaitSeconds: number
  /** Pets the run added, deleted again after it. */
  petsAdded?: number
}

export interface ServerSummary {
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  peakRssMB: number
  cpuUsPerRequest: number
  postgresCpuUsPerRequest: number | null
  writesPerRequest: number
  /** Responses above 399 and socket errors, over every round; a valid run has none. */
  errors: number
  /** The most CPU other processes took during one of these runs, in % of one core. */
  maxOtherCpuPercent: number
}

export interface ScenarioSummary {
  id: ScenarioId
  title: string
  kind: Scenario['kind']
  service: ServerSummary
  baseline: ServerSummary
  /** Service median req/s over baseline median req/s. */
  requestsPerSecondRatio: number
  /** Service median p99 over baseline median p99. */
  p99Ratio: number
  /** Service req/s over baseline req/s within each round, for judging the spread. */
  roundRatios: number[]
}

export interface Goal {
  name: string
  target: string
  value: string
  pass: boolean
}

export interface BenchResults {
  generatedAt: string
  machine: MachineFacts
  settings: Settings & { pets: number; manyKeys: number; planKeys: number; peakRssReset: boolean }
  method: string[]
  scenarios: ScenarioSummary[]
  goals: Goal[]
  runs: RunRecord[]
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits

function summarize(runs: RunRecord[]): ServerSummary {
  return {
    requestsPerSecond: round(median(runs.map((run) => run.requestsPerSecond)), 0),
    p50Ms: round(median(runs.map((run) => run.latencyMs.p50)), 2),
    p99Ms: round(median(runs.map((run) => run.latencyMs.p99)), 2),
    peakRssMB: round(Math.max(...runs.map((run) => run.peakRssMB)), 1),
    cpuUsPerRequest: round(median(runs.map((run) => run.serverCpuUsPerRequest)), 0),
    postgresCpuUsPerRequest: runs.some((run) => run.postgresCpuUsPerRequest === null)
      ? null
      : round(median(runs.map((run) => run.postgresCpuUsPerRequest!)), 0),
    writesPerRequest: round(median(runs.map((run) => run.writesPerRequest)), 2),
    errors: runs.reduce((sum, run) => sum + Object.values(run.errors).reduce((a, b) => a + b, 0), 0),
    maxOtherCpuPercent: Math.max(...runs.map((run) => run.otherCpuPercent))
  }
}

export function summarizeScenarios(scenarios: Scenario[], runs: RunRecord[]): ScenarioSummary[] {
  return scenarios.map((scenario) => {
    const serviceRuns = runs.filter((run) => run.scenario === scenario.id && run.server === 'service')
    const baselineRuns = runs.filter((run) => run.scenario === scenario.id && run.server === 'baseline')
    const service = summarize(serviceRuns)
    const baseline = summarize(baselineRuns)
    return {
      id: scenario.id,
      title: scenario.title,
      kind: scenario.kind,
      service,
      baseline,
      requestsPerSecondRatio: round(service.requestsPerSecond / baseline.requestsPerSecond, 2),
      p99Ratio: round(service.p99Ms / baseline.p99Ms, 2),
      roundRatios: serviceRuns.map((run) => {
        const pair = baselineRuns.find((candidate) => candidate.round === run.round)!
        return round(run.requestsPerSecond / pair.requestsPerSecond, 2)
      })
    }
  })
}

const GOALS = { throughputRatio: 0.9, p99Ratio: 2, peakRssMB: 200 }

export function evaluateGoals(summaries: ScenarioSummary[]): Goal[] {
  const goals: Goal[] = []
  const throughput = (name: string, kind: Scenario['kind']) => {
    const chosen = summaries.filter((summary) => summary.kind === kind)
    if (!chosen.length) return
    const worst = chosen.reduce((a, b) => (b.requestsPerSecondRatio < a.requestsPerSecondRatio ? b : a))
    goals.push({
      name: `${name}: service req/s at least ${GOALS.throughputRatio} × baseline`,
      target: `>= ${GOALS.throughputRatio}`,
      value: `${worst.requestsPerSecondRatio.toFixed(2)} (lowest: ${worst.title})`,
      pass: worst.requestsPerSecondRatio >= GOALS.throughputRatio
    })
  }
  throughput('Reads', 'read')
  throughput('Writes', 'write')
  throughput('Mixed', 'mixed')
  if (summaries.length) {
    const worst = summaries.reduce((a, b) => (b.p99Ratio > a.p99Ratio ? b : a))
    goals.push({
      name: `p99: service at most ${GOALS.p99Ratio} × baseline, every scenario`,
      target: `<= ${GOALS.p99Ratio}`,
      value: `${worst.p99Ratio.toFixed(2)} (highest: ${worst.title})`,
      pass: worst.p99Ratio <= GOALS.p99Ratio
    })
    const peak = Math.max(...summaries.map((summary) => summary.service.peakRssMB))
    goals.push({
      name: `Peak RSS of the service under ${GOALS.peakRssMB} MB`,
      target: `< ${GOALS.peakRssMB} MB`,
      value: `${peak.toFixed(1)} MB`,
      pass: peak < GOALS.peakRssMB
    })
  }
  return goals
}

const integer = (value: number) => Math.round(value).toLocaleString('en')

/** A run during which other processes took at least this much of a core ran on a shared machine. */
export const SHARED_PERCENT = 10

export function formatTable(summaries: ScenarioSummary[]): string {
  const lines = [
    '| scenario | server | req/s | p50 ms | p99 ms | req/s × baseline | p99 × baseline | peak RSS MB ' +
      '| CPU µs/req | pg CPU µs/req | writes/req |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const summary of summaries) {
    const row = (server: ServerName, figures: ServerSummary, throughput: string, p99: string) =>
      `| ${summary.title} | ${server} | ${integer(figures.requestsPerSecond)} | ${figures.p50Ms.toFixed(2)} | ` +
      `${figures.p99Ms.toFixed(2)} | ${throughput} | ${p99} | ${figures.peakRssMB.toFixed(1)} | ` +
      `${integer(figures.cpuUsPerRequest)} | ${figures.postgresCpuUsPerRequest === null ? '-' : integer(figures.postgresCpuUsPerRequest)} | ` +
      `${figures.writesPerRequest.toFixed(2)} |`
    lines.push(row('service', summary.service, summary.requestsPerSecondRatio.toFixed(2), summary.p99Ratio.toFixed(2)))
    lines.push(row('baseline', summary.baseline, '1.00', '1.00'))
  }
  return lines.join('\n')
}

export function formatGoals(goals: Goal[]): string {
  return goals.map((goal) => `- ${goal.pass ? 'PASS' : 'FAIL'} ${goal.name}: ${goal.value}`).join('\n')
}

export const TABLE_NOTES = [
  'CPU µs/req: CPU time of the server process per request; pg CPU µs/req: of the Postgres processes;',
  'writes/req: write system calls of the server per request, about 1 per HTTP response + 1 per database round trip.'
]

export function formatWarnings(summaries: ScenarioSummary[], runs: RunRecord[]): string[] {
  const lines: string[] = []
  const shared = runs.filter((run) => run.otherCpuPercent >= SHARED_PERCENT)
  if (shared.length) {
    const worst = Math.max(...shared.map((run) => run.otherCpuPercent))
    lines.push(
      `WARNING: in ${shared.length} of ${runs.length} runs other processes took ${SHARED_PERCENT} % of a core or more ` +
        `(up to ${worst} %): the machine was shared, so compare these figures with care or run again when it is quiet.`
    )
  }
  for (const summary of summaries) {
    for (const server of ['service', 'baseline'] as const) {
      const count = summary[server].errors
      if (count) lines.push(`WARNING: ${summary.title}, ${server}: ${count} error responses or socket errors`)
    }
  }
  return lines
}
