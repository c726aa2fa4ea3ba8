// Where a server's CPU went, from the profiles a run with BENCH_CPU_PROFILE wrote: each sample's
// function put in the part of the stack it belongs to (the service's modules, the pg driver, Fastify,
// Node's own JavaScript, garbage collection...), as shares of the busy time, for each server's folder.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** The parts a sample is counted in, in the order they are printed. */
const PARTS = [
  'writev to PostgreSQL',
  'writev of responses',
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
  if (/\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request)\//.test(url)) return 'Fastify and its plugins'
  if (/\/node_modules\/(pino|pino-[a-z-]+|sonic-boom|thread-stream)\//.test(url)) return 'logging (pino)'
  if (url.includes('/node_modules/')) return 'other dependencies'
  if (url.includes('/src/')) return "the service's modules (src/)"
  return 'other dependencies'
}

/** Microseconds of each part, and of idle time, in one profile. */
function partsOf(profile: CpuProfile): { parts: Map<Part, number>; idle: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const ancestors = function* (id: number) {
    for (let at = parent.get(id); at !== undefined; at = parent.get(at)) yield byId.get(at)!
  }
  const partOf = new Map<number, Part | 'idle'>()
  for (const node of profile.nodes) {
    const { functionName, url } = node.callFrame
    let part: Part | 'idle' | null = null
    if (functionName === '(idle)') part = 'idle'
    else if (functionName === '(garbage collector)') part = 'garbage collection'
    else if (functionName === '(program)') part = 'the V8 engine (program)'
    else part = partOfCode(url)
    if (part === null) {
      // A native call: a write is the driver's when the driver is on its stack.
      const stack = [...ancestors(node.id)].map((frame) => frame.callFrame.url)
      if (functionName === 'writev' || functionName === 'writeBuffer' || functionName === 'writeUtf8String')
        part = stack.some((at) => partOfCode(at) === 'the pg driver') ? 'writev to PostgreSQL' : 'writev of responses'
      else part = 'other native calls'
    }
    partOf.set(node.id, part)
  }
  const parts = new Map<Part, number>()
  let idle = 0
  profile.samples.forEach((id, i) => {
    const part = partOf.get(id)!
    const micros = profile.timeDeltas[i] ?? 0
    if (part === 'idle') idle += micros
    else parts.set(part, (parts.get(part) ?? 0) + micros)
  })
  return { parts, idle }
}

const folder = process.argv[2]
if (!folder) {
  console.error('usage: npm run bench:profile -- FOLDER (the BENCH_CPU_PROFILE folder of a run)')
  process.exit(2)
}
for (const server of readdirSync(folder).filter((name) => statSync(join(folder, name)).isDirectory())) {
  const totals = new Map<Part, number>()
  let idle = 0
  const files = readdirSync(join(folder, server)).filter((name) => name.endsWith('.cpuprofile'))
  for (const file of files) {
    const one = partsOf(JSON.parse(readFileSync(join(folder, server, file), 'utf8')) as CpuProfile)
    for (const [part, micros] of one.parts) totals.set(part, (totals.get(part) ?? 0) + micros)
    idle += one.idle
  }
  const busy = [...totals.values()].reduce((sum, micros) => sum + micros, 0)
  console.log(`\n${server}: ${files.length} profiles, ${(busy / 1e6).toFixed(1)} s busy, ${(idle / 1e6).toFixed(1)} s idle`)
  console.log('| part | share of busy time |\n|---|---:|')
  for (const part of PARTS) {
    const micros = totals.get(part) ?? 0
    if (micros > 0) console.log(`| ${part} | ${((100 * micros) / busy).toFixed(1)} % |`)
  }
}
