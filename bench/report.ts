/** A run's records summed up: medians over rounds, ratios to each baseline, the goals, and the docs' tables and plot. */
import { join } from 'node:path'
import { SCENARIOS, type Settings } from './settings.js'

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
  /**
   * CPU of the database server (postmaster, backends, background processes) a request; null when
   * the server runs elsewhere, absent in runs from before it was measured.
   */
  postgresCpuUsPerRequest?: number | null
  /** The service's counting statements during the measurement (its metrics): how many, their accounts, their seconds. */
  counting?: { statements: number; accounts: number; seconds: number }
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
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-')
const integer = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en') : '-')
const hundredths = (value: number) => Math.round(value * 100) / 100

/** Medians over rounds of one server on one scenario; peak RSS is the highest of the rounds. */
function figures(runs: RunRecord[], scenario: string, server: string) {
  const mine = runs.filter((run) => run.scenario === scenario && run.server === server)
  if (!mine.length) return undefined
  const of = (pick: (run: RunRecord) => number) => median(mine.map(pick))
  return {
    requestsPerSecond: of((run) => run.requestsPerSecond),
    p99Ms: of((run) => run.p99Ms),
    peakRssMB: Math.max(...mine.map((run) => run.peakRssMB)),
    cpuUsPerRequest: of((run) => run.cpuUsPerRequest),
    postgresCpuUsPerRequest: median(mine.flatMap((run) => run.postgresCpuUsPerRequest ?? [])),
    roundTripsPerRequest: of((run) => run.roundTripsPerRequest),
    accountsPerStatement: median(
      mine.flatMap(({ counting }) => (counting?.statements ? counting.accounts / counting.statements : []))
    ),
    errors: mine.reduce((sum, run) => sum + run.errors, 0)
  }
}

/** The service's req/s over the baseline's within each round, and their median. */
export function roundRatios(runs: RunRecord[], scenario: string, baseline: string) {
  const rounds = runs.flatMap((run) => {
    if (run.scenario !== scenario || run.server !== 'service') return []
    const other = runs.find(
      (each) => each.scenario === scenario && each.server === baseline && each.round === run.round
    )
    return other ? [hundredths(run.requestsPerSecond / other.requestsPerSecond)] : []
  })
  return { rounds, median: rounds.length ? median(rounds) : Number.NaN }
}

/** In the operator's setup, the least share of bare's req/s each scenario must keep; 0.75 for the rest (the counted ones). */
const OPERATOR_TARGETS: Record<string, number> = {
  list: 0.9,
  'list-available': 0.9,
  get: 0.9,
  create: 0.9,
  mixed: 0.8
}

/** Scenarios whose keys have limits no run reaches: a lease covers nearly every request, which counts nothing. */
const UNCOUNTED = ['list', 'list-available', 'get', 'create']

/** The issues' goals, each judged on medians over the rounds of this run. */
export function goals({ runs, settings }: BenchResults): { text: string; value: number; pass: boolean }[] {
  const goal = (text: string, value: number | undefined, pass: (value: number) => boolean) =>
    value !== undefined && Number.isFinite(value) ? [{ text, value, pass: pass(value) }] : []
  const ratio = (scenario: string, baseline: string, target: number) =>
    goal(
      `${scenario}: service req/s at least ${target} × ${baseline} (median of ${settings.rounds} per-round ratios)`,
      roundRatios(runs, scenario, baseline).median,
      (value) => value >= target
    )
  const million = figures(runs, 'plans-1m', 'service')
  const tenThousand = figures(runs, 'plans', 'service')
  const tail = figures(runs, 'tail', 'service')
  // The lean setup keeps the goals of the issues before the operator's setup became the default.
  const lean = settings.setup === 'lean'
  const rssMB = lean ? 250 : 200
  return [
    ...(lean
      ? [
          ...['list', 'list-available', 'get', 'create', 'mixed', 'plans'].flatMap((id) => ratio(id, 'bare', 0.9)),
          ...ratio('plans', 'redis', 1.1),
          ...ratio('tail', 'bare', 0.8)
        ]
      : [
          ...settings.scenarios.flatMap((id) => ratio(id, 'bare', OPERATOR_TARGETS[id] ?? 0.75)),
          ...ratio('plans', 'redis', 1.5),
          ...goal(
            `tail: service round trips per request at most 1.15 (median of ${settings.rounds} rounds)`,
            tail?.roundTripsPerRequest,
            (value) => value <= 1.15
          ),
          ...UNCOUNTED.filter((id) => settings.scenarios.includes(id)).flatMap((id) => {
            const [service, bare] = [figures(runs, id, 'service'), figures(runs, id, 'bare')]
            return goal(
              `${id}: service CPU at most 50 µs a request more than bare's (medians of ${settings.rounds} rounds)`,
              service && bare && service.cpuUsPerRequest - bare.cpuUsPerRequest,
              (value) => value <= 50
            )
          })
        ]),
    ...goal(
      `plans-1m: service peak RSS under ${rssMB} MB (highest of the rounds)`,
      million?.peakRssMB,
      (value) => value < rssMB
    ),
    ...goal(
      `plans-1m: service req/s at least 0.6 × plans at 10,000 keys (medians of ${settings.rounds} rounds)`,
      million && tenThousand && hundredths(million.requestsPerSecond / tenThousand.requestsPerSecond),
      (value) => value >= 0.6
    )
  ]
}

/** A Markdown table whose first `left` columns are aligned left, the others right. */
function table(head: string[], rows: string[][], left: number): string[] {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(head), `|${head.map((_, i) => (i < left ? '---' : '---:')).join('|')}|`, ...rows.map(line)]
}

/** One row per scenario and server, a ratio column for each baseline. */
export function resultsTable({ runs, settings }: BenchResults): string[] {
  const { baselines } = settings
  const rows = settings.scenarios.flatMap((scenario) =>
    ['service', ...baselines].flatMap((server) => {
      const figure = figures(runs, scenario, server)
      if (!figure) return []
      const ratios = baselines.map((baseline) => {
        if (server !== 'service') return server === baseline ? '1.00' : ''
        const { rounds, median } = roundRatios(runs, scenario, baseline)
        return `**${fixed(median)}** (${rounds.map((value) => fixed(value)).join(', ')})`
      })
      return [
        [
          SCENARIOS.find((each) => each.id === scenario)?.title ?? scenario,
          figure.errors ? `${server}, ${integer(figure.errors)} errors` : server,
          integer(figure.requestsPerSecond),
          fixed(figure.p99Ms),
          ...ratios,
          fixed(figure.peakRssMB, 1),
          integer(figure.cpuUsPerRequest),
          integer(figure.postgresCpuUsPerRequest),
          fixed(figure.roundTripsPerRequest)
        ]
      ]
    })
  )
  const head = ['scenario', 'server', 'req/s', 'p99 ms', ...baselines.map((name) => `× ${name} (rounds)`)]
  return table([...head, 'peak RSS MB', 'CPU µs/req', 'PostgreSQL CPU µs/req', 'round trips/req'], rows, 2)
}

/** The scenarios of the key-count table and plot: `plans` at each key count, fewest keys first. */
const GROWTH = SCENARIOS.filter((scenario) => scenario.keys.kind === 'plans').sort(
  (a, b) => a.keys.count - b.keys.count
)

/** The service alone, a row for each `[label, scenario]` run. */
function serviceTable({ runs }: BenchResults, head: string, rows: [string, string][], left: number): string[] {
  const cells = rows.flatMap(([label, scenario]) => {
    const figure = figures(runs, scenario, 'service')
    if (!figure) return []
    const { requestsPerSecond, roundTripsPerRequest, peakRssMB } = figure
    const { cpuUsPerRequest, postgresCpuUsPerRequest, accountsPerStatement } = figure
    return [
      [
        label,
        integer(requestsPerSecond),
        fixed(roundTripsPerRequest),
        fixed(peakRssMB, 1),
        integer(cpuUsPerRequest),
        integer(postgresCpuUsPerRequest),
        fixed(accountsPerStatement, 1)
      ]
    ]
  })
  const columns = [
    'service req/s',
    'round trips/req',
    'peak RSS MB',
    'CPU µs/req',
    'PostgreSQL CPU µs/req',
    'accounts a counting statement'
  ]
  return table([head, ...columns], cells, left)
}

/** req/s and peak RSS against keys (log scale): two lines on one chart, each with its own axis. */
export function growthPlot(results: BenchResults): string {
  const rows = GROWTH.flatMap(({ id, keys }) => {
    const figure = figures(results.runs, id, 'service')
    return figure ? [{ keys: keys.count, ...figure }] : []
  })
  const [width, height, left, right, top, bottom] = [640, 320, 60, 60, 30, 50]
  const x = (keys: number) => (left + ((Math.log10(keys) - 3) / 3) * (width - left - right)).toFixed(1)
  const maxRps = Math.max(1, ...rows.map((row) => row.requestsPerSecond)) * 1.1
  const maxRss = Math.max(250, ...rows.map((row) => row.peakRssMB)) * 1.1
  const y = (value: number, max: number) => (top + (1 - value / max) * (height - top - bottom)).toFixed(1)
  const line = (pick: (row: (typeof rows)[number]) => number, max: number, colour: string) => [
    `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${rows.map((row) => `${x(row.keys)},${y(pick(row), max)}`).join(' ')}"/>`,
    ...rows.map((row) => `<circle cx="${x(row.keys)}" cy="${y(pick(row), max)}" r="3" fill="${colour}"/>`)
  ]
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle">plans as keys grow: ${results.generatedAt.slice(0, 10)}, ${results.commit}, median of ${results.settings.rounds} rounds</text>`,
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="black"/>`,
    ...[1_000, 10_000, 100_000, 1_000_000].map(
      (keys) => `<text x="${x(keys)}" y="${height - bottom + 18}" text-anchor="middle">${integer(keys)}</text>`
    ),
    `<text x="${width / 2}" y="${height - 10}" text-anchor="middle">keys (log scale)</text>`,
    `<text x="10" y="${top - 8}" fill="#1f77b4">req/s (0 to ${integer(maxRps)})</text>`,
    `<text x="${width - 10}" y="${top - 8}" fill="#d62728" text-anchor="end">peak RSS MB (0 to ${integer(maxRss)})</text>`,
    `<line x1="${left}" y1="${y(250, maxRss)}" x2="${width - right}" y2="${y(250, maxRss)}" stroke="#d62728" stroke-dasharray="4"/>`,
    ...line((row) => row.requestsPerSecond, maxRps, '#1f77b4'),
    ...line((row) => row.peakRssMB, maxRss, '#d62728'),
    '</svg>',
    ''
  ].join('\n')
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

function runLine({ generatedAt, commit, settings, machine }: BenchResults): string {
  const rounds = `${settings.rounds} round${settings.rounds === 1 ? '' : 's'}`
  const tracing = settings.tracing === undefined ? '' : `, tracing ${settings.tracing * 100} % of requests`
  return (
    `Run of ${generatedAt.replace('T', ' ').slice(0, 16)} UTC at \`${commit}\`, ${settings.setup} setup${tracing}: ${rounds} of ` +
    `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s, wrk -t1 -c${settings.connections}; ` +
    `${machine.join('; ')}. Ratios are the median of the per-round ratios, the rounds' own in brackets.`
  )
}

/** What `npm run bench` prints and docs/benchmark.md shows. */
export function benchmarkBlock(results: BenchResults): string[] {
  return [
    runLine(results),
    '',
    ...resultsTable(results),
    '',
    '**Goals**, each on medians over the rounds:',
    '',
    ...goals(results).map((goal) => `- ${goal.pass ? 'PASS' : 'FAIL'} ${goal.text}: ${fixed(goal.value)}`),
    '',
    '**Cost as keys grow** (`plans` at each key count, the service alone):',
    '',
    ...serviceTable(
      results,
      'keys',
      GROWTH.map(({ id, keys }) => [integer(keys.count), id]),
      0
    ),
    '',
    '![plans: req/s and peak RSS as keys grow](benchmark-keys.svg)'
  ]
}

/** docs/scaling.md's cost of a request. */
export function scalingBlock(results: BenchResults): string[] {
  const rows = ['list', 'get', 'plans', 'tail'].map((id): [string, string] => [`\`${id}\``, id])
  return [runLine(results), '', ...serviceTable(results, 'scenario', rows, 1)]
}
