import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'

const SCRIPT = resolve(import.meta.dirname, '../../../scripts/conflict-markers.mjs')
// Built from parts, so that this file holds no marker itself.
const [OURS, DIVIDER, THEIRS] = ['<', '=', '>'].map((character) => character.repeat(7))

let folder: string
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'animal-store-conflicts-'))
  execFileSync('git', ['init', '--quiet', folder])
})
afterEach(() => rm(folder, { recursive: true, force: true }))

const check = () => spawnSync(process.execPath, [SCRIPT, folder], { encoding: 'utf8' })

it('fails on a conflict left in any file, naming the file and the lines', async () => {
  await writeFile(join(folder, 'guide.md'), `# Guide\n\n${OURS} HEAD\none\n${DIVIDER}\ntwo\n${THEIRS} topic\n`)
  const result = check()
  expect(result.status).toBe(1)
  expect(result.stderr).toContain(`guide.md:3:${OURS} HEAD`)
  expect(result.stderr).toContain(`guide.md:5:${DIVIDER}`)
  expect(result.stderr).toContain(`guide.md:7:${THEIRS} topic`)
})

it('passes a tree without one, lines that only look alike included', async () => {
  await writeFile(join(folder, 'notes.md'), `Title\n${'='.repeat(8)}\n\n${OURS}< not a marker\n${DIVIDER} nor this\n`)
  const result = check()
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
})
