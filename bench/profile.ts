// `npm run bench:profile -- FOLDER`: where each server's CPU went while the bench measured it, from
// the profiles a run with BENCH_CPU_PROFILE=FOLDER wrote. Each sample's function is put in the part
// of the stack it belongs to (the service's modules, the pg driver, Fastify, Node's own JavaScript,
// garbage collection...), and each part's time inside the measured runs is divided by their requests.
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The file in the profiles' folder that says when each run was measured. */
export const MEASURED_FILE = 'measured.json'

/** A measured run: its server, scenario and round, its requests, and its bounds in monotonic µs. */
export interface MeasuredWindow {
  server: string
  scenario: string
  round: number
  from: number
  to: number
  requests: number
}

/** The monotonic clock V8 stamps profile samples with, in µs (as process.hrtime reads it). */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n)

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** The parts a sample is counted in, in the order they are printed. */
const PARTS = [
  'writes to PostgreSQL',
  'writes to clients (and Redis)',
  'other native calls',
  "Node's own JavaScript",
  "the service's modules (src/)",
  'the pg driver',
  'Fastify and its plugins',
  'logging (pino)',
  'other dependencies',
  'garbage collection',
  'the V8 engine (program)'
] as const
type Part = (typeof PARTS)[number]

/** The part a function's own code belongs to, or null for a native call (counted by its callers). */
function partOfCode(url: string): Part | null {
  if (url === '') return null
  if (url.startsWith('node:')) return "Node's own JavaScript"
  if (/\/node_modules\/(pg|pg-[a-z-]+|postgres-[a-z-]+)\//.test(url)) return 'the pg driver'
  if (/\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request)\//.test(url)) {
    return 'Fastify and its plugins'
  }
  if (/\/node_modules\/(pino|pino-[a-z-]+|sonic-boom|thread-stream)\//.test(url)) return 'logging (pino)'
  if (url.includes('/node_modules/')) return 'other dependencies'
  if (url.includes('/src/')) return "the service's modules (src/)"
  return 'other dependencies'
}

/** The part of each sample of a profile, and its monotonic time in µs. */
function samplesOf(profile: CpuProfile): { part: Part | 'idle'; at: number; micros: number }[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const stackOf = (id: number) => {
    const urls: string[] = []
    for (let at = parent.get(id); at !== undefined; at = parent.get(at)) urls.push(byId.get(at)!.callFrame.url)
    return urls
  }
  const partOf = new Map<number, Part | 'idle'>()
  for (const node of profile.nodes) {
    const { functionName, url } = node.callFrame
    let part: Part | 'idle' | null
    if (functionName === '(idle)') part = 'idle'
    else if (functionName === '(garbage collector)') part = 'garbage collection'
    else if (functionName === '(program)') part = 'the V8 engine (program)'
    else part = partOfCode(url)
    if (part === null) {
      // A native call: a write is the driver's when the driver is on its stack.
      if (WRITES.has(functionName)) {
        part = stackOf(node.id).some((at) => partOfCode(at) === 'the pg driver')
          ? 'writes to PostgreSQL'
          : 'writes to clients (and Redis)'
      } else part = 'other native calls'
    }
    partOf.set(node.id, part)
  }
  let at = profile.startTime
  return profile.samples.map((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0
    at += micros
    return { part: partOf.get(id)!, at, micros }
  })
}

const WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String'])

/** Each scenario's µs a request of each part, for each server, over its measured runs. */
function profileTable(folder: string): string[] {
  const windows = JSON.parse(readFileSync(join(folder, MEASURED_FILE), 'utf8')) as MeasuredWindow[]
  const servers = [...new Set(windows.map((window) => window.server))]
  const scenarios = [...new Set(windows.map((window) => window.scenario))]
  // scenario -> server -> part -> µs, and the requests and idle µs beside them.
  const micros = new Map<string, Map<string, Map<Part | 'idle', number>>>()
  const requests = new Map<string, number>()
  for (const server of servers) {
    const mine = windows.filter((window) => window.server === server)
    for (const window of mine) {
      requests.set(
        `${window.scenario} ${server}`,
        (requests.get(`${window.scenario} ${server}`) ?? 0) + window.requests
      )
    }
    for (const file of readdirSync(join(folder, server)).filter((name) => name.endsWith('.cpuprofile'))) {
      const profile = JSON.parse(readFileSync(join(folder, server, file), 'utf8')) as CpuProfile
      for (const sample of samplesOf(profile)) {
        const window = mine.find((each) => sample.at >= each.from && sample.at < each.to)
        if (!window) continue
        const byServer = micros.get(window.scenario) ?? new Map<string, Map<Part | 'idle', number>>()
        const byPart = byServer.get(server) ?? new Map<Part | 'idle', number>()
        byPart.set(sample.part, (byPart.get(sample.part) ?? 0) + sample.micros)
        byServer.set(server, byPart)
        micros.set(window.scenario, byServer)
      }
    }
  }
  const lines: string[] = []
  for (const scenario of scenarios) {
    const perRequest = (server: string, part: Part | 'idle') =>
      (micros.get(scenario)?.get(server)?.get(part) ?? 0) / (requests.get(`${scenario} ${server}`) || 1)
    lines.push(
      '',
      `${scenario}, µs a request:`,
      '',
      `| part | ${servers.join(' | ')} |`,
      `|---|${servers.map(() => '---:').join('|')}|`
    )
    for (const part of [...PARTS, 'idle'] as const) {
      lines.push(`| ${part} | ${servers.map((server) => perRequest(server, part).toFixed(0)).join(' | ')} |`)
    }
    const busy = (server: string) => PARTS.reduce((sum, part) => sum + perRequest(server, part), 0)
    lines.push(`| all but idle | ${servers.map((server) => busy(server).toFixed(0)).join(' | ')} |`)
  }
  return lines
}

// Run as a script, not when run.ts imports the window's shape.
if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? '')).href) {
  const folder = process.argv[2]
  if (!folder) {
    console.error('usage: npm run bench:profile -- FOLDER (the BENCH_CPU_PROFILE folder of a finished run)')
    process.exit(2)
  }
  console.log(profileTable(folder).join('\n'))
}
