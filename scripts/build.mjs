// Transpiles the TypeScript into dist/, and bundles the admin console into dist/console/, when their
// inputs changed since the last build, and only then.
// Processes that start together (two `npm start`, a test run beside a server) take turns through a
// lock, so none of them imports a file another is still writing.
// Usage: node scripts/build.mjs [tsconfig file, default tsconfig.build.json]
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import lockfile from 'proper-lockfile'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function files(path) {
  if (!statSync(path, { throwIfNoEntry: false })) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path).flatMap((entry) => files(join(path, entry)))
}

/** A digest of everything the build reads: the tsconfig files, the lockfile, the included folders and the console. */
function inputsDigest(config) {
  const parsed = JSON.parse(readFileSync(join(ROOT, config), 'utf8'))
  const tsconfigs = readdirSync(ROOT).filter((name) => /^tsconfig.*\.json$/.test(name))
  const inputs = [
    ...tsconfigs,
    'package-lock.json',
    'console',
    'client/src',
    'scripts/build.mjs',
    ...(parsed.include ?? [])
  ]
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
      // Transpiled file by file, as tsc would emit them, in a second where tsc took 15: the types are
      // checked by `npm run typecheck`, which CI runs.
      const parsed = JSON.parse(readFileSync(join(ROOT, config), 'utf8'))
      await build({
        entryPoints: parsed.include
          .flatMap((folder) => files(join(ROOT, folder)))
          .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
        outdir: outDir,
        outbase: ROOT,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        sourcemap: true,
        logLevel: 'warning'
      })
      copySqlFiles('migrations', join(outDir, 'migrations'))
      await buildConsole(join(outDir, 'console'))
      writeFileSync(stamp, inputsDigest(config))
    }
  } finally {
    await release()
  }
}

/** The .sql files a migration reads beside it (0028_baseline.sql), which tsc does not copy. */
function copySqlFiles(from, into) {
  for (const file of files(join(ROOT, from)).filter((path) => path.endsWith('.sql'))) {
    const target = join(into, relative(join(ROOT, from), file))
    mkdirSync(dirname(target), { recursive: true })
    copyFileSync(file, target)
  }
}

/**
 * The admin console: one script and one stylesheet bundled by esbuild with content hashes in their
 * names, and the page that loads them, in `into`. Nothing inline, so its Content-Security-Policy
 * can refuse inline script and style.
 */
async function buildConsole(into) {
  rmSync(into, { recursive: true, force: true })
  const result = await build({
    entryPoints: { console: join(ROOT, 'console/src/main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: join(into, 'assets'),
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning'
  })
  const outputs = Object.keys(result.metafile.outputs).map((output) => basename(output))
  const named = (extension) => outputs.find((output) => output.endsWith(extension))
  const page = readFileSync(join(ROOT, 'console/index.html'), 'utf8')
    .replace('{{script}}', `assets/${named('.js')}`)
    .replace('{{stylesheet}}', `assets/${named('.css')}`)
  writeFileSync(join(into, 'index.html'), page)
}
