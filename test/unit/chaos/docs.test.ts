import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { keptRuns, RUNS_PAGE } from '../../../chaos/docs.js'
import { runsMarkdown, withRuns } from '../../../chaos/report.js'

describe("docs/history/reliability.md's chaos runs", () => {
  it('are the kept summaries in docs/chaos/runs/, as `npm run chaos:docs` writes them', () => {
    const runs = keptRuns()
    expect(runs.length).toBeGreaterThan(0)
    const document = readFileSync(RUNS_PAGE, 'utf8')
    expect(withRuns(document, runsMarkdown(runs))).toBe(document)
  })

  it('replace only what lies between the markers, and need them', () => {
    const block = runsMarkdown([])
    const document = `before\n${block}\nafter\n`
    expect(withRuns(document, 'new')).toBe('before\nnew\nafter\n')
    expect(() => withRuns('no markers', block)).toThrow(/markers/)
  })
})
