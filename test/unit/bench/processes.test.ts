import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { cpuSeconds, serverCpuSeconds } from '../../../bench/processes.js'

/** A child that spins for `ms` of wall time, so that it takes about that much CPU. */
const SPIN = (ms: number) => ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end);`]

/** This process's children's CPU as serverCpuSeconds counts it: its total less its own. */
const childrenSeconds = () => serverCpuSeconds(process.pid) - cpuSeconds(process.pid)

describe("a database server's CPU", () => {
  it('counts the children that run and those that ended, as a postmaster has them', async () => {
    const before = childrenSeconds()
    spawnSync(process.execPath, SPIN(400))
    const ended = childrenSeconds() - before
    expect(ended).toBeGreaterThan(0.2)

    const running = spawn(process.execPath, SPIN(2_000))
    await new Promise((resolve) => setTimeout(resolve, 600))
    const whileRunning = childrenSeconds() - before - ended
    running.kill()
    await once(running, 'exit')
    expect(whileRunning).toBeGreaterThan(0.2)
  })
})
