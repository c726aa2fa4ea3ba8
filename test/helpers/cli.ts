import { expect } from 'vitest'
import { runCli } from '../../harness/processes.js'

/**
 * The CLI on the database at `url()`: `run` gives the process's outcome as it is; `cli` expects
 * success with nothing on stderr and gives stdout; `json` adds `--json` and parses what it prints.
 */
export function cliOn(url: () => string) {
  const run = (...args: string[]) => runCli(args, { DATABASE_URL: url() })
  const cli = async (...args: string[]) => {
    const result = await run(...args)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    return result.stdout
  }
  const json = async (...args: string[]) => JSON.parse(await cli(...args, '--json'))
  return { run, cli, json }
}
