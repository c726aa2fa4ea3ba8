import { readdir, readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../../..')

it('the README stays a door: at most 150 lines, linking every file in docs/', async () => {
  const readme = await readFile(resolve(ROOT, 'README.md'), 'utf8')
  expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(150)
  const docs = (await readdir(resolve(ROOT, 'docs'))).filter((name) => name.endsWith('.md'))
  const unlinked = docs.filter((name) => !readme.includes(`](docs/${name})`))
  expect(unlinked, 'docs/ files the README does not link').toEqual([])
})
