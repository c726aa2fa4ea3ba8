import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parser } from '@prometheus-io/lezer-promql'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { freePort } from '../../src/db/embedded.js'
import { createTestApp, issueTestKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { ROOT } from '../../harness/processes.js'
import { describeWith } from '../helpers/requirements.js'
import { TOOLS } from '../../harness/programs.js'
import { startWebhookWorker } from '../../src/webhooks/worker.js'

const RULES = join(ROOT, 'deploy/prometheus/alerts.yml')
const RULE_TESTS = join(ROOT, 'deploy/prometheus/alerts.test.yml')

interface Rule {
  alert: string
  expr: string
  annotations: Record<string, string>
}
interface Target {
  expr: string
  datasource: { uid: string }
}
interface Panel {
  id: number
  type: string
  title: string
  datasource?: { uid: string }
  targets?: Target[]
}
interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[]
  panels: Panel[]
  templating: { list: { name: string; definition: string; datasource: { uid: string } }[] }
}

const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules
)
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/animal-store.json'), 'utf8')) as Dashboard
const charts = dashboard.panels.filter((panel) => panel.type !== 'row')

/** The metric names a PromQL expression selects; Grafana's interval variables stand for a duration. */
function metricNames(expr: string): string[] {
  const query = expr.replace(/\$__(rate_interval|interval|range)\b/g, '5m')
  const names: string[] = []
  const errors: string[] = []
  parser.parse(query).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`${node.from}: ${query.slice(node.from, node.from + 20)}`)
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') {
        names.push(query.slice(node.from, node.to))
      }
    }
  })
  expect(errors, `PromQL that does not parse: ${query}`).toEqual([])
  expect(names.length, `no metric in ${query}`).toBeGreaterThan(0)
  return names
}

describe('metricNames', () => {
  it('finds the selectors of a query and not its labels, functions or Grafana variables', () => {
    expect(
      metricNames(
        'sum by (le) (rate(a_bucket{route=~"/v1/.*", instance=~"$instance"}[$__rate_interval])) / ignoring(x) b - on() c'
      )
    ).toEqual(['a_bucket', 'b', 'c'])
  })

  it('fails on a query that does not parse', () => {
    expect(() => metricNames('sum(rate(a[5m])')).toThrow(/does not parse/)
  })
})

describe('the dashboard and the alert rules', () => {
  let database: TestDatabase
  let app: FastifyInstance
  let exported: Set<string>

  beforeAll(async () => {
    database = await createTestDatabase()
    app = await createTestApp(database, { env: { METRICS_PORT: String(await freePort()) } })
    const url = (await app.metrics.listen())!
    // The webhook worker registers its metrics on the app's registry, as src/server.ts starts it.
    const worker = startWebhookWorker({
      db: database.db,
      policy: { allowHttp: false, allowedCidrs: [] },
      timeoutMs: 1000,
      concurrency: 1,
      log: app.log,
      registry: app.metrics.registry
    })
    await worker.drain()
    await worker.stop()
    // Some traffic: a keyed request, an unknown key and an unmatched path.
    const key = await issueTestKey(database)
    await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })
    await app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: 'Bearer nope' } })
    await app.inject({ method: 'GET', url: '/nowhere' })
    const text = await (await fetch(url)).text()
    exported = new Set(
      text
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0])
    )
  })
  afterAll(async () => {
    await app?.close()
    await database?.drop()
  })

  it('name only metrics the service exports, histogram series included', () => {
    expect(exported).toContain('animal_store_http_request_duration_seconds_bucket')
    const named = [
      ...rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
      ...charts.flatMap((panel) =>
        (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr }))
      )
    ]
    const missing = named.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${where}: ${name}`)
    )
    const variables = dashboard.templating.list.map(
      (variable) => /^label_values\((\w+), *\w+\)$/.exec(variable.definition)![1]!
    )
    expect(missing).toEqual([])
    expect(variables.filter((name) => !exported.has(name))).toEqual([])
  })
})

describe('the dashboard', () => {
  it('is importable as is, every query on the Prometheus data source it asks for', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })])
    const sources = [
      ...charts.map((panel) => panel.datasource?.uid),
      ...charts.flatMap((panel) => (panel.targets ?? []).map((target) => target.datasource.uid)),
      ...dashboard.templating.list.map((variable) => variable.datasource.uid)
    ]
    // Grafana asks for the input at import and puts its choice wherever `${NAME}` stands.
    expect(new Set(sources)).toEqual(new Set([`\${${dashboard.__inputs[0]!.name}}`]))
    const ids = dashboard.panels.map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('draws what an operator looks for', () => {
    expect(charts.map((panel) => panel.title)).toEqual([
      'Requests by route and status',
      'Latency p50 and p99',
      'Share of 5xx responses',
      'Refusals by reason',
      'Bans',
      'Requests by plan and outcome',
      'Counting statements',
      'Batch size',
      'Counting statement latency',
      'Database pool in use and waiting',
      'Event-loop delay',
      'Readiness',
      'Webhook deliveries',
      'Webhook backlog',
      'Oldest waiting webhook'
    ])
  })
})

describe('the alert rules', () => {
  const deployDoc = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8')
  const anchors = new Set(
    [...deployDoc.matchAll(/^#+ (.+)$/gm)].map(([, heading]) =>
      heading!
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-')
    )
  )
  const tested = new Set(
    (parse(readFileSync(RULE_TESTS, 'utf8')) as { tests: { alert_rule_test: { alertname: string }[] }[] }).tests
      .flatMap((test) => test.alert_rule_test)
      .map((test) => test.alertname)
  )

  it('each link to a runbook in docs/deploy.md, and each have a unit test', () => {
    expect(rules.map((rule) => rule.alert)).toEqual([
      'AnimalStoreHighErrorRatio',
      'AnimalStoreNotReady',
      'AnimalStoreDatabaseUnreachable',
      'AnimalStoreHighLatency',
      'AnimalStoreCountingBacklog',
      'AnimalStoreBanBurst',
      'AnimalStoreWebhookBacklog'
    ])
    for (const rule of rules) {
      expect(rule.annotations.runbook_url).toBe(`docs/deploy.md#${rule.alert.toLowerCase()}`)
      expect(anchors, rule.alert).toContain(rule.alert.toLowerCase())
      expect(tested, rule.alert).toContain(rule.alert)
    }
  })
})

describeWith('promtool')('promtool', () => {
  const promtool = (...args: string[]) =>
    promisify(execFile)(TOOLS.promtool.path, args, { cwd: join(ROOT, 'deploy/prometheus'), timeout: 60_000 })

  it('checks the rules', async () => {
    const { stdout } = await promtool('check', 'rules', RULES)
    expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`)
  })

  it('passes the rules’ unit tests', async () => {
    const { stdout } = await promtool('test', 'rules', RULE_TESTS)
    expect(stdout).toContain('SUCCESS')
  })
})
