// Lint: fails when a file in the tree (tracked, or new and not ignored) holds a line that git writes
// to mark a merge conflict, in any language: markdown and YAML have no parser that would refuse it.
// Usage: node scripts/conflict-markers.mjs [folder, default the current one]
import { spawnSync } from 'node:child_process'

// Git's markers at its default size: ours, the base (diff3), the divider, theirs.
const MARKER = '^(<{7}|\\|{7}|>{7})( |$)|^={7}$'
const folder = process.argv[2] ?? '.'
const found = spawnSync('git', ['grep', '-n', '-I', '--untracked', '-E', MARKER], { cwd: folder, encoding: 'utf8' })
// git grep exits 1 when nothing matches, 0 when something does, and above 1 when it cannot search.
if (found.status === 1) process.exit(0)
if (found.status === 0) {
  process.stderr.write(`Merge conflict markers:\n${found.stdout}`)
  process.exit(1)
}
process.stderr.write(`Cannot search for conflict markers: ${found.stderr || found.error}\n`)
process.exit(2)
