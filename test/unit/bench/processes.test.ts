import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { childrenCpuSeconds, postmasterOf } from '../../../bench/processes.js'

/** A child that spins until it has used 0.3 s of CPU, says so, then waits (using none) until it is told to end. */
const SPIN = [
  '-e',
  `const used = () => { const { user, system } = process.cpuUsage(); return user + system }
   while (used() < 300_000);
   process.stdout.write('spun')
   if (process.argv[1] === 'wait') setInterval(() => {}, 1_000)`
]

/**
 * This process's children's CPU, as serverCpuSeconds counts a postmaster's. Not this process's total
 * less its own read a moment later: on a busy machine its own time moved in between, and a child's
 * 0.3 s read as 0.27.
 */
const childrenSeconds = () => childrenCpuSeconds(process.pid)

describe("a database server's CPU", () => {
  it('counts the children that run and those that ended, as a postmaster has them', async () => {
    const before = childrenSeconds()
    spawnSync(process.execPath, SPIN)
    const ended = childrenSeconds() - before
    // /proc counts in ticks of 10 ms, its user and system time each rounded down.
    expect(ended).toBeGreaterThanOrEqual(0.25)

    const running = spawn(process.execPath, [...SPIN, 'wait'])
    await once(running.stdout, 'data')
    const whileRunning = childrenSeconds() - before - ended
    running.kill()
    await once(running, 'exit')
    expect(whileRunning).toBeGreaterThanOrEqual(0.25)
  })

  it("finds a backend's postmaster by its parent, and none for a process that is no backend", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'postmaster-'))
    try {
      // A process whose command is `postgres`, as a backend's is, whose parent is this process.
      await copyFile('/bin/sleep', join(dir, 'postgres'))
      const backend = spawn(join(dir, 'postgres'), ['30'])
      await once(backend, 'spawn')
      expect(postmasterOf(backend.pid!)).toBe(process.pid)
      expect(postmasterOf(process.pid)).toBeUndefined()
      backend.kill()
      await once(backend, 'exit')
      expect(postmasterOf(backend.pid!)).toBeUndefined()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
