/**
 * What Linux's /proc tells about a run: a server's peak RSS and write syscalls, the CPU time of
 * the bench's own processes (servers, embedded Postgres), and the CPU that other processes on the
 * machine took meanwhile, which makes figures from a shared machine worth less.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'

/** Peak resident set size of the process since start or the last reset (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m)
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`)
  return Number(match[1]) * 1024
}

/** Resets VmHWM to the current RSS (Linux 4.0+); false when the kernel does not allow it. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/**
 * Write system calls the process has made, all threads together: for a server, one per HTTP
 * response and one per database round trip (the pg driver corks each query into one write).
 */
export function writeSyscalls(pid: number): number {
  const match = readFileSync(`/proc/${pid}/io`, 'utf8').match(/^syscw:\s+(\d+)$/m)
  return match ? Number(match[1]) : Number.NaN
}

let ticksPerSecond: number | undefined
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

interface ProcessEntry {
  ppid: number
  comm: string
  /** user + system CPU time, in clock ticks */
  ticks: number
  startTime: string
}

export interface ProcessSample {
  at: number
  /** Busy CPU time of the whole machine (all but idle and iowait), in clock ticks. */
  machineBusyTicks: number
  processes: Map<number, ProcessEntry>
}

function readProcess(pid: number): ProcessEntry | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name is in parentheses and may hold spaces; fields after it are plain.
  const close = stat.lastIndexOf(')')
  const comm = stat.slice(stat.indexOf('(') + 1, close)
  const fields = stat.slice(close + 2).split(' ')
  // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15, starttime 22.
  return { ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]), startTime: fields[19]! }
}

export function sampleProcesses(): ProcessSample {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal
  const busy = cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]! + cpu[7]!
  const processes = new Map<number, ProcessEntry>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const entry = readProcess(Number(name))
    if (entry) processes.set(Number(name), entry)
  }
  return { at: performance.now(), machineBusyTicks: busy, processes }
}

/** The process and everything it started, as the sample saw them. */
function descendants(sample: ProcessSample, root: number): Set<number> {
  const children = new Map<number, number[]>()
  for (const [pid, entry] of sample.processes) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), pid])
  const found = new Set<number>([root])
  const queue = [root]
  while (queue.length) {
    for (const child of children.get(queue.pop()!) ?? []) if (!found.has(child)) found.add(child) && queue.push(child)
  }
  return found
}

export interface CpuAccount {
  seconds: number
  /** CPU seconds of one server process. */
  serverSeconds: number
  /** CPU seconds of the bench's own Postgres processes; null when the database is not the bench's. */
  postgresSeconds: number | null
  /** CPU seconds of processes outside the bench (kernel threads left out); processes that started and
   * ended between the samples are not seen, so this is a lower bound. */
  otherSeconds: number
  /** Busy CPU seconds of the whole machine. */
  machineSeconds: number
}

export function accountCpu(
  before: ProcessSample,
  after: ProcessSample,
  serverPid: number,
  ownPostgres: boolean
): CpuAccount {
  const ticks = clockTicks()
  const ours = descendants(after, process.pid)
  for (const pid of descendants(before, process.pid)) ours.add(pid)
  let server = 0
  let postgres = 0
  let other = 0
  for (const [pid, entry] of after.processes) {
    const previous = before.processes.get(pid)
    const delta = entry.ticks - (previous && previous.startTime === entry.startTime ? previous.ticks : 0)
    if (pid === serverPid) server += delta
    else if (ours.has(pid)) {
      if (entry.comm === 'postgres') postgres += delta
    } else if (pid !== 2 && entry.ppid !== 2) other += delta
  }
  return {
    seconds: (after.at - before.at) / 1000,
    serverSeconds: server / ticks,
    postgresSeconds: ownPostgres ? postgres / ticks : null,
    otherSeconds: other / ticks,
    machineSeconds: (after.machineBusyTicks - before.machineBusyTicks) / ticks
  }
}

/**
 * Waits until other processes on the machine take less than `threshold` of one core over a second,
 * for at most `maxSeconds`; returns how long it waited and what the last second showed.
 */
export async function waitForQuiet(
  maxSeconds: number,
  threshold: number
): Promise<{ waitedSeconds: number; otherCores: number }> {
  const started = performance.now()
  let otherCores = 0
  for (;;) {
    const before = sampleProcesses()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const account = accountCpu(before, sampleProcesses(), -1, false)
    otherCores = account.otherSeconds / account.seconds
    const waitedSeconds = (performance.now() - started) / 1000
    if (otherCores < threshold || waitedSeconds >= maxSeconds) return { waitedSeconds, otherCores }
  }
}
