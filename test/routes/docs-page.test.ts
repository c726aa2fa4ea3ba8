import type { FastifyInstance } from 'fastify'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../src/db/embedded.js'
import { createTestApp, issueTestKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { describeWith } from '../helpers/requirements.js'
import { TOOLS } from '../../harness/programs.js'

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
let key: string

describeWith('chromium')('the docs page in a browser', () => {
  beforeAll(async () => {
    database = await createTestDatabase()
    // The document's server is where the page sends "Try it out" requests: this listener.
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    app = await createTestApp(database, { env: { PUBLIC_BASE_URL: `${origin}/v1` } })
    key = await issueTestKey(database)
    await app.listen({ host: '127.0.0.1', port })
    browser = await chromium.launch({ executablePath: TOOLS.chromium.path, args: CHROMIUM_ARGS })
  })
  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await database?.drop()
  })

  it('shows the eleven operations at /v1/docs and calls the service, within its policy, with every other request blocked', async () => {
    const context = await browser.newContext()
    const blocked: string[] = []
    const failed: string[] = []
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url())
      if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue()
      blocked.push(url.href)
      return route.abort('internetdisconnected')
    })
    // Every Content-Security-Policy violation the page reports, from its first script on.
    await context.addInitScript({
      content: `window.cspViolations = []
        document.addEventListener('securitypolicyviolation', (event) =>
          window.cspViolations.push(event.effectiveDirective + ' ' + event.blockedURI))`
    })
    const page = await context.newPage()
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`)
    })
    page.on('requestfailed', (request) => failed.push(`failed ${request.url()}`))

    const served = await page.goto(`${origin}/v1/docs`)
    expect(served!.headers()['content-security-policy']).toContain("default-src 'self'")
    const operations = page.locator('.opblock')
    await expect.poll(() => operations.count(), { timeout: 10_000 }).toBe(11)
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
      { method: 'GET', path: '/pets/{petId}', deprecated: true },
      { method: 'GET', path: '/rate_limit', deprecated: false },
      { method: 'GET', path: '/keys', deprecated: false },
      { method: 'POST', path: '/keys', deprecated: false },
      { method: 'POST', path: '/keys/{id}/rotate', deprecated: false },
      { method: 'DELETE', path: '/keys/{id}', deprecated: false },
      { method: 'GET', path: '/usage', deprecated: false },
      { method: 'POST', path: '/decisions', deprecated: false },
      { method: 'GET', path: '/authorize', deprecated: false }
    ])
    await expect.poll(() => page.locator('.info .title').textContent()).toContain('Animal Store API')

    // Authorize with a key and try an operation: the page calls the service under its policy.
    await page.locator('.btn.authorize').click()
    // The key's scheme; the other, serviceAuth, is the operator token that decisions take.
    const keyAuth = page.locator('.auth-container').filter({ hasText: 'bearerAuth' })
    await keyAuth.locator('input').fill(key)
    await keyAuth.locator('.auth-btn-wrapper .btn.authorize').click()
    await keyAuth.locator('.btn-done').click()
    await operations.first().locator('.opblock-summary').click()
    await page.locator('.try-out__btn').click()
    await page.locator('.execute').click()
    await expect
      .poll(() => page.locator('.live-responses-table tbody .response-col_status').first().textContent(), {
        timeout: 10_000
      })
      .toContain('200')

    // Operations sit under their named tags, the title links the served document, and Pets names its item type.
    expect(
      await page.locator('.opblock-tag').evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag')))
    ).toEqual(['pets', 'rate limits', 'keys', 'usage', 'decisions'])
    const link = page.locator('.info .link, .info a:has(.url)').first()
    expect(new URL((await link.getAttribute('href'))!, page.url()).href).toBe(`${origin}/v1/openapi.json`)
    expect(await link.textContent()).toContain('/v1/openapi.json')
    const pets = page.locator('.json-schema-2020-12-head', {
      has: page.locator('.json-schema-2020-12__title', { hasText: /^Pets$/ })
    })
    expect(await pets.locator('.json-schema-2020-12__attribute--primary').textContent()).toBe('array<object>')
    await page.screenshot({ path: '/tmp/docs-page.png', fullPage: true })

    // Everything the page needed came from the service itself, from installed packages, within its policy.
    expect(blocked).toEqual([])
    expect(failed).toEqual([])
    expect(await page.evaluate('window.cspViolations')).toEqual([])
    await context.close()
  })
})
