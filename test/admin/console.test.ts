import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/db/embedded.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestAdminApp, createTestApp, ADMIN_TOKEN } from '../helpers/app.js'
import { launchChromium, seriousAccessibilityViolations, watchedContext } from '../helpers/browser.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { ROOT } from '../../harness/processes.js'
import { describeWith } from '../helpers/requirements.js'
import { bearer, holdDatabaseClock } from '../helpers/traffic.js'
// CONSOLE_SCREENSHOTS=1 also writes each page's picture for docs/console.md.
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? join(ROOT, 'docs/images/console') : undefined

/** The part of a canvas element the chart test reads; the tests compile without the DOM's types. */
interface Canvas {
  width: number
  height: number
  getContext(type: '2d'): {
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray }
  }
}

let database: TestDatabase
let admin: FastifyInstance
let api: FastifyInstance
let origin: string
beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database)
  // A key is banned at its second refusal in a row, so the first key's traffic ends in a ban.
  api = await createTestApp(database, { env: { ADMIN_TOKEN, BAN_AFTER: '0' } })
  const port = await freePort()
  await admin.listen({ host: '127.0.0.1', port })
  origin = `http://127.0.0.1:${port}`
})
afterAll(async () => {
  await admin?.close()
  await api?.close()
  await database?.drop()
})

describe('the console on the admin listener', () => {
  it('serves its page at /admin/ under a policy that refuses inline script and style, without the token', async () => {
    const page = await admin.inject({ method: 'GET', url: '/admin/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['cache-control']).toBe('no-store')
    expect(page.headers['x-frame-options']).toBe('DENY')
    const policy = page.headers['content-security-policy'] as string
    expect(policy.split(';').sort()).toEqual(
      [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'"
      ].sort()
    )
    expect(page.body).not.toMatch(/<script>|<style|style=/)
    expect((await admin.inject({ method: 'GET', url: '/admin' })).headers.location).toBe('/admin/')
  })

  it('serves the assets the page names, by content-hashed names, cacheable for a year; others are 404', async () => {
    const page = (await admin.inject({ method: 'GET', url: '/admin/' })).body
    const assets = [...page.matchAll(/(?:src|href)="(assets\/console-[A-Z0-9]{8}\.(js|css))"/g)]
    expect(assets.map((match) => match[2]).sort()).toEqual(['css', 'js'])
    for (const [, path, extension] of assets) {
      const asset = await admin.inject({ method: 'GET', url: `/admin/${path}` })
      expect(asset.statusCode).toBe(200)
      expect(asset.headers['content-type']).toBe(`text/${extension === 'js' ? 'javascript' : 'css'}; charset=utf-8`)
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    }
    const missing = await admin.inject({ method: 'GET', url: '/admin/assets/console-AAAAAAAA.js' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().code).toBe('not_found')
  })

  it('answers the icon every browser asks for with none, without the token, cacheable for a day', async () => {
    const icon = await admin.inject({ method: 'GET', url: '/favicon.ico' })
    expect(icon.statusCode).toBe(204)
    expect(icon.body).toBe('')
    expect(icon.headers['cache-control']).toBe('public, max-age=86400')
    expect(icon.headers['x-content-type-options']).toBe('nosniff')
    expect((await admin.inject({ method: 'HEAD', url: '/favicon.ico' })).statusCode).toBe(204)
  })

  it('is not on the public port', async () => {
    expect((await api.inject({ method: 'GET', url: '/admin/' })).statusCode).toBe(404)
  })
})

describeWith('chromium')('the console in a browser', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true })
  })
  afterAll(async () => {
    await browser?.close()
  })

  /** Checks the page with axe-core and, when asked for, keeps its picture for docs/console.md. */
  const inspect = async (page: Page, name: string, picture = true) => {
    expect(await seriousAccessibilityViolations(page), name).toEqual([])
    if (SCREENSHOTS && picture) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  }
  const signIn = async (page: Page, token: string) => {
    await page.getByLabel('Admin token').fill(token)
    await page.getByRole('button', { name: 'Sign in' }).click()
  }
  /** What a page's facts list says of `term`. */
  const fact = (page: Page, term: string) =>
    page.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]')
  const today = () => new Date().toISOString().slice(0, 10)
  /** An instant as the console shows it. */
  const displayed = (at: number) =>
    new Date(at)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')
  /** The rows of a table, each as the texts of its cells. */
  const rows = async (table: ReturnType<Page['getByRole']>) => {
    await table.waitFor()
    return Promise.all((await table.locator('tbody tr').all()).map((row) => row.locator('th, td').allTextContents()))
  }
  /** An account's windows at `now` as its table shows them, each given as [used, limit]. */
  const windowRows = (now: number, minute: [number, number], day: [number, number]) =>
    (
      [
        ['Minute', minute, Math.ceil(now / 60_000) * 60_000],
        ['Day', day, Math.ceil(now / 86_400_000) * 86_400_000]
      ] as const
    ).map(([name, [used, limit], reset]) => [
      name,
      ...[used, limit, limit - used].map((value) => value.toLocaleString('en')),
      displayed(reset)
    ])

  it('signs in; issues, charts, limits, rotates with a grace and revokes a key; makes an account with a key; finds each change in the events', async () => {
    const { context, problems } = await watchedContext(browser, { viewport: { width: 1280, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    const page = await context.newPage()
    const calls: { authorization: string | undefined; cookie: string | undefined }[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/admin/v1/')) {
        calls.push({ authorization: request.headers().authorization, cookie: request.headers().cookie })
      }
    })

    await page.goto(`${origin}/admin/`)
    await expect.poll(() => page.getByLabel('Admin token').isVisible()).toBe(true)
    await inspect(page, 'sign-in')
    await signIn(page, ADMIN_TOKEN)
    const keys = page.getByRole('table', { name: 'Keys' })
    await keys.or(page.getByText('No keys.')).waitFor()
    await inspect(page, 'keys without any', false)

    // A key with a small window, so its traffic has refusals to stack on its admissions.
    await page.getByRole('button', { name: 'Create key' }).click()
    const create = page.getByRole('dialog', { name: 'Create key' })
    await create.getByLabel('Name').fill('Storefront')
    await create.getByRole('combobox', { name: /^Plan/ }).selectOption('enterprise')
    await create.getByLabel('Requests a minute').fill('3')
    await create.getByLabel('Requests a day').fill('1000')
    await inspect(page, 'create-key')
    await create.getByRole('button', { name: 'Create' }).click()
    const shown = page.getByRole('dialog', { name: /^Key ask_\w+ created$/ })
    const secret = await shown.getByLabel('Secret').inputValue()
    expect(secret).toMatch(/^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/)
    await shown.getByRole('button', { name: 'Copy' }).click()
    await expect.poll(() => shown.getByRole('status').textContent()).toBe('Copied to the clipboard.')
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret)
    await inspect(page, 'new-secret')
    await page.keyboard.press('Escape')
    await shown.waitFor({ state: 'detached' })
    expect(await page.content()).not.toContain(secret)

    // The traffic and the look at its account's windows fall within one minute.
    const clock = await holdDatabaseClock(database)
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      statuses.push((await api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(secret) })).statusCode)
    }
    const sent = clock()
    expect(statuses).toEqual([200, 200, 200, 429, 429])

    const prefix = secret.slice(0, 12)
    await keys
      .getByRole('row', { name: /Storefront/ })
      .getByRole('link', { name: prefix })
      .click()
    await page.getByRole('heading', { name: `Key ${prefix}` }).waitFor()
    await inspect(page, 'a new key', false)

    // Its account's windows as they stand: the three admitted requests fill the minute (refusals are not
    // counted); the second refusal in a row banned the key for BAN_SECONDS (900).
    await fact(page, 'Account').getByRole('link').click()
    const storefrontAccountId = /#\/accounts\/(\d+)$/.exec(page.url())![1]!
    await page.getByRole('heading', { name: `Account #${storefrontAccountId}` }).waitFor()
    const storefrontWindows = page.getByRole('table', { name: `Windows of account #${storefrontAccountId}` })
    expect(await rows(storefrontWindows)).toEqual(windowRows(sent, [3, 3], [3, 1000]))
    expect(await page.getByRole('meter', { name: 'Minute window: 3 of 3 used' }).getAttribute('value')).toBe('3')
    expect(await page.getByRole('meter', { name: 'Day window: 3 of 1,000 used' }).getAttribute('max')).toBe('1000')
    const [ban] = await rows(page.getByRole('table', { name: `Banned keys of account #${storefrontAccountId}` }))
    expect(ban![0]).toBe(prefix)
    const bannedFor = Date.parse(ban![1]!.replace(' UTC', 'Z').replace(' ', 'T')) - sent
    expect(bannedFor).toBeGreaterThan(880_000)
    expect(bannedFor).toBeLessThanOrEqual(900_000)
    // The database's clock runs again for what follows: a rotation's grace is asserted on the test's.
    await clock.release()
    await inspect(page, 'account-windows')
    await page
      .getByRole('table', { name: `Keys of account #${storefrontAccountId}`, exact: true })
      .getByRole('link', { name: prefix })
      .click()
    await page.getByRole('heading', { name: `Key ${prefix}` }).waitFor()

    // Usage reaches the database within a few seconds of the requests: refreshed until it shows.
    const todayRow = page
      .getByRole('table', { name: `Usage of key ${prefix} by day` })
      .getByRole('row', { name: today() })
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh usage' }).click()
          return (await todayRow.getByRole('cell').allTextContents()).join(' ')
        },
        { timeout: 30_000, interval: 500 }
      )
      .toBe('3 2')
    const chart = page.getByRole('img', { name: /^Requests of key ask_\w+ per UTC day over the last 30 days/ })
    expect(await chart.getAttribute('aria-label')).toContain('today 3 admitted and 2 refused')
    // Today is the rightmost bar: both of its colours are drawn in the chart's right-hand tenth.
    const colours = await chart.evaluate((element) => {
      const canvas = element as unknown as Canvas
      const { width, height } = canvas
      const pixels = canvas
        .getContext('2d')
        .getImageData(Math.floor(width * 0.9), 0, Math.ceil(width * 0.1), height).data
      const seen = new Set<string>()
      for (let i = 0; i < pixels.length; i += 4) seen.add(`${pixels[i]},${pixels[i + 1]},${pixels[i + 2]}`)
      return { admitted: seen.has('31,111,67'), refused: seen.has('179,38,30') }
    })
    expect(colours).toEqual({ admitted: true, refused: true })
    await page.getByLabel('Period', { exact: true }).selectOption('90')
    await page.getByRole('img', { name: /over the last 90 days/ }).waitFor()
    await inspect(page, 'key')

    const rateLimit = async (key: string, remoteAddress = '127.0.0.1') =>
      (await api.inject({ method: 'GET', url: '/v1/rate_limit', headers: bearer(key), remoteAddress })).statusCode

    // Where the key may be used from, and what the operator keeps with it.
    await page.getByRole('button', { name: 'Edit addresses and metadata' }).click()
    const access = page.getByRole('dialog', { name: `Addresses and metadata of key ${prefix}` })
    await access.getByLabel(/^Allowed addresses/).fill('127.0.0.1\n203.0.113.0/24')
    await access.getByLabel(/^Metadata/).fill('{"crm": "A-1", "seats": 3}')
    await inspect(page, 'key-addresses-and-metadata', false)
    await access.getByRole('button', { name: 'Save' }).click()
    await access.waitFor({ state: 'detached' })
    await expect.poll(() => fact(page, 'Allowed addresses').textContent()).toBe('127.0.0.1/32, 203.0.113.0/24')
    expect(await fact(page, 'Metadata').textContent()).toBe('{\n  "crm": "A-1",\n  "seats": 3\n}')
    await expect.poll(() => rateLimit(secret, '192.0.2.1'), { timeout: 10_000 }).toBe(403)
    expect(await rateLimit(secret, '203.0.113.8')).toBe(200)

    // Rotated with a grace period: the old secret keeps working for the hour chosen.
    await page.getByRole('button', { name: 'Rotate' }).click()
    const rotate = page.getByRole('dialog', { name: `Rotate key ${prefix}?` })
    await rotate
      .getByRole('combobox', { name: 'Its current secret' })
      .selectOption({ label: 'keeps working for an hour' })
    await inspect(page, 'rotate-confirmation')
    const rotatedAt = Date.now()
    await rotate.getByRole('button', { name: 'Rotate key' }).click()
    const rotated = page.getByRole('dialog', { name: /^New secret of key ask_\w+$/ })
    const newSecret = await rotated.getByLabel('Secret').inputValue()
    expect(newSecret).not.toBe(secret)
    await rotated.getByRole('button', { name: 'Close' }).click()
    await rotated.waitFor({ state: 'detached' })
    expect(await page.content()).not.toContain(newSecret)
    await expect.poll(() => fact(page, 'Previous secret').textContent()).toMatch(new RegExp(`^${prefix}, works until `))
    const until = /works until (.+) UTC$/.exec((await fact(page, 'Previous secret').textContent())!)![1]!
    const graceEnd = Date.parse(`${until.replace(' ', 'T')}Z`)
    expect(graceEnd).toBeGreaterThan(rotatedAt + 3_600_000 - 5_000)
    expect(graceEnd).toBeLessThan(Date.now() + 3_600_000 + 5_000)
    expect(await rateLimit(secret)).toBe(200)
    expect(await rateLimit(newSecret)).toBe(200)

    await page.getByRole('button', { name: 'Revoke' }).click()
    const revoke = page.getByRole('dialog', { name: /^Revoke key ask_\w+\?$/ })
    await revoke.getByRole('button', { name: 'Revoke key' }).click()
    await revoke.waitFor({ state: 'detached' })
    const revoked = page.locator('dt', { hasText: 'Revoked' }).locator('xpath=following-sibling::dd[1]')
    await expect.poll(() => revoked.textContent()).toMatch(new RegExp(`^${today()} \\d\\d:\\d\\d:\\d\\d UTC$`))
    expect(await page.getByRole('button', { name: 'Rotate' }).count()).toBe(0)
    await expect.poll(() => rateLimit(newSecret), { timeout: 10_000 }).toBe(401)
    expect(await rateLimit(secret)).toBe(401)

    await page.getByRole('link', { name: 'Keys' }).click()
    await keys.getByRole('row', { name: /Storefront/ }).waitFor()
    await inspect(page, 'keys')

    const storefront = await page
      .getByRole('row', { name: /Storefront/ })
      .getByRole('link')
      .getAttribute('href')
    const storefrontId = /^#\/keys\/(\d+)$/.exec(storefront ?? '')![1]!

    // An account made in its dialog, and a key in it that may only read.
    await page.getByRole('link', { name: 'Accounts' }).click()
    await page.getByRole('table', { name: 'Accounts' }).waitFor()
    await inspect(page, 'accounts')
    await page.getByRole('button', { name: 'Create account' }).click()
    const createAccount = page.getByRole('dialog', { name: 'Create account' })
    await createAccount.getByLabel('External id').fill('acme')
    await createAccount.getByLabel('Name').fill('Acme Pet Supplies')
    await createAccount.getByRole('combobox', { name: /^Plan/ }).selectOption('pro')
    await inspect(page, 'create-account')
    const created = Date.now()
    await createAccount.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { name: 'Account acme' }).waitFor()
    const accountId = /#\/accounts\/(\d+)$/.exec(page.url())![1]!
    expect(await fact(page, 'Plan').textContent()).toBe('pro')
    // A new account's months start where it was made.
    expect(await fact(page, 'Months start').textContent()).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC and every month after/
    )
    const acmeWindows = page.getByRole('table', { name: 'Windows of account acme' })
    // The page's windows end with the minute and the day it was shown in, which may have turned since the click.
    const shownWindows = await rows(acmeWindows)
    expect([windowRows(created, [0, 300], [0, 10_000]), windowRows(Date.now(), [0, 300], [0, 10_000])]).toContainEqual(
      shownWindows
    )
    expect(await page.getByText('No key of the account is banned.').count()).toBe(1)
    await page.getByText('No keys.').waitFor()

    await page.getByRole('button', { name: 'Create key' }).click()
    const createInAccount = page.getByRole('dialog', { name: 'Create key' })
    expect(await createInAccount.getByLabel(/^Account/).inputValue()).toBe(accountId)
    expect(await createInAccount.getByRole('combobox', { name: /^Plan/ }).count()).toBe(0)
    await createInAccount.getByLabel('Name').fill('Catalogue')
    await createInAccount.getByLabel('pets:write').uncheck()
    await createInAccount.getByRole('button', { name: 'Create' }).click()
    const catalogue = page.getByRole('dialog', { name: /^Key ask_\w+ created$/ })
    const catalogueSecret = await catalogue.getByLabel('Secret').inputValue()
    await catalogue.getByRole('button', { name: 'Close' }).click()
    await catalogue.waitFor({ state: 'detached' })
    const accountKeys = page.getByRole('table', { name: 'Keys of account acme' })
    const catalogueRow = accountKeys.getByRole('row', { name: /Catalogue/ })
    expect(await catalogueRow.getByRole('cell').allTextContents()).toEqual(
      expect.arrayContaining(['Catalogue', 'pro', 'pets:read'])
    )
    expect(await catalogueRow.getByRole('link').textContent()).toBe(catalogueSecret.slice(0, 12))
    // The request and the look at its minute fall within one minute, however long its usage takes to show.
    const acmeClock = await holdDatabaseClock(database)
    expect((await api.inject({ method: 'GET', url: '/v1/pets', headers: bearer(catalogueSecret) })).statusCode).toBe(
      200
    )
    const accountToday = page
      .getByRole('table', { name: 'Usage of account acme by day' })
      .getByRole('row', { name: today() })
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh usage' }).click()
          return (await accountToday.getByRole('cell').allTextContents()).join(' ')
        },
        { timeout: 30_000, interval: 500 }
      )
      .toBe('1 0')
    expect(
      await page
        .getByRole('img', { name: /^Requests of account acme per UTC day over the last 30 days/ })
        .getAttribute('aria-label')
    ).toContain('today 1 admitted and 0 refused')
    // Read again on Refresh windows: the request is counted, with what this pro account's instance leased
    // ahead of it (exactness is the Storefront's check above).
    await page.getByRole('button', { name: 'Refresh windows' }).click()
    await expect.poll(async () => (await rows(acmeWindows))[0]![1]).not.toBe('0')
    const [, used, limit, remaining] = (await rows(acmeWindows))[0]!
    expect(Number(used)).toBeGreaterThanOrEqual(1)
    expect([limit, Number(used) + Number(remaining)]).toEqual(['300', 300])
    await acmeClock.release()
    await inspect(page, 'account')

    // Each change is on the events page with who made it: signed in with ADMIN_TOKEN, the bootstrap admin.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Events' }).click()
    const events = page.getByRole('table', { name: 'Events' })
    const eventRows = async () => {
      await events.waitFor()
      const rows = await events.locator('tbody tr').all()
      return Promise.all(rows.map(async (row) => (await row.locator('th, td').allTextContents()).slice(1, 5).join(' ')))
    }
    const all = await eventRows()
    const catalogueId = all.find((row) => row.startsWith(`key.created bootstrap ${accountId} `))?.split(' ')[3]
    expect(catalogueId).toMatch(/^\d+$/)
    expect(all).toEqual([
      `key.created bootstrap ${accountId} ${catalogueId}`,
      `account.created bootstrap ${accountId} —`,
      `key.revoked bootstrap ${storefrontAccountId} ${storefrontId}`,
      `key.rotated bootstrap ${storefrontAccountId} ${storefrontId}`,
      `key.changed bootstrap ${storefrontAccountId} ${storefrontId}`,
      `key.created bootstrap ${storefrontAccountId} ${storefrontId}`,
      `account.created bootstrap ${storefrontAccountId} —`
    ])
    await inspect(page, 'events')
    await page.getByRole('search').getByLabel('Account id').fill(accountId)
    await page.getByRole('button', { name: 'Filter' }).click()
    await expect
      .poll(eventRows)
      .toEqual([`key.created bootstrap ${accountId} ${catalogueId}`, `account.created bootstrap ${accountId} —`])
    await inspect(page, 'events of an account', false)

    expect(calls.length).toBeGreaterThan(5)
    expect(calls.every((call) => call.authorization === `Bearer ${ADMIN_TOKEN}` && call.cookie === undefined)).toBe(
      true
    )
    expect(await context.cookies()).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it('says when the token is wrong, keeps only a token the API accepts, and signs out', async () => {
    const { context, problems } = await watchedContext(browser)
    const page = await context.newPage()
    const stored = () => page.evaluate('Object.values(sessionStorage)')

    await page.goto(`${origin}/admin/`)
    await signIn(page, 'x'.repeat(ADMIN_TOKEN.length))
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong admin token: the admin API refused it.')
    expect(await stored()).toEqual([])
    await inspect(page, 'wrong-token')

    // Each page waits for its keys, so no reload cuts their request short.
    const keysShown = () => page.getByRole('table', { name: 'Keys' }).or(page.getByText('No keys.')).waitFor()
    await signIn(page, ADMIN_TOKEN)
    await keysShown()
    expect(await stored()).toEqual([ADMIN_TOKEN])
    // A reload keeps the session: the token lives in this tab's sessionStorage.
    await page.reload()
    await keysShown()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Admin token').waitFor()
    expect(await page.getByRole('status').textContent()).toBe('Signed out.')
    expect(await stored()).toEqual([])
    await page.reload()
    await page.getByLabel('Admin token').waitFor()
    expect(await context.cookies()).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  }, 60_000)

  it('shows ids above 2^53 exactly, and follows each to its own page', async () => {
    // Odd ids past 2^53, which a JavaScript number would read as their even neighbours.
    const [accountId, keyId] = ['9007199254740993', '9007199254740995']
    await sql`ALTER TABLE accounts ALTER COLUMN id RESTART WITH ${sql.raw(accountId)}`.execute(database.db)
    await sql`ALTER TABLE api_keys ALTER COLUMN id RESTART WITH ${sql.raw(keyId)}`.execute(database.db)
    await sql`ALTER TABLE audit_events ALTER COLUMN id RESTART WITH 9007199254740997`.execute(database.db)
    const { context, problems } = await watchedContext(browser)
    const page = await context.newPage()
    await page.goto(`${origin}/admin/`)
    await signIn(page, ADMIN_TOKEN)

    // An enterprise account, its own limits sent as int64, and a key in it.
    await page.getByRole('link', { name: 'Accounts' }).click()
    await page.getByRole('button', { name: 'Create account' }).click()
    const createAccount = page.getByRole('dialog', { name: 'Create account' })
    await createAccount.getByLabel('External id').fill('far-ids')
    await createAccount.getByRole('combobox', { name: /^Plan/ }).selectOption('enterprise')
    await createAccount.getByLabel('Requests a minute').fill('7')
    await createAccount.getByLabel('Requests a day').fill('7000')
    await createAccount.getByRole('button', { name: 'Create' }).click()
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/accounts/${accountId}`)
    await page.getByRole('heading', { name: 'Account far-ids' }).waitFor()
    expect(await fact(page, 'Id').textContent()).toBe(accountId)
    await page.getByRole('button', { name: 'Create key' }).click()
    const createKey = page.getByRole('dialog', { name: 'Create key' })
    expect(await createKey.getByLabel(/^Account/).inputValue()).toBe(accountId)
    await createKey.getByRole('button', { name: 'Create' }).click()
    const created = page.getByRole('dialog', { name: /^Key ask_\w+ created$/ })
    await created.getByRole('button', { name: 'Close' }).click()
    const keyLink = page.getByRole('table', { name: 'Keys of account far-ids' }).getByRole('link')
    expect(await keyLink.getAttribute('href')).toBe(`#/keys/${keyId}`)

    await keyLink.click()
    await page.getByRole('heading', { name: /^Key ask_\w+$/ }).waitFor()
    expect(await fact(page, 'Account').getByRole('link').textContent()).toBe(accountId)
    expect(await fact(page, 'Plan').textContent()).toBe('enterprise (7 a minute, 7,000 a day)')

    await page.goto(`${origin}/admin/#/events?accountId=${accountId}`)
    const events = page.getByRole('table', { name: 'Events' })
    await events.waitFor()
    const shown = await Promise.all(
      (await events.locator('tbody tr').all()).map((row) => row.locator('td').allTextContents())
    )
    expect(shown.map((cells) => cells.slice(0, 4))).toEqual([
      ['key.created', 'bootstrap', accountId, keyId],
      ['account.created', 'bootstrap', accountId, '—']
    ])
    expect(problems).toEqual([])
    await context.close()
  }, 60_000)

  it('registers a webhook endpoint with its secret shown once, pauses, resumes, re-subscribes, rotates and deletes it', async () => {
    const { context, problems } = await watchedContext(browser, { viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${origin}/admin/`)
    await signIn(page, ADMIN_TOKEN)
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).click()
    await page.getByText('No webhook endpoints.').waitFor()

    // Refused input is said, and stores nothing.
    await page.getByRole('button', { name: 'Register endpoint' }).click()
    const register = page.getByRole('dialog', { name: 'Register endpoint' })
    await register.getByLabel(/^URL/).fill('http://hooks.example.com/plain')
    await register.getByLabel('key.created').check()
    await register.getByRole('button', { name: 'Register' }).click()
    await expect.poll(() => register.getByRole('alert').textContent()).toMatch(/^url: .*https/)
    expect(await database.db.selectFrom('webhook_endpoints').select('id').execute()).toEqual([])

    await register.getByLabel(/^URL/).fill('https://hooks.example.com/console')
    await register.getByLabel('usage.threshold').check()
    await register.getByLabel(/^Description/).fill('Billing')
    await inspect(page, 'register-webhook')
    await register.getByRole('button', { name: 'Register' }).click()
    const shown = page.getByRole('dialog', { name: /^Endpoint \d+ registered$/ })
    const secret = await shown.getByLabel('Secret').inputValue()
    const stored = await database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow()
    expect(secret).toBe(stored.secret)
    expect(secret).toMatch(/^whsec_/)
    await shown.getByRole('button', { name: 'Close' }).click()
    await shown.waitFor({ state: 'detached' })
    expect(await page.content()).not.toContain(secret)
    const endpoints = page.getByRole('table', { name: 'Webhook endpoints' })
    expect(await rows(endpoints)).toEqual([
      [String(stored.id), 'https://hooks.example.com/console', 'key.created, usage.threshold', 'Active', 'Billing']
    ])
    await inspect(page, 'webhooks')

    // Two events for it: the first given up after 24 hours, the second waiting for its third attempt.
    for (const name of ['first', 'second']) {
      const made = await admin.inject({
        method: 'POST',
        url: '/admin/v1/keys',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { plan: 'free', name }
      })
      expect(made.statusCode).toBe(201)
    }
    const [failed, pending] = (
      await database.db.selectFrom('webhook_deliveries').select('event_id').orderBy('event_id').execute()
    ).map((row) => row.event_id)
    await sql`UPDATE webhook_deliveries SET status = 'failed', attempts = 31, last_status = 500,
        last_response = 'upstream down', last_attempt_at = '2027-01-02T03:04:05Z', finished_at = now()
      WHERE event_id = ${failed}`.execute(database.db)
    await sql`UPDATE webhook_deliveries SET attempts = 2, last_response = 'connect ECONNREFUSED 203.0.113.9:443',
        last_attempt_at = '2027-01-02T03:04:06Z', next_attempt_at = '2099-01-01T00:00:00Z'
      WHERE event_id = ${pending}`.execute(database.db)

    await endpoints.getByRole('link', { name: String(stored.id) }).click()
    await page.getByRole('heading', { name: `Webhook endpoint ${stored.id}` }).waitFor()
    const deliveries = page.getByRole('table', { name: `Deliveries to endpoint ${stored.id}` })
    expect(await rows(deliveries)).toEqual([
      [
        `evt_${pending}`,
        'key.created',
        'pending',
        '2',
        '2099-01-01 00:00:00 UTC',
        '2027-01-02 03:04:06 UTC',
        'No answer: connect ECONNREFUSED 203.0.113.9:443',
        ''
      ],
      [
        `evt_${failed}`,
        'key.created',
        'Failed',
        '31',
        '—',
        '2027-01-02 03:04:05 UTC',
        '500: upstream down',
        `Retry evt_${failed}`
      ]
    ])
    await inspect(page, 'webhook')
    await page.getByLabel('Status').selectOption('failed')
    await expect.poll(async () => (await rows(deliveries)).map((row) => row[0])).toEqual([`evt_${failed}`])
    await deliveries.getByRole('button', { name: `Retry evt_${failed}` }).click()
    await page.getByText('No deliveries failed.').waitFor()
    const retried = await database.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'finished_at'])
      .where('event_id', '=', failed!)
      .executeTakeFirstOrThrow()
    expect(retried).toEqual({ status: 'pending', finished_at: null })

    await page.getByRole('button', { name: 'Pause' }).click()
    await expect.poll(() => fact(page, 'State').textContent()).toBe('Paused')
    const endpoint = () =>
      database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', stored.id).executeTakeFirst()
    expect((await endpoint())!.paused_at).not.toBeNull()
    await page.getByRole('button', { name: 'Resume' }).click()
    await expect.poll(() => fact(page, 'State').textContent()).toBe('Active')
    expect((await endpoint())!.paused_at).toBeNull()

    await page.getByRole('button', { name: 'Change events' }).click()
    const events = page.getByRole('dialog', { name: `Events of endpoint ${stored.id}` })
    await events.getByLabel('usage.threshold').uncheck()
    await events.getByLabel('key.banned').check()
    await events.getByRole('button', { name: 'Save events' }).click()
    await expect.poll(() => fact(page, 'Events').textContent()).toBe('key.created, key.banned')

    await page.getByRole('button', { name: 'Rotate secret' }).click()
    const rotate = page.getByRole('dialog', { name: `Rotate the secret of endpoint ${stored.id}` })
    await rotate.getByLabel(/^Grace in seconds/).fill('600')
    await inspect(page, 'rotate-webhook-secret')
    const asked = Date.now()
    await rotate.getByRole('button', { name: 'Rotate secret' }).click()
    const rotated = page.getByRole('dialog', { name: `New secret of endpoint ${stored.id}` })
    const newSecret = await rotated.getByLabel('Secret').inputValue()
    await rotated.getByRole('button', { name: 'Close' }).click()
    await rotated.waitFor({ state: 'detached' })
    const after = (await endpoint())!
    expect([after.secret, after.previous_secret]).toEqual([newSecret, secret])
    const grace = after.previous_secret_until!.getTime() - asked
    expect(grace).toBeGreaterThan(590_000)
    expect(grace).toBeLessThanOrEqual(610_000)
    await expect
      .poll(() => fact(page, 'Previous secret signs until').textContent())
      .toBe(displayed(after.previous_secret_until!.getTime()))
    expect(await page.content()).not.toContain(newSecret)

    await page.getByRole('button', { name: 'Delete' }).click()
    await page
      .getByRole('dialog', { name: `Delete endpoint ${stored.id}?` })
      .getByRole('button', { name: 'Delete endpoint' })
      .click()
    await page.getByText('No webhook endpoints.').waitFor()
    expect(await endpoint()).toBeUndefined()
    expect(problems).toEqual([])
    await context.close()
  }, 90_000)

  it("charts a key's and its account's last 48 hours by UTC hour, from the usage export", async () => {
    const HOUR = 3_600_000
    const now = Date.now()
    const hour = Math.floor(now / HOUR) * HOUR
    const first = await issueApiKey(database.db, { plan: 'pro', name: 'hourly' })
    const second = await issueApiKey(database.db, { accountId: first.accountId, name: 'sibling' })
    await database.db
      .insertInto('api_key_usage')
      .values([
        { api_key_id: first.id, hour: new Date(hour), admitted: 5, refused: 1, units: 5 },
        { api_key_id: first.id, hour: new Date(hour - 3 * HOUR), admitted: 7, refused: 0, units: 7 },
        { api_key_id: second.id, hour: new Date(hour), admitted: 2, refused: 0, units: 2 },
        // Past the 48 hours: not charted.
        { api_key_id: first.id, hour: new Date(hour - 48 * HOUR), admitted: 100, refused: 0, units: 100 }
      ])
      .execute()
    const { context, problems } = await watchedContext(browser, { viewport: { width: 1280, height: 900 } })
    // The page's clock stands still at this instant, so that the hour charted is the hour written.
    await context.clock.setFixedTime(now)
    const page = await context.newPage()
    await page.goto(`${origin}/admin/#/keys/${first.id}`)
    await signIn(page, ADMIN_TOKEN)
    await page.getByRole('heading', { name: `Key ${first.prefix}` }).waitFor()
    await page.getByLabel('Period', { exact: true }).selectOption('hours')
    const byHour = async (subject: string) => {
      const table = page.getByRole('table', { name: `Usage of ${subject} by hour` })
      return (await rows(table)).map((cells) => cells.join(' '))
    }
    const hourly = await byHour(`key ${first.prefix}`)
    expect(hourly).toHaveLength(48)
    expect(hourly.filter((row) => !row.endsWith(' 0 0'))).toEqual([
      `${displayed(hour)} 5 1`,
      `${displayed(hour - 3 * HOUR)} 7 0`
    ])
    expect(hourly.at(-1)).toBe(`${displayed(hour - 47 * HOUR)} 0 0`)
    expect(
      await page.getByRole('img', { name: /per UTC hour over the last 48 hours/ }).getAttribute('aria-label')
    ).toBe(
      `Requests of key ${first.prefix} per UTC hour over the last 48 hours, admitted and refused stacked: ` +
        '12 admitted and 1 refused in all; this hour 5 admitted and 1 refused.'
    )
    await inspect(page, 'key-hourly')

    await page.goto(`${origin}/admin/#/accounts/${first.accountId}`)
    await page.getByRole('heading', { name: `Account #${first.accountId}` }).waitFor()
    await page.getByLabel('Period', { exact: true }).selectOption('hours')
    expect((await byHour(`account #${first.accountId}`)).filter((row) => !row.endsWith(' 0 0'))).toEqual([
      `${displayed(hour)} 7 1`,
      `${displayed(hour - 3 * HOUR)} 7 0`
    ])
    expect(problems).toEqual([])
    await context.close()
  }, 60_000)
})
