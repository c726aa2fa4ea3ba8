import { Writable } from 'node:stream'
import { expect } from 'vitest'
import { runCli } from '../../src/cli/program.js'

/** A stream that keeps what is written to it. */
function collector() {
  let text = ''
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    }
  })
  return { stream, text: () => text }
}

/**
 * The CLI's program run in this process with its environment `env` and its stdout and stderr
 * captured: what `node dist/src/cli.js ...args` prints and exits with, without starting Node.js each
 * time. Each run opens the database as the process would.
 */
async function runCliHere(args: string[], env: Record<string, string | undefined>) {
  const stdout = collector()
  const stderr = collector()
  const code = await runCli(args, { env, stdout: stdout.stream, stderr: stderr.stream })
  return { code, stdout: stdout.text(), stderr: stderr.text() }
}

/**
 * The CLI on the database at `url()`: `run` gives the outcome as it is; `cli` expects success with
 * nothing on stderr and gives stdout; `json` adds `--json` and parses what it prints.
 */
export function cliOn(url: () => string) {
  const run = (...args: string[]) => runCliHere(args, { DATABASE_URL: url() })
  const cli = async (...args: string[]) => {
    const result = await run(...args)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    return result.stdout
  }
  const json = async (...args: string[]) => JSON.parse(await cli(...args, '--json'))
  return { run, cli, json }
}
