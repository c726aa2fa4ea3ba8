/** A run's records summed up: medians over rounds, ratios to each baseline, the goals, and their tables. */
import { join } from 'node:path'
import { KEY_GROWTH, SCENARIOS, type Settings } from './settings.js'

/** Where runs are written: git ignores it. */
export const RESULTS_DIR = join(import.meta.dirname, '..', '..', 'bench', 'results')

export interface RunRecord {
  round: number
  scenario: string
  server: string
  requests: number
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  errors: number
  /** VmHWM during this run's warm-up and measurement. */
  peakRssMB: number
  cpuUsPerRequest: number
  /** Transactions of the bench database per request: its statements, with counting and lookups. */
  roundTripsPerRequest: number
}

export interface BenchResults {
  generatedAt: string
  commit: string
  machine: string[]
  settings: Omit<Settings, 'scenarios'> & { scenarios: string[] }
  runs: RunRecord[]
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
const integer = (value: number) => Math.round(value).toLocaleString('en')

export interface ServerFigures {
  requestsPerSecond: number
  p99Ms: number
  peakRssMB: number
  cpuUsPerRequest: number
  roundTripsPerRequest: number
  errors: number
}

/** Medians over rounds of one server on one scenario; peak RSS is the highest of the rounds. */
function figures(runs: RunRecord[], scenario: string, server: string): ServerFigures | undefined {
  const mine = runs.filter((run) => run.scenario === scenario && run.server === server)
  if (!mine.length) return undefined
  const of = (pick: (run: RunRecord) => number) => median(mine.map(pick))
  return {
    requestsPerSecond: of((run) => run.requestsPerSecond),
    p99Ms: of((run) => run.p99Ms),
    peakRssMB: Math.max(...mine.map((run) => run.peakRssMB)),
    cpuUsPerRequest: of((run) => run.cpuUsPerRequest),
    roundTripsPerRequest: of((run) => run.roundTripsPerRequest),
    errors: mine.reduce((sum, run) => sum + run.errors, 0)
  }
}

/** The service's req/s over the baseline's within each round, and their median. */
export function roundRatios(
  runs: RunRecord[],
  scenario: string,
  baseline: string
): { rounds: number[]; median: number } {
  const rounds: number[] = []
  for (const run of runs.filter((each) => each.scenario === scenario && each.server === 'service')) {
    const other = runs.find(
      (each) => each.scenario === scenario && each.server === baseline && each.round === run.round
    )
    if (other) rounds.push(Math.round((run.requestsPerSecond / other.requestsPerSecond) * 100) / 100)
  }
  return { rounds, median: rounds.length ? median(rounds) : Number.NaN }
}

export interface Goal {
  text: string
  value: number
  pass: boolean
}

/** The issues' goals, each judged on medians over the rounds of this run. */
export function goals(results: BenchResults): Goal[] {
  const { runs } = results
  const rounds = results.settings.rounds
  const found: Goal[] = []
  const ratioGoal = (scenario: string, baseline: string, target: number) => {
    const { median: value } = roundRatios(runs, scenario, baseline)
    if (Number.isFinite(value)) {
      found.push({
        text: `${scenario}: service req/s at least ${target} × ${baseline} (median of ${rounds} per-round ratios)`,
        value,
        pass: value >= target
      })
    }
  }
  for (const id of ['list', 'list-available', 'get', 'create', 'mixed', 'plans']) ratioGoal(id, 'bare', 0.9)
  ratioGoal('plans', 'redis', 1.1)
  ratioGoal('tail', 'bare', 0.8)
  const million = figures(runs, 'plans-1m', 'service')
  const tenThousand = figures(runs, 'plans', 'service')
  if (million) {
    found.push({
      text: 'plans-1m: service peak RSS under 250 MB (highest of the rounds)',
      value: million.peakRssMB,
      pass: million.peakRssMB < 250
    })
  }
  if (million && tenThousand) {
    const value = Math.round((million.requestsPerSecond / tenThousand.requestsPerSecond) * 100) / 100
    found.push({
      text: `plans-1m: service req/s at least 0.6 × plans at 10,000 keys (medians of ${rounds} rounds)`,
      value,
      pass: value >= 0.6
    })
  }
  return found
}

function servers(results: BenchResults): string[] {
  return ['service', ...results.settings.baselines]
}

/** One row per scenario and server, the ratio columns for each baseline. */
export function resultsTable(results: BenchResults): string[] {
  const baselines = results.settings.baselines
  const lines = [
    `| scenario | server | req/s | p99 ms | ${baselines.map((name) => `× ${name} (rounds)`).join(' | ')} | peak RSS MB | CPU µs/req | round trips/req |`,
    `|---|---|---:|---:|${baselines.map(() => '---:|').join('')}---:|---:|---:|`
  ]
  for (const scenario of results.settings.scenarios) {
    const title = SCENARIOS.find((each) => each.id === scenario)?.title ?? scenario
    for (const server of servers(results)) {
      const figure = figures(results.runs, scenario, server)
      if (!figure) continue
      const ratios = baselines.map((baseline) => {
        if (server !== 'service') return server === baseline ? '1.00' : ''
        const ratio = roundRatios(results.runs, scenario, baseline)
        return `**${fixed(ratio.median)}** (${ratio.rounds.map((value) => fixed(value)).join(', ')})`
      })
      lines.push(
        `| ${title} | ${server} | ${integer(figure.requestsPerSecond)} | ${fixed(figure.p99Ms)} | ${ratios.join(' | ')} | ` +
          `${fixed(figure.peakRssMB, 1)} | ${integer(figure.cpuUsPerRequest)} | ${fixed(figure.roundTripsPerRequest)} |` +
          (figure.errors ? ` ${figure.errors} errors` : '')
      )
    }
  }
  return lines
}

const GROWTH_KEYS: Record<string, number> = {
  'plans-1k': 1_000,
  plans: 10_000,
  'plans-100k': 100_000,
  'plans-1m': 1_000_000
}

/** The service on `plans` as keys grow: one row per key count run. */
function growthRows(results: BenchResults) {
  return KEY_GROWTH.flatMap((id) => {
    const figure = figures(results.runs, id, 'service')
    return figure ? [{ keys: GROWTH_KEYS[id]!, ...figure }] : []
  })
}

export function growthTable(results: BenchResults): string[] {
  return [
    '| keys | service req/s | round trips/req | peak RSS MB | CPU µs/req |',
    '|---:|---:|---:|---:|---:|',
    ...growthRows(results).map(
      (row) =>
        `| ${integer(row.keys)} | ${integer(row.requestsPerSecond)} | ${fixed(row.roundTripsPerRequest)} | ${fixed(row.peakRssMB, 1)} | ${integer(row.cpuUsPerRequest)} |`
    )
  ]
}

/** req/s and peak RSS against keys (log scale), as an SVG of two lines on one chart with its own axes. */
export function growthPlot(results: BenchResults): string {
  const rows = growthRows(results)
  const [width, height, left, right, top, bottom] = [640, 320, 60, 60, 30, 50]
  const x = (keys: number) => left + ((Math.log10(keys) - 3) / 3) * (width - left - right)
  const maxRps = Math.max(1, ...rows.map((row) => row.requestsPerSecond)) * 1.1
  const maxRss = Math.max(1, ...rows.map((row) => row.peakRssMB), 250) * 1.1
  const y = (value: number, max: number) => top + (1 - value / max) * (height - top - bottom)
  const line = (pick: (row: (typeof rows)[number]) => number, max: number, colour: string) =>
    `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${rows.map((row) => `${x(row.keys).toFixed(1)},${y(pick(row), max).toFixed(1)}`).join(' ')}"/>` +
    rows
      .map(
        (row) => `<circle cx="${x(row.keys).toFixed(1)}" cy="${y(pick(row), max).toFixed(1)}" r="3" fill="${colour}"/>`
      )
      .join('')
  const ticks = [1_000, 10_000, 100_000, 1_000_000]
    .map((keys) => `<text x="${x(keys)}" y="${height - bottom + 18}" text-anchor="middle">${integer(keys)}</text>`)
    .join('')
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle">plans as keys grow: ${results.generatedAt.slice(0, 10)}, ${results.commit}, median of ${results.settings.rounds} rounds</text>`,
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="black"/>`,
    ticks,
    `<text x="${width / 2}" y="${height - 10}" text-anchor="middle">keys (log scale)</text>`,
    `<text x="10" y="${top - 8}" fill="#1f77b4">req/s (0 to ${integer(maxRps)})</text>`,
    `<text x="${width - 10}" y="${top - 8}" fill="#d62728" text-anchor="end">peak RSS MB (0 to ${integer(maxRss)})</text>`,
    `<line x1="${left}" y1="${y(250, maxRss)}" x2="${width - right}" y2="${y(250, maxRss)}" stroke="#d62728" stroke-dasharray="4"/>`,
    line((row) => row.requestsPerSecond, maxRps, '#1f77b4'),
    line((row) => row.peakRssMB, maxRss, '#d62728'),
    '</svg>',
    ''
  ].join('\n')
}

export function verdicts(results: BenchResults): string[] {
  return goals(results).map((goal) => `- ${goal.pass ? 'PASS' : 'FAIL'} ${goal.text}: ${fixed(goal.value)}`)
}

const START = '<!-- bench:results:start -->'
const END = '<!-- bench:results:end -->'

/** Replaces what lies between the markers; a file without them is an error, not a silent no-op. */
export function replaceBetweenMarkers(text: string, block: string[]): string {
  const start = text.indexOf(START)
  const end = text.indexOf(END)
  if (start < 0 || end < start) throw new Error(`no ${START} … ${END} block`)
  return `${text.slice(0, start + START.length)}\n${block.join('\n')}\n${text.slice(end)}`
}

function runLine(results: BenchResults): string {
  const { settings } = results
  return (
    `Run of ${results.generatedAt.replace('T', ' ').slice(0, 16)} UTC at \`${results.commit}\`, ${settings.setup} setup: ` +
    `${settings.rounds} round${settings.rounds === 1 ? '' : 's'} of ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s, wrk -t1 -c${settings.connections}; ` +
    `${results.machine.join('; ')}. Ratios are the median of the per-round ratios, the rounds' own in brackets.`
  )
}

export function benchmarkBlock(results: BenchResults): string[] {
  return [
    runLine(results),
    '',
    ...resultsTable(results),
    '',
    '**Goals**, each on medians over the rounds:',
    '',
    ...verdicts(results),
    '',
    '**Cost as keys grow** (`plans` at each key count, the service alone):',
    '',
    ...growthTable(results),
    '',
    '![plans: req/s and peak RSS as keys grow](benchmark-keys.svg)'
  ]
}

export function scalingBlock(results: BenchResults): string[] {
  const rows = ['list', 'get', 'plans', 'tail'].flatMap((id) => {
    const figure = figures(results.runs, id, 'service')
    return figure
      ? [
          `| \`${id}\` | ${Math.round(figure.cpuUsPerRequest)} | ${figure.roundTripsPerRequest.toFixed(2)} | ${Math.round(figure.requestsPerSecond).toLocaleString('en')} |`
        ]
      : []
  })
  return [
    runLine(results),
    '',
    '| scenario | service CPU µs/req | round trips/req | req/s |',
    '|---|---:|---:|---:|',
    ...rows
  ]
}
