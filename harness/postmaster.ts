// Signals to a PostgreSQL server and every process it forked, found from its data directory: to
// crash it as `pg_ctl stop -m immediate` would, or to freeze it so that connections stay open and
// nothing answers. For the tests' clusters and the chaos run's primary alike.
import { readdirSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// postmaster.pid holds the running server's pid on its first line.
async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0])
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Sends `name` to `pid`, if it still runs. */
export function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name)
  } catch {}
}

/** The processes whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // Fields after the command name, which is in parentheses and may hold spaces: state, ppid, ...
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (parent === pid) children.push(Number(entry))
    } catch {}
  }
  return children
}

/** SIGQUIT is what `pg_ctl stop -m immediate` sends: every process quits at once, nothing is flushed. */
export async function crashPostmaster(dataDir: string): Promise<void> {
  const pid = await postmasterPid(dataDir)
  const children = childrenOf(pid)
  signal(pid, 'SIGQUIT')
  while ([pid, ...children].some(alive)) await sleep(20)
}

/** Stops the postmaster first, so that it forks nothing new, then its children; returns them all. */
export async function freezePostmaster(dataDir: string): Promise<number[]> {
  const pid = await postmasterPid(dataDir)
  signal(pid, 'SIGSTOP')
  const children = childrenOf(pid)
  for (const child of children) signal(child, 'SIGSTOP')
  return [pid, ...children]
}
