/**
 * `npm run bench:log`: the CPU time of one access line, written through the service's own logger
 * configuration (`createLogger`, `LOG_LEVEL=info`, `NODE_ENV=production`, its asynchronous stdout)
 * by its own `AccessLog`, from a request and reply Fastify made. The measuring process's stdout goes
 * to a file, then to a pipe that this process reads and discards, as a container runtime does.
 * CPU time is the measuring process's, every thread (`process.cpuUsage`), the final flush included;
 * each line is written in an event-loop turn of its own, as a server writes them, and the cost of
 * the turns alone, measured the same way, is taken off.
 *
 * LOG_LINES (200,000) lines a run, LOG_RUNS (5) runs a destination; the verdict is the median.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import { AccessLog, createLogger, requestLoggerFactory } from '../src/logging.js'
import { median } from './report.js'

/** The goal for the access line: at most this much CPU per line. */
const GOAL_US = 10

interface Measured {
  lines: number
  cpuUsPerLine: number
  wallUsPerLine: number
}

/** In the measuring process: `lines` access lines to stdout, then what they cost, as JSON on stderr. */
async function measure(lines: number): Promise<void> {
  const logger = createLogger({ LOG_LEVEL: 'info', NODE_ENV: 'production' })
  const controller = new AccessLog(logger)
  const loggerInstance: FastifyBaseLogger = logger
  const app = Fastify({
    loggerInstance,
    logController: controller,
    childLoggerFactory: requestLoggerFactory
  })
  let seen: { request: FastifyRequest; reply: FastifyReply } | undefined
  app.get('/v1/pets/:petId', async (request, reply) => {
    // As the guard leaves a request whose key is valid.
    Object.assign(request, { apiKey: { prefix: 'ask_Ab3dE6gH' } })
    seen = { request, reply }
    return { id: 1 }
  })
  await app.inject({ method: 'GET', url: '/v1/pets/1?include=category' })
  const { request, reply } = seen!

  // As in a server, each line is written in an event-loop turn of its own, so a write under way
  // overlaps the next lines rather than all of them at once; the turns alone are measured too, and
  // taken off.
  const turns = async (count: number, log: boolean) => {
    const cpu = process.cpuUsage()
    const began = performance.now()
    for (let i = 0; i < count; i++) {
      if (log) controller.requestCompleted(null, request, reply)
      await new Promise(setImmediate)
    }
    await flushed(logger)
    const used = process.cpuUsage(cpu)
    return { cpuUs: used.user + used.system, wallUs: (performance.now() - began) * 1000 }
  }
  // Warm-up, so that the optimised code is what is measured.
  await turns(20_000, true)
  await turns(20_000, false)
  const bare = await turns(lines, false)
  const logged = await turns(lines, true)
  const result: Measured = {
    lines,
    cpuUsPerLine: (logged.cpuUs - bare.cpuUs) / lines,
    wallUsPerLine: (logged.wallUs - bare.wallUs) / lines
  }
  process.stderr.write(`${JSON.stringify(result)}\n`)
}

/**
 * Resolves once every line written so far has reached the destination. The flush ends in an fsync,
 * which a pipe refuses (EINVAL) once the lines are in it.
 */
function flushed(logger: ReturnType<typeof createLogger>): Promise<void> {
  return new Promise((resolve, reject) =>
    logger.flush((error) => (error && (error as NodeJS.ErrnoException).code !== 'EINVAL' ? reject(error) : resolve()))
  )
}

/** Runs the measuring process with its stdout on `stdout` ('pipe': read here and discarded). */
async function run(lines: number, stdout: number | 'pipe'): Promise<Measured> {
  const child = spawn(process.execPath, [import.meta.filename, 'measure', String(lines)], {
    stdio: ['ignore', stdout, 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  })
  let bytes = 0
  child.stdout?.on('data', (chunk: Buffer) => (bytes += chunk.length))
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const [code] = (await once(child, 'close')) as [number | null]
  if (code !== 0) throw new Error(`the measuring process exited ${code}:\n${stderr}`)
  if (stdout === 'pipe' && bytes === 0) throw new Error('no line reached the pipe')
  return JSON.parse(stderr.trim().split('\n').pop()!) as Measured
}

async function main() {
  const lines = Number(process.env.LOG_LINES ?? 200_000)
  const runs = Number(process.env.LOG_RUNS ?? 5)
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-access-log-'))
  let missed = false
  try {
    for (const target of ['file', 'pipe'] as const) {
      const results: Measured[] = []
      for (let i = 0; i < runs; i++) {
        if (target === 'pipe') {
          results.push(await run(lines, 'pipe'))
          continue
        }
        const file = join(dir, `access-${i}.log`)
        const fd = openSync(file, 'w')
        try {
          results.push(await run(lines, fd))
        } finally {
          closeSync(fd)
        }
        if (statSync(file).size === 0) throw new Error('no line reached the file')
      }
      const cpu = median(results.map((each) => each.cpuUsPerLine))
      const wall = median(results.map((each) => each.wallUsPerLine))
      const rounds = results.map((each) => each.cpuUsPerLine.toFixed(2)).join(', ')
      process.stdout.write(
        `stdout to a ${target}: ${cpu.toFixed(2)} µs CPU per line (median of ${runs} runs of ${lines.toLocaleString('en')} lines: ${rounds}), ${wall.toFixed(2)} µs wall; goal at most ${GOAL_US} µs\n`
      )
      if (cpu > GOAL_US) missed = true
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  if (missed) process.exitCode = 1
}

if (process.argv[2] === 'measure') await measure(Number(process.argv[3]))
else await main()
