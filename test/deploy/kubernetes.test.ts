import { readdirSync, readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { Deployment } from 'kubernetes-models/apps/v1'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2'
import { Job } from 'kubernetes-models/batch/v1'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { ConfigMap, Service } from 'kubernetes-models/v1'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { ConfigSchema, loadConfig, trustedProxies } from '../../src/config.js'
import { createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { ROOT } from '../../harness/processes.js'

const DIRECTORY = join(ROOT, 'deploy/k8s')

// The Kubernetes schemas of each kind the manifests use; constructing one and validating it checks a
// manifest as the API server's schema would.
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1 Job': Job,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'v1 ConfigMap': ConfigMap,
  'v1 Service': Service
}

type Manifest = { apiVersion: string; kind: string; metadata: { name: string } } & Record<string, any>

const kustomization = parseAllDocuments(readFileSync(join(DIRECTORY, 'kustomization.yaml'), 'utf8'))[0]!.toJS()
const files = readdirSync(DIRECTORY).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
const manifests: Manifest[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIRECTORY, file), 'utf8')).map((document) => document.toJS() as Manifest)
)
const only = (kind: string) => {
  const found = manifests.filter((manifest) => manifest.kind === kind)
  expect(found, kind).toHaveLength(1)
  return found[0]!
}

describe('deploy/k8s', () => {
  it('lists every manifest in kustomization.yaml, and only those', () => {
    expect([...kustomization.resources].sort()).toEqual([...files].sort())
  })

  it.each(manifests.map((manifest) => [`${manifest.kind} ${manifest.metadata.name}`, manifest] as const))(
    '%s is valid against the Kubernetes schema of its kind',
    (_name, manifest) => {
      const Model = MODELS[`${manifest.apiVersion} ${manifest.kind}`]
      expect(Model, `${manifest.apiVersion} ${manifest.kind}`).toBeDefined()
      expect(() => new Model!(manifest).validate()).not.toThrow()
    }
  )

  it('holds objects of every kind the deployment needs', () => {
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Job',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Service'
      ].sort()
    )
  })
})

describe('the manifests agree with the service', () => {
  const deployment = () => only('Deployment')
  const container = () => deployment().spec.template.spec.containers[0]
  const settings = () => only('ConfigMap').data as Record<string, string>
  const known = Object.keys(ConfigSchema.properties)

  it('configure the service only with variables it knows, and a configuration it accepts', () => {
    for (const name of Object.keys(settings())) expect(known, name).toContain(name)
    for (const { name } of container().env) expect(known, name).toContain(name)
    for (const { name } of only('Job').spec.template.spec.containers[0].env) expect(known, name).toContain(name)
    const config = loadConfig({ ...settings(), DATABASE_URL: 'postgres://service@db/animal_store' })
    expect(config.MIGRATE_ON_START).toBe(false)
  })

  it('expose the ports the configuration sets, the public one through the Service', () => {
    const ports = Object.fromEntries(container().ports.map((port: any) => [port.name, port.containerPort]))
    expect(ports).toEqual({ http: Number(settings().PORT), metrics: Number(settings().METRICS_PORT) })
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toMatch(new RegExp(`PORT=${settings().PORT}\\b`))
    const service = only('Service')
    expect(service.spec.selector).toEqual(deployment().spec.template.metadata.labels)
    expect(service.spec.ports.map((port: any) => port.targetPort)).toEqual(['http'])
  })

  it('give a replica longer to stop than its preStop pause and SHUTDOWN_GRACE_MS together', () => {
    const [command, seconds] = container().lifecycle.preStop.exec.command
    expect(command).toBe('sleep')
    const graceMs = deployment().spec.template.spec.terminationGracePeriodSeconds * 1000
    expect(graceMs).toBeGreaterThan(Number(seconds) * 1000 + Number(settings().SHUTDOWN_GRACE_MS))
  })

  it('scale, shield and fence the Deployment’s own pods', () => {
    const labels = deployment().spec.template.metadata.labels
    expect(deployment().spec.selector.matchLabels).toEqual(labels)
    expect(only('HorizontalPodAutoscaler').spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment().metadata.name
    })
    expect(only('PodDisruptionBudget').spec.selector.matchLabels).toEqual(labels)
    expect(only('NetworkPolicy').spec.podSelector.matchLabels).toEqual(labels)
  })

  it('admit the public port only from the ingress controller’s pods, and the metrics port only from monitoring', () => {
    const rules = only('NetworkPolicy').spec.ingress as { from?: unknown[]; ports: { port: string }[] }[]
    const admitting = (name: string) => rules.filter((rule) => rule.ports.some((port) => port.port === name))
    // A rule without `from`, or with an empty one, admits every source.
    for (const rule of rules) expect(rule.from, JSON.stringify(rule)).not.toHaveLength(0)
    expect(admitting('http')).toHaveLength(1)
    // One peer with both selectors: pods with these labels in that namespace, not either alone.
    expect(admitting('http')[0]!.from).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
        podSelector: {
          matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx', 'app.kubernetes.io/component': 'controller' }
        }
      }
    ])
    expect(admitting('metrics')).toHaveLength(1)
    expect(admitting('metrics')[0]!.from).toEqual([{ namespaceSelector: { matchLabels: { purpose: 'monitoring' } } }])
  })

  it('trust X-Forwarded-For only from a few addresses, the ingress controller’s, not the pod network', () => {
    const entries = trustedProxies(settings().TRUST_PROXY ?? '')
    expect(entries.length).toBeGreaterThan(0)
    for (const entry of entries) {
      const [address, prefix] = entry.split('/')
      // No names (loopback, uniquelocal) and no range wider than 256 addresses.
      expect(isIP(address!), entry).not.toBe(0)
      if (prefix !== undefined) expect(Number(prefix), entry).toBeGreaterThanOrEqual(isIP(address!) === 4 ? 24 : 120)
    }
  })

  it('leave the replica count to the HPA that targets the Deployment, so an apply never resets it', () => {
    const targeted = manifests.some(
      (manifest) =>
        manifest.kind === 'HorizontalPodAutoscaler' &&
        manifest.spec.scaleTargetRef.kind === 'Deployment' &&
        manifest.spec.scaleTargetRef.name === deployment().metadata.name
    )
    expect(targeted).toBe(true)
    expect(deployment().spec).not.toHaveProperty('replicas')
  })

  it('give every container CPU and memory requests and limits', () => {
    const containers = manifests.flatMap((manifest) =>
      (manifest.spec?.template?.spec?.containers ?? []).map((entry: any) => [manifest, entry] as const)
    )
    expect(containers.length).toBeGreaterThanOrEqual(2)
    const missing = containers.flatMap(([manifest, { name, resources }]) =>
      ['requests', 'limits'].flatMap((kind) =>
        ['cpu', 'memory']
          .filter((resource) => resources?.[kind]?.[resource] === undefined)
          .map((resource) => `${manifest.kind} ${name}: ${kind}.${resource}`)
      )
    )
    expect(missing).toEqual([])
  })

  it('migrate with the same image, as the schema owner, before the replicas that do not', () => {
    const job = only('Job').spec.template.spec.containers[0]
    expect(job.image).toBe(container().image)
    expect(job.command).toEqual(['node', 'dist/src/cli.js', 'migrate'])
    const secretOf = (env: any[], name: string) => env.find((entry) => entry.name === name).valueFrom.secretKeyRef.name
    expect(secretOf(job.env, 'DATABASE_URL')).not.toBe(secretOf(container().env, 'DATABASE_URL'))
  })

  describe('probes', () => {
    let database: TestDatabase
    let app: FastifyInstance
    beforeAll(async () => {
      database = await createTestDatabase()
      app = await createTestApp(database)
    })
    afterAll(async () => {
      await app?.close()
      await database?.drop()
    })

    it('ask paths the service answers 200 on, without a key', async () => {
      for (const probe of [container().readinessProbe, container().livenessProbe]) {
        expect(probe.httpGet.port).toBe('http')
        expect((await app.inject({ method: 'GET', url: probe.httpGet.path })).statusCode, probe.httpGet.path).toBe(200)
      }
      expect(container().readinessProbe.httpGet.path).toBe('/health/ready')
    })
  })
})
