/**
 * `npm run bench:docs [-- FILE]`: puts a bench run (bench/results/latest.json by default) into
 * docs/benchmark.md and docs/scaling.md, between their `bench:results` markers, and draws
 * docs/benchmark-keys.svg, so every figure there comes from that one run.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  benchmarkBlock,
  growthPlot,
  replaceBetweenMarkers,
  RESULTS_DIR,
  scalingBlock,
  type BenchResults
} from './report.js'

const DOCS = join(import.meta.dirname, '..', '..', 'docs')
const file = process.argv[2] ?? join(RESULTS_DIR, 'latest.json')
const results = JSON.parse(await readFile(file, 'utf8')) as BenchResults
for (const [name, block] of [
  ['benchmark.md', benchmarkBlock(results)],
  ['scaling.md', scalingBlock(results)]
] as const) {
  const path = join(DOCS, name)
  await writeFile(path, replaceBetweenMarkers(await readFile(path, 'utf8'), block))
}
await writeFile(join(DOCS, 'benchmark-keys.svg'), growthPlot(results))
process.stdout.write(`docs/benchmark.md, docs/scaling.md and docs/benchmark-keys.svg now show ${file}\n`)
