/**
 * Reads a V8 .cpuprofile and prints where the time went: the functions with the most self time,
 * and self time by package. `node dist-bench/bench/profile-top.js FILE [N]`.
 */
import { readFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface SelfTime {
  functionName: string
  location: string
  /** Package, `service`, `node` (built-in modules) or a V8 pseudo-frame such as (garbage collector). */
  owner: string
  selfMs: number
}

export interface ProfileSummary {
  totalMs: number
  idleMs: number
  busyMs: number
  functions: SelfTime[]
  owners: { owner: string; selfMs: number }[]
}

function shortLocation(frame: CallFrame, root: string): string {
  if (!frame.url) return ''
  let path = frame.url.replace(/^file:\/\//, '')
  const modules = path.lastIndexOf('/node_modules/')
  if (modules >= 0) path = path.slice(modules + '/node_modules/'.length)
  else if (path.startsWith(`${root}/`)) path = path.slice(root.length + 1)
  return `${path}:${frame.lineNumber + 1}`
}

function ownerOf(frame: CallFrame): string {
  const url = frame.url
  if (!url) return /^\(.*\)$/.test(frame.functionName) ? frame.functionName : '(native)'
  if (url.startsWith('node:')) return 'node'
  const modules = url.lastIndexOf('/node_modules/')
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/')
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!
  }
  if (/\/dist(-bench)?\/src\//.test(url)) return 'service'
  if (/\/dist(-bench)?\/bench\//.test(url)) return 'baseline'
  return url
}

/**
 * Self time of each sample: the time until the next sample (the last one runs to endTime). With a
 * window (microseconds of CLOCK_MONOTONIC, the clock of profile timestamps and of
 * process.hrtime on Linux), only samples taken within it count.
 */
export function summarizeProfile(
  profile: CpuProfile,
  root: string,
  window?: { startUs: number; endUs: number }
): ProfileSummary {
  const byNode = new Map<number, ProfileNode>(profile.nodes.map((node) => [node.id, node]))
  const selfByNode = new Map<number, number>()
  let timestamp = profile.startTime
  const stamps: number[] = []
  for (const delta of profile.timeDeltas) stamps.push((timestamp += delta))
  for (let i = 0; i < profile.samples.length; i++) {
    if (window && (stamps[i]! < window.startUs || stamps[i]! >= window.endUs)) continue
    const duration = (stamps[i + 1] ?? profile.endTime) - stamps[i]!
    const id = profile.samples[i]!
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + Math.max(0, duration))
  }

  const functions = new Map<string, SelfTime>()
  const owners = new Map<string, number>()
  let totalUs = 0
  let idleUs = 0
  for (const [id, us] of selfByNode) {
    const frame = byNode.get(id)!.callFrame
    totalUs += us
    if (frame.functionName === '(idle)') idleUs += us
    const location = shortLocation(frame, root)
    const key = `${frame.functionName}\u0000${frame.url}\u0000${frame.lineNumber}`
    const entry = functions.get(key) ?? {
      functionName: frame.functionName || '(anonymous)',
      location,
      owner: ownerOf(frame),
      selfMs: 0
    }
    entry.selfMs += us / 1000
    functions.set(key, entry)
    owners.set(entry.owner, (owners.get(entry.owner) ?? 0) + us / 1000)
  }
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: (totalUs - idleUs) / 1000,
    functions: [...functions.values()].sort((a, b) => b.selfMs - a.selfMs),
    owners: [...owners.entries()].map(([owner, selfMs]) => ({ owner, selfMs })).sort((a, b) => b.selfMs - a.selfMs)
  }
}

/** Tables of the top functions and owners; with the requests served, also self time per request. */
export function formatProfile(summary: ProfileSummary, top = 25, requests?: number): string {
  const share = (ms: number) => `${((ms / summary.busyMs) * 100).toFixed(1)} %`
  const perRequest = requests ? (ms: number) => ` | ${((ms * 1000) / requests).toFixed(1)}` : () => ''
  const perRequestHeader = requests ? ' | µs/req' : ''
  const perRequestAlign = requests ? '---:|' : ''
  const busy = summary.functions.filter((entry) => entry.functionName !== '(idle)')
  const lines = [
    `Profile: ${(summary.totalMs / 1000).toFixed(1)} s sampled, ${(summary.busyMs / 1000).toFixed(1)} s busy ` +
      `(${((summary.idleMs / summary.totalMs) * 100).toFixed(1)} % idle); shares are of busy time` +
      (requests ? `, µs/req is self time over the ${requests} requests served.` : '.'),
    '',
    `Top ${top} functions by self time:`,
    '',
    `| # | self ms${perRequestHeader} | share | function | where |`,
    `|---:|---:|${perRequestAlign}---:|---|---|`
  ]
  busy.slice(0, top).forEach((entry, index) => {
    lines.push(
      `| ${index + 1} | ${entry.selfMs.toFixed(0)}${perRequest(entry.selfMs)} | ${share(entry.selfMs)} | ` +
        `${entry.functionName} | ${entry.location || entry.owner} |`
    )
  })
  lines.push(
    '',
    'Self time by owner (package, service code, node built-ins, V8):',
    '',
    `| owner | self ms${perRequestHeader} | share |`,
    `|---|---:|${perRequestAlign}---:|`
  )
  for (const owner of summary.owners.filter((entry) => entry.owner !== '(idle)').slice(0, 15)) {
    lines.push(`| ${owner.owner} | ${owner.selfMs.toFixed(0)}${perRequest(owner.selfMs)} | ${share(owner.selfMs)} |`)
  }
  return lines.join('\n')
}

export async function readProfile(file: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(file, 'utf8')) as CpuProfile
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, count] = process.argv.slice(2)
  if (!file) {
    process.stderr.write('Usage: node dist-bench/bench/profile-top.js FILE.cpuprofile [N]\n')
    process.exit(2)
  }
  const { ROOT } = await import('./harness.js')
  const summary = summarizeProfile(await readProfile(file), ROOT)
  process.stdout.write(`${formatProfile(summary, Number(count ?? 25))}\n`)
}
