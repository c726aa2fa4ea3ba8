// `npm run chaos:soak`: chaos runs one after the other, each with a fresh random seed, until
// CHAOS_SOAK_RUNS (default 20) have held or one breaks. A line per run and a Markdown table at the
// end; exits 1 on the first run that broke an invariant (or failed), naming its seed so that
// `CHAOS_SEED=… CHAOS_SECONDS=… npm run chaos` replays it. CHAOS_SECONDS is each run's length.
import { spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ROOT } from '../harness/processes.js'

const runs = Number(process.env.CHAOS_SOAK_RUNS ?? 20)
const seconds = process.env.CHAOS_SECONDS ?? '90'
if (!Number.isInteger(runs) || runs < 1) {
  console.error('CHAOS_SOAK_RUNS must be a whole number, at least 1')
  process.exit(2)
}

interface Run {
  seed: number
  exitCode: number | null
  seconds: number
  report: string
}

/** One chaos run with `seed`, its output kept in `log`; resolves when it has ended. */
function chaosRun(seed: number, log: string): Promise<Run> {
  const started = Date.now()
  const output = createWriteStream(log)
  let text = ''
  const child = spawn(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'chaos/run.ts'], {
    cwd: ROOT,
    env: { ...process.env, CHAOS_SEED: String(seed), CHAOS_SECONDS: seconds },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output.write(chunk)
      text += chunk.toString()
    })
  }
  return new Promise((resolve) => {
    child.on('exit', (exitCode) => {
      output.end()
      const report = /report in (\S+)/.exec(text.slice(-4000))?.[1] ?? log
      resolve({ seed, exitCode, seconds: Math.round((Date.now() - started) / 1000), report })
    })
  })
}

async function main() {
  const folder = join(ROOT, 'reports', 'chaos-soak', new Date().toISOString().replaceAll(':', '-').slice(0, 19))
  await mkdir(folder, { recursive: true })
  console.log(`${runs} chaos runs of ${seconds} s, each with a fresh seed; output in ${folder}`)
  const done: Run[] = []
  for (let i = 1; i <= runs; i++) {
    const seed = randomInt(0, 2 ** 32)
    const run = await chaosRun(seed, join(folder, `${seed}.log`))
    done.push(run)
    const outcome = run.exitCode === 0 ? 'every invariant held' : `broke (exit ${run.exitCode})`
    console.log(`run ${i}/${runs}: CHAOS_SEED=${seed} ${outcome} in ${run.seconds} s; ${run.report}`)
    if (run.exitCode !== 0) break
  }
  console.log('\n| run | seed | outcome | seconds |\n|---:|---:|---|---:|')
  for (const [i, run] of done.entries()) {
    console.log(
      `| ${i + 1} | ${run.seed} | ${run.exitCode === 0 ? 'held' : `broke (exit ${run.exitCode})`} | ${run.seconds} |`
    )
  }
  const broken = done.find((run) => run.exitCode !== 0)
  if (broken) {
    console.log(`\nCHAOS_SEED=${broken.seed} CHAOS_SECONDS=${seconds} npm run chaos: replays the run that broke`)
    process.exitCode = 1
  } else {
    console.log(`\n${done.length} runs, every invariant held in each`)
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
