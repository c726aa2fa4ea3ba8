// `npm run chaos:docs -- [reports/chaos/<time> ...]`: keeps each named run's summary in
// docs/chaos/runs/ (the last one's chart as docs/chaos-chart.svg, unless it was an upgrade), then
// writes the Runs section of docs/history/reliability.md from every kept summary. With no folder,
// only the section is written again.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../harness/processes.js'
import { runsMarkdown, summarize, withRuns, type RunSummary } from './report.js'

export const RUNS = join(ROOT, 'docs/chaos/runs')
/** The reliability history, whose Runs section shows the kept runs. */
export const RUNS_PAGE = join(ROOT, 'docs/history/reliability.md')

export const keptRuns = (): RunSummary[] =>
  readdirSync(RUNS)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(RUNS, name), 'utf8')) as RunSummary)

// Run as a script, not imported by the test that reads the kept runs.
if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? '')).href) {
  mkdirSync(RUNS, { recursive: true })
  const folders = process.argv.slice(2)
  for (const folder of folders) {
    // From report.json, so that a run from before summary.json existed can be kept too.
    const summary = summarize(
      JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as Parameters<typeof summarize>[0]
    )
    const upgrade = summary.upgrade ? `-upgrade-from-${summary.upgrade.from}` : ''
    const name = `${summary.startedAt.slice(0, 16).replace(':', '-')}${upgrade}-seed-${summary.seed}-${summary.seconds}s.json`
    writeFileSync(join(RUNS, name), `${JSON.stringify(summary, null, 2)}\n`)
    console.log(`kept the summary of ${folder} as docs/chaos/runs/${name}`)
  }
  // The faults' chart: a rolling upgrade's (CHAOS_UPGRADE_FROM) shows no fault of the database.
  const faultRuns = folders.filter((folder) => !JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')).upgrade)
  if (faultRuns.length) copyFileSync(join(faultRuns.at(-1)!, 'chart.svg'), join(ROOT, 'docs/chaos-chart.svg'))
  writeFileSync(RUNS_PAGE, withRuns(readFileSync(RUNS_PAGE, 'utf8'), runsMarkdown(keptRuns())))
  console.log(`docs/history/reliability.md: the Runs section written from ${keptRuns().length} kept run(s)`)
}
