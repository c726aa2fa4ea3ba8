// Compiles the TypeScript into dist/ when its inputs changed since the last build, and only then.
// Processes that start together (two `npm start`, a test run beside a server) take turns through a
// lock, so none of them imports a file another is still writing.
// Usage: node scripts/build.mjs [tsconfig file, default tsconfig.build.json]
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import lockfile from 'proper-lockfile'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function files(path) {
  if (!statSync(path, { throwIfNoEntry: false })) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).flatMap((entry) => files(join(path, entry)))
}

/** A digest of everything the build reads: the tsconfig files, the lockfile and the included folders. */
function inputsDigest(config) {
  const parsed = JSON.parse(readFileSync(join(ROOT, config), 'utf8'))
  const tsconfigs = readdirSync(ROOT).filter((name) => /^tsconfig.*\.json$/.test(name))
  const inputs = [...tsconfigs, 'package-lock.json', ...(parsed.include ?? [])]
  const hash = createHash('sha256')
  for (const file of inputs.flatMap((input) => files(join(ROOT, input))).sort()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0')
  }
  return hash.digest('hex')
}

const config = process.argv[2] ?? 'tsconfig.build.json'
const outDir = join(ROOT, config === 'tsconfig.bench.json' ? 'dist-bench' : 'dist')
const stamp = join(outDir, '.inputs-digest')
const current = () => {
  try {
    return readFileSync(stamp, 'utf8') === inputsDigest(config)
  } catch {
    return false
  }
}

if (!current()) {
  mkdirSync(outDir, { recursive: true })
  // A lock whose holder died is taken over once it is 10 s old.
  const release = await lockfile.lock(outDir, {
    lockfilePath: `${outDir}.lock`,
    stale: 10_000,
    retries: { retries: 600, minTimeout: 100, maxTimeout: 200 }
  })
  try {
    if (!current()) {
      execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], {
        cwd: ROOT,
        stdio: 'inherit'
      })
      writeFileSync(stamp, inputsDigest(config))
    }
  } finally {
    await release()
  }
}
