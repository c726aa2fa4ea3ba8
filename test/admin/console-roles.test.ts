import type { FastifyInstance } from 'fastify'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../src/db/embedded.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestAdminApp, ADMIN_TOKEN } from '../helpers/app.js'
import { launchChromium, seriousAccessibilityViolations, watchedContext } from '../helpers/browser.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { describeWith } from '../helpers/requirements.js'
type Role = 'viewer' | 'operator' | 'admin'

let database: TestDatabase
let admin: FastifyInstance
let origin: string
let keyId: bigint
let prefix: string
let accountId: bigint
const tokens = {} as Record<Role, string>
const names: Record<Role, string> = { viewer: 'vera', operator: 'otto', admin: 'ada' }

beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database)
  const port = await freePort()
  await admin.listen({ host: '127.0.0.1', port })
  origin = `http://127.0.0.1:${port}`
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    const made = await admin.inject({
      method: 'POST',
      url: '/admin/v1/operators',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { name: names[role], role }
    })
    expect(made.statusCode, made.body).toBe(201)
    tokens[role] = made.json().token
  }
  const key = await issueApiKey(database.db, { plan: 'pro', name: 'Storefront' })
  ;({ id: keyId, prefix, accountId } = key)
})
afterAll(async () => {
  await admin?.close()
  await database?.drop()
})

/** Every control that changes something, by the page it is on. */
const CHANGES: { path: string; ready: (page: Page) => Promise<unknown>; buttons: (string | RegExp)[]; role?: Role }[] =
  [
    {
      path: '#/keys',
      ready: (page) => page.getByRole('table', { name: 'Keys' }).waitFor(),
      buttons: ['Create key']
    },
    {
      path: '', // the key's own page, filled in once its id is known
      ready: (page) => page.getByRole('heading', { name: `Key ${prefix}` }).waitFor(),
      buttons: ['Rotate', 'Revoke']
    },
    {
      path: '#/accounts',
      ready: (page) => page.getByRole('table', { name: 'Accounts' }).waitFor(),
      buttons: ['Create account']
    },
    {
      path: '',
      ready: (page) => page.getByRole('heading', { name: `Account #${accountId}` }).waitFor(),
      buttons: ['Create key', 'Set overrides', 'Add credits', 'Close account']
    },
    {
      path: '#/plans',
      ready: (page) => page.getByRole('table', { name: 'Plans' }).waitFor(),
      buttons: ['New plan', /^Edit /]
    },
    {
      path: '#/webhooks',
      ready: (page) => page.getByRole('heading', { name: 'Webhooks' }).waitFor(),
      buttons: ['Register endpoint'],
      role: 'admin'
    }
  ]
/** The controls a role above `operator` alone may use, as `walk` names them. */
const ADMIN_ONLY = CHANGES.flatMap((change) =>
  change.role === 'admin' ? change.buttons.map((name) => `${change.path} ${String(name)}`) : []
)
const pathOf = (index: number) => CHANGES[index]!.path || (index === 1 ? `#/keys/${keyId}` : `#/accounts/${accountId}`)

describeWith('chromium')('the console by role', () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })

  /** Signs `role` in and walks the pages: the header's name and role, and how many of each change control show. */
  async function walk(role: Role) {
    const { context, problems } = await watchedContext(browser, { viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${origin}/admin/`)
    await page.getByLabel('Admin token').fill(tokens[role])
    await page.getByRole('button', { name: 'Sign in' }).click()
    const banner = page.getByRole('banner')
    await banner.getByText('Signed in as').waitFor()
    const signedIn = await banner.locator('.identity').textContent()
    const shown: Record<string, number> = {}
    for (const [index, change] of CHANGES.entries()) {
      await page.goto(`${origin}/admin/${pathOf(index)}`)
      await change.ready(page)
      for (const name of change.buttons) {
        shown[`${pathOf(index)} ${String(name)}`] = await page.getByRole('button', { name }).count()
      }
      expect(await seriousAccessibilityViolations(page), `${role} ${pathOf(index)}`).toEqual([])
    }
    expect(problems).toEqual([])
    await context.close()
    return { signedIn, shown }
  }

  it('shows a viewer its name and role, and no control that would change anything', async () => {
    const { signedIn, shown } = await walk('viewer')
    expect(signedIn).toBe('Signed in as vera, viewer')
    expect(Object.entries(shown).filter(([, count]) => count > 0)).toEqual([])
    expect(Object.keys(shown)).toHaveLength(11)
    // Hidden is for the viewer's sake: the admin API refuses the change anyway.
    const refused = await admin.inject({
      method: 'POST',
      url: `/admin/v1/keys/${keyId}/revoke`,
      headers: { authorization: `Bearer ${tokens.viewer}` }
    })
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toEqual({
      code: 'insufficient_role',
      message: 'This needs the role operator; vera is viewer',
      status: 403
    })
  }, 120_000)

  it.each([['operator' as const], ['admin' as const]])(
    'shows an %s its name and role, and every change control its role may use',
    async (role) => {
      const { signedIn, shown } = await walk(role)
      expect(signedIn).toBe(`Signed in as ${names[role]}, ${role}`)
      const hidden = Object.entries(shown)
        .filter(([, count]) => count === 0)
        .map(([name]) => name)
      expect(hidden).toEqual(role === 'admin' ? [] : ADMIN_ONLY)
      expect(shown[`#/plans ${String(/^Edit /)}`]).toBe(4)
    },
    120_000
  )
})
