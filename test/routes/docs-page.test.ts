import type { FastifyInstance } from 'fastify'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync'
]

let database: TestDatabase
let app: FastifyInstance
let browser: Browser
let origin: string

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
})
afterAll(async () => {
  await browser?.close()
  await app?.close()
  await database?.drop()
})

it('shows the three operations at /v1/docs with every request but those to the service blocked', async () => {
  const context = await browser.newContext()
  const blocked: string[] = []
  const failed: string[] = []
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue()
    blocked.push(url.href)
    return route.abort('internetdisconnected')
  })
  const page = await context.newPage()
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`)
  })
  page.on('requestfailed', (request) => failed.push(`failed ${request.url()}`))

  await page.goto(`${origin}/v1/docs`)
  const operations = page.locator('.opblock')
  await expect.poll(() => operations.count(), { timeout: 10_000 }).toBe(3)
  const shown = await operations.evaluateAll((blocks) =>
    blocks.map((block) => ({
      method: block.querySelector('.opblock-summary-method')?.textContent?.trim(),
      path: block.querySelector('.opblock-summary [data-path]')?.getAttribute('data-path'),
      deprecated: block.classList.contains('opblock-deprecated')
    }))
  )
  expect(shown).toEqual([
    { method: 'GET', path: '/pets', deprecated: false },
    { method: 'POST', path: '/pets', deprecated: false },
    { method: 'GET', path: '/pets/{petId}', deprecated: true }
  ])
  await expect.poll(() => page.locator('.info .title').textContent()).toContain('Animal Store API')

  // Everything the page needed came from the service itself, from installed packages.
  expect(blocked).toEqual([])
  expect(failed).toEqual([])
  await context.close()
})
