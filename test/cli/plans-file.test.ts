import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { cliOn } from '../helpers/cli.js'
import { admin, createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let dir: string
beforeAll(async () => {
  database = await createTestDatabase()
  dir = await mkdtemp(join(tmpdir(), 'plans-file-'))
})
afterAll(async () => {
  await database?.drop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const { run, cli, json } = cliOn(() => database.url)

/** A file in the test's folder holding `text`; its path. */
async function file(name: string, text: string) {
  const path = join(dir, name)
  await writeFile(path, text)
  return path
}

/** Every plan as stored: its limits and costs, in name order. */
const stored = async () =>
  (await json('plans', 'list')).map((plan: { name: string; limits: unknown; costs: unknown }) => ({
    name: plan.name,
    limits: plan.limits,
    costs: plan.costs
  }))

const auditCount = async () =>
  Number((await database.pool.query("SELECT count(*) FROM audit_events WHERE action LIKE 'plan.%'")).rows[0].count)

const PLANS_YAML = `# Our plans, applied with plans apply
- name: free
  limits:
    - { window: minute, limit: 60 }
    - { window: day, limit: 1000 }
- name: pro
  limits:
    - { window: minute, limit: 600, algorithm: bucket, burst: 900 }
    - { window: day, limit: 10000 }
  costs:
    POST /v1/pets: 5
- name: growth
  limits:
    - { window: month, limit: 20000 }
    - { window: hour, limit: 2000 }
`

describe('plans apply and export', () => {
  it('makes the listed plans match the file, each change an audit event, leaves the others, and changes nothing the second time', async () => {
    const path = await file('plans.yaml', PLANS_YAML)
    const before = await auditCount()
    const output = await cli('plans', 'apply', path)
    expect(output.trim().split('\n')).toEqual([
      '+ growth: 2000/hour, 20000/month; costs -',
      '~ pro: 300/minute, 10000/day; costs - -> 600/minute bucket burst 900, 10000/day; costs POST /v1/pets=5',
      'Not in the file, left as they are (--prune deletes them): business, enterprise',
      'Applied 2 changes'
    ])
    const plans = await stored()
    expect(plans.map((plan: { name: string }) => plan.name)).toEqual([
      'business',
      'enterprise',
      'free',
      'growth',
      'pro'
    ])
    expect(plans.find((plan: { name: string }) => plan.name === 'pro')).toEqual({
      name: 'pro',
      limits: [
        { window: 'minute', algorithm: 'bucket', limit: 600, burst: 900, shadow: false },
        { window: 'day', algorithm: 'fixed', limit: 10000, burst: null, shadow: false }
      ],
      costs: { 'POST /v1/pets': 5 }
    })
    const { rows } = await database.pool.query(
      "SELECT action, actor, changes->'plan'->>'after' AS plan FROM audit_events WHERE action LIKE 'plan.%' ORDER BY id"
    )
    expect(rows).toEqual([
      { action: 'plan.created', actor: expect.stringMatching(/^cli:./), plan: 'growth' },
      { action: 'plan.changed', actor: expect.stringMatching(/^cli:./), plan: 'pro' }
    ])
    expect(await auditCount()).toBe(before + 2)

    const again = await run('plans', 'apply', path)
    expect(again).toEqual({
      code: 0,
      stderr: '',
      stdout:
        'Not in the file, left as they are (--prune deletes them): business, enterprise\n' +
        'The plans match the file: nothing to change\n'
    })
    expect(await auditCount()).toBe(before + 2)
    expect(await stored()).toEqual(plans)
  })

  it('--dry-run prints the changes and makes none; --json says the same to a machine', async () => {
    const path = await file('dry.json', JSON.stringify([{ name: 'free', limits: [{ window: 'minute', limit: 30 }] }]))
    const plans = await stored()
    const before = await auditCount()
    expect(await cli('plans', 'apply', path, '--dry-run', '--prune')).toBe(
      [
        '- business: 1000/minute, 100000/day; costs -',
        '- enterprise: 1000/minute, 100000/day; costs -',
        '~ free: 60/minute, 1000/day; costs - -> 30/minute; costs -',
        '- growth: 2000/hour, 20000/month; costs -',
        '- pro: 600/minute bucket burst 900, 10000/day; costs POST /v1/pets=5',
        'Dry run: 5 changes, none made',
        ''
      ].join('\n')
    )
    const described = await json('plans', 'apply', path, '--dry-run')
    expect(described).toEqual({
      dryRun: true,
      changes: [
        {
          action: 'change',
          name: 'free',
          before: {
            name: 'free',
            limits: [
              { window: 'minute', limit: 60 },
              { window: 'day', limit: 1000 }
            ]
          },
          after: { name: 'free', limits: [{ window: 'minute', limit: 30 }] }
        }
      ],
      unlisted: ['business', 'enterprise', 'growth', 'pro']
    })
    expect(await stored()).toEqual(plans)
    expect(await auditCount()).toBe(before)
  })

  it('exports a file that applies back with nothing to change, as YAML to stdout or a file, or JSON', async () => {
    const yamlText = await cli('plans', 'export')
    const exported = parse(yamlText)
    expect(exported.map((plan: { name: string }) => plan.name)).toEqual([
      'business',
      'enterprise',
      'free',
      'growth',
      'pro'
    ])
    expect(exported.find((plan: { name: string }) => plan.name === 'pro')).toEqual({
      name: 'pro',
      limits: [
        { window: 'minute', limit: 600, algorithm: 'bucket', burst: 900 },
        { window: 'day', limit: 10000 }
      ],
      costs: { 'POST /v1/pets': 5 }
    })
    const yamlPath = join(dir, 'exported.yaml')
    expect(await cli('plans', 'export', yamlPath)).toBe(`Wrote 5 plans to ${yamlPath}\n`)
    expect(await readFile(yamlPath, 'utf8')).toBe(yamlText)
    const jsonPath = join(dir, 'exported.json')
    await cli('plans', 'export', jsonPath)
    expect(JSON.parse(await readFile(jsonPath, 'utf8'))).toEqual(exported)

    const before = await auditCount()
    for (const path of [yamlPath, jsonPath]) {
      expect(await cli('plans', 'apply', path, '--prune')).toBe('The plans match the file: nothing to change\n')
    }
    expect(await auditCount()).toBe(before)
  })

  it('--prune deletes the plans the file leaves out, but none while an account is on one: then nothing changes', async () => {
    const exported = parse(await cli('plans', 'export')) as { name: string }[]
    await cli('accounts', 'create', '--plan', 'growth')
    const kept = exported.filter((plan) => !['growth', 'enterprise'].includes(plan.name))
    kept.push({ ...kept[0]!, name: 'starter' })
    const path = await file('pruned.json', JSON.stringify(kept))
    const plans = await stored()
    const before = await auditCount()

    const refused = await run('plans', 'apply', path, '--prune')
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(
      "Error: The file leaves out plans that accounts are on, and such a plan is never deleted: 'growth' (1 account); " +
        'move those accounts to another plan, or list the plans in the file. Nothing was changed\n'
    )
    expect(await stored()).toEqual(plans)
    expect(await auditCount()).toBe(before)

    kept.push(exported.find((plan) => plan.name === 'growth')!)
    await writeFile(path, JSON.stringify(kept))
    expect(await cli('plans', 'apply', path, '--prune')).toContain('Applied 2 changes')
    expect((await stored()).map((plan: { name: string }) => plan.name)).toEqual([
      'business',
      'free',
      'growth',
      'pro',
      'starter'
    ])
    const { rows } = await database.pool.query(
      "SELECT action, changes FROM audit_events WHERE action = 'plan.deleted' ORDER BY id"
    )
    expect(rows).toEqual([
      {
        action: 'plan.deleted',
        changes: {
          plan: { before: 'enterprise', after: null },
          limits: {
            before: [
              { window: 'minute', algorithm: 'fixed', limit: 1000, burst: null, shadow: false },
              { window: 'day', algorithm: 'fixed', limit: 100000, burst: null, shadow: false }
            ],
            after: null
          },
          costs: { before: {}, after: null }
        }
      }
    ])
  })

  it("changes plans as the service's role, which may not delete one: --prune there changes nothing", async () => {
    const role = `plans_file_${randomBytes(4).toString('hex')}`
    const password = randomBytes(12).toString('hex')
    await admin((client) => client.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}' IN ROLE animal_store_app`))
    try {
      const url = new URL(database.url)
      url.username = role
      url.password = password
      const asService = cliOn(() => url.toString())
      const exported = parse(await cli('plans', 'export')) as { name: string; limits: unknown[] }[]
      const listed = exported.filter((plan) => plan.name !== 'business')
      listed.find((plan) => plan.name === 'starter')!.limits = [{ window: 'second', limit: 5 }]
      const path = await file('service.json', JSON.stringify(listed))
      const plans = await stored()
      const before = await auditCount()

      expect(await asService.run('plans', 'apply', path, '--prune')).toEqual({
        code: 1,
        stdout: '',
        stderr:
          "Error: Deleting plans (business) needs a database role that may, as the schema's owner does; the " +
          "service's role may not. Nothing was changed\n"
      })
      expect(await stored()).toEqual(plans)
      expect(await auditCount()).toBe(before)

      expect(await asService.cli('plans', 'apply', path)).toContain('Applied 1 change\n')
      expect((await json('plans', 'show', 'starter')).limits).toEqual([
        { window: 'second', algorithm: 'fixed', limit: 5, burst: null, shadow: false }
      ])
    } finally {
      await admin((client) => client.query(`DROP ROLE ${role}`))
    }
  })

  it.each([
    ['not-a-list.yaml', 'name: free\n', 'a plans file is a list of plans'],
    ['syntax.yaml', '- name: free\n  limits: [\n', 'syntax.yaml: '],
    [
      'typo.yaml',
      '- name: free\n  limit:\n    - { window: day, limit: 5 }\n',
      "plans[0] has 'limit'; it may have name, limits, costs"
    ],
    [
      'window.yaml',
      '- name: free\n  limits: [{ window: week, limit: 5 }]\n',
      'plans[0].limits[0].window must be one of'
    ],
    [
      'twice.json',
      JSON.stringify([
        { name: 'a', limits: [{ window: 'day', limit: 1 }] },
        { name: 'a', limits: [{ window: 'day', limit: 2 }] }
      ]),
      "plans[1] names 'a' again"
    ],
    [
      'cost.json',
      JSON.stringify([{ name: 'a', limits: [{ window: 'day', limit: 1 }], costs: { 'DELETE /v1/pets': 1 } }]),
      "plans[0].costs names 'DELETE /v1/pets'"
    ],
    [
      'name.json',
      JSON.stringify([{ name: 'Gold Plan', limits: [{ window: 'day', limit: 1 }] }]),
      "A plan's name is 1 to 40"
    ]
  ])(
    'refuses %s with one line naming the file and the problem, exit code 2, changing nothing',
    async (name, text, message) => {
      const path = await file(name, text)
      const plans = await stored()
      const before = await auditCount()
      const result = await run('plans', 'apply', path)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toContain(`${path}: `)
      expect(result.stderr).toContain(message)
      expect(await stored()).toEqual(plans)
      expect(await auditCount()).toBe(before)
    }
  )

  it('refuses a file that is not there with exit code 2', async () => {
    const result = await run('plans', 'apply', join(dir, 'missing.yaml'))
    expect(result).toEqual({ code: 2, stdout: '', stderr: `cannot read ${join(dir, 'missing.yaml')}: ENOENT\n` })
  })
  it('carries a shadow limit through apply and export, and refuses two shadows of one window', async () => {
    const path = await file(
      'shadow.yaml',
      `- name: trial
  limits:
    - { window: minute, limit: 60 }
    - { window: minute, limit: 20, shadow: true }
`
    )
    await cli('plans', 'apply', path)
    expect((await json('plans', 'show', 'trial')).limits).toEqual([
      { window: 'minute', algorithm: 'fixed', limit: 60, burst: null, shadow: false },
      { window: 'minute', algorithm: 'fixed', limit: 20, burst: null, shadow: true }
    ])
    const exported = parse(await cli('plans', 'export'))
    expect(exported.find((plan: { name: string }) => plan.name === 'trial').limits).toEqual([
      { window: 'minute', limit: 60 },
      { window: 'minute', limit: 20, shadow: true }
    ])
    const twice = await file(
      'shadows.json',
      JSON.stringify([
        {
          name: 'trial',
          limits: [
            { window: 'minute', limit: 20, shadow: true },
            { window: 'minute', limit: 30, shadow: true }
          ]
        }
      ])
    )
    const result = await run('plans', 'apply', twice)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('plans[0].limits has two shadow limits for the minute')
  })
})
