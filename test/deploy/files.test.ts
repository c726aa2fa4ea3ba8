import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { ConfigSchema } from '../../src/config.js'
import { ROOT } from '../helpers/processes.js'

// There is no Docker engine here: these keep the Dockerfile and compose file pointing at what the build makes.
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
const stages = dockerfile.split(/^FROM /m).slice(1)
const finalStage = stages.at(-1)!
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Record<string, any>>
  volumes: Record<string, unknown>
}
const jsonArray = (instruction: string, text: string) => JSON.parse(new RegExp(`^${instruction} (\\[.*\\])$`, 'm').exec(text)![1]!) as string[]

beforeAll(async () => {
})

describe('Dockerfile', () => {
  it('builds in stages on node:24-slim and ships production dependencies only', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of stages) expect(stage).toMatch(/^node:24-slim\b/)
    expect(dockerfile).toContain('npm ci --omit=dev --omit=optional')
    expect(finalStage).toMatch(/^COPY --from=\w+ \/app\/node_modules \.\/node_modules$/m)
    expect(finalStage).toMatch(/^COPY --from=\w+ \/app\/dist \.\/dist$/m)
  })

  it('runs the built server as a non-root user on 0.0.0.0, with a readiness HEALTHCHECK', () => {
    expect(finalStage).toMatch(/^USER node$/m)
    expect(finalStage).toMatch(/HOST=0\.0\.0\.0/)
    const command = jsonArray('CMD', finalStage)
    expect(command).toEqual(['node', 'dist/src/server.js'])
    const healthcheck = jsonArray('HEALTHCHECK .*CMD', finalStage)
    expect(healthcheck).toEqual(['node', 'dist/src/healthcheck.js'])
    for (const file of [command[1]!, healthcheck[1]!]) expect(existsSync(join(ROOT, file)), file).toBe(true)
  })

  it('copies only files that exist, and .dockerignore keeps them in the context', () => {
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(' '))
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'migrations']))
    for (const path of copied) expect(existsSync(join(ROOT, path)), path).toBe(true)
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')
    for (const path of copied) expect(ignored).not.toContain(path)
  })
})

describe('docker-compose.yml', () => {
  const { db, migrate, app, lb } = compose.services as Record<string, Record<string, any>>

  it('runs Postgres on a named volume with a healthcheck, and migrates once before the app starts', () => {
    expect(db!.image).toMatch(/^postgres:\d+/)
    expect(db!.volumes).toEqual(['pgdata:/var/lib/postgresql/data'])
    expect(compose.volumes).toHaveProperty('pgdata')
    expect(db!.healthcheck.test.join(' ')).toContain('pg_isready')
    expect(migrate!.command).toEqual(['node', 'dist/src/cli.js', 'migrate'])
    expect(existsSync(join(ROOT, migrate!.command[1]))).toBe(true)
    expect(migrate!.depends_on).toEqual({ db: { condition: 'service_healthy' } })
    expect(app!.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } })
  })

  it('runs two app replicas behind nginx with deploy/nginx.conf, publishing only nginx', () => {
    expect(app!.deploy.replicas).toBe(2)
    expect(app!.ports).toBeUndefined()
    expect(lb!.image).toMatch(/^nginx:/)
    expect(lb!.ports).toEqual(['8080:8080'])
    expect(lb!.volumes).toEqual(['./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro'])
    expect(lb!.depends_on).toEqual({ app: { condition: 'service_healthy' } })
    const nginx = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8')
    expect(nginx).toMatch(/^\s*server app:3000 [^;]*;$/m)
    expect(nginx).toMatch(/^\s*listen 8080;$/m)
    expect(dockerfile).toMatch(/PORT=3000/)
  })

  it('configures the app only with variables the config schema knows, trusting the one proxy hop', () => {
    const known = Object.keys(ConfigSchema.properties)
    for (const service of [migrate!, app!]) {
      for (const name of Object.keys(service.environment)) expect(known, name).toContain(name)
    }
    expect(app!.environment.TRUST_PROXY).toBe('1')
    expect(app!.environment.DATABASE_URL).toMatch(/^postgres:\/\/\w+:.+@db:5432\/\w+$/)
  })

  it('lets a replica drain: the stop timeout exceeds SHUTDOWN_GRACE_MS', () => {
    const grace = Number(app!.environment.SHUTDOWN_GRACE_MS)
    expect(Number(String(app!.stop_grace_period).replace(/s$/, '')) * 1000).toBeGreaterThan(grace)
  })
})
