// A rolling upgrade under the chaos load (CHAOS_UPGRADE_FROM): the previous release checked out in a
// git worktree of its own, installed and built as its package.json says; the new release's
// migrations run against the database while the previous release serves.
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT, run, runCli } from '../harness/processes.js'
import type { KeyIssuer } from './load.js'

/** A checkout the instances start from: its commit as reports name it, and its folder. */
export interface Release {
  commit: string
  folder: string
}

/** What the migration step did: from when to when, whether it succeeded, and what it said. */
export interface MigrationRecord {
  at: number
  endedAt: number
  ok: boolean
  /** The migrations applied, as `migrate` printed them. */
  output: string
}

/** The upgrade as the report keeps it: from which commit to which, and its migration. */
export interface UpgradeRecord {
  from: string
  to: string
  migration: MigrationRecord | null
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()

/** The commit CHAOS_UPGRADE_FROM names, as a short hash; throws, saying why, when the repository lacks it. */
export function resolveCommit(name: string): string {
  try {
    return git('rev-parse', '--short=7', '--verify', `${name}^{commit}`)
  } catch {
    throw new Error(`CHAOS_UPGRADE_FROM=${name} names no commit of this repository (a shallow clone lacks history)`)
  }
}

/** Runs one step of the checkout in `cwd`; throws with its output when it fails. */
async function step(what: string, command: string, args: string[], cwd: string) {
  const result = await run(command, args, { cwd })
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stdout}${result.stderr}`)
}

/**
 * The release at `commit` in a detached git worktree in a temporary folder, installed with `npm ci`
 * and built with its own `npm run build`; `remove` takes the worktree away again.
 */
export async function checkoutRelease(
  commit: string,
  log: (line: string) => void
): Promise<Release & { remove(): Promise<void> }> {
  const parent = await mkdtemp(join(tmpdir(), 'animal-store-chaos-release-'))
  const folder = join(parent, commit)
  const remove = async () => {
    await run('git', ['worktree', 'remove', '--force', folder], { cwd: ROOT })
    await rm(parent, { recursive: true, force: true })
    await run('git', ['worktree', 'prune'], { cwd: ROOT })
  }
  try {
    await step('git worktree add', 'git', ['worktree', 'add', '--detach', folder, commit], ROOT)
    log(`  ${commit} checked out in ${folder}; npm ci`)
    await step('npm ci', 'npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], folder)
    log(`  ${commit}: npm run build`)
    await step('npm run build', 'npm', ['run', '--silent', 'build'], folder)
  } catch (error) {
    await remove()
    throw error
  }
  return { commit, folder, remove }
}

/**
 * The release's own issueApiKey, from its build: the keys clients hold when an upgrade begins were
 * issued by the release that served then, in the format it accepts.
 */
export async function releaseKeyIssuer(release: Release): Promise<KeyIssuer> {
  const built = pathToFileURL(join(release.folder, 'dist/src/repositories/api-keys.js')).href
  const module = (await import(built)) as { issueApiKey: KeyIssuer }
  return module.issueApiKey
}

/** The new release's `migrate` command (its built CLI) against the primary, as a deploy's migration job runs it. */
export async function migrate(directUrl: string): Promise<MigrationRecord> {
  const at = Date.now()
  const result = await runCli(['migrate'], {
    DATABASE_URL: directUrl,
    DATABASE_DIRECT_URL: directUrl,
    LOG_LEVEL: 'warn'
  })
  return {
    at,
    endedAt: Date.now(),
    ok: result.code === 0,
    output: `${result.stdout}${result.stderr}`.trim()
  }
}
