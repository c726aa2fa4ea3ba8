import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import proxyAddr from '@fastify/proxy-addr'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { ROOT } from '../../../harness/processes.js'
import { ConfigSchema, trustedProxies } from '../../../src/config.js'

// There is no Docker engine here: these keep the Dockerfile and compose file pointing at what the build makes.
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
const stages = dockerfile.split(/^FROM /m).slice(1)
const finalStage = stages.at(-1)!
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Record<string, any>>
  volumes: Record<string, unknown>
}
const jsonArray = (instruction: string, text: string) =>
  JSON.parse(new RegExp(`^${instruction} (\\[.*\\])$`, 'm').exec(text)![1]!) as string[]

// The build compiles each folder tsconfig.build.json includes into dist/, keeping its path: src/server.ts to dist/src/server.js.
const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
  compilerOptions: { outDir: string; rootDir: string }
  include: string[]
}
/** The source the build compiles into `built` (a path under dist/), when it has one. */
function sourceOf(built: string): string | undefined {
  const { outDir, rootDir } = build.compilerOptions
  if (rootDir !== '.' || !built.startsWith(`${outDir}/`)) return undefined
  const source = built.slice(outDir.length + 1).replace(/\.js$/, '.ts')
  return build.include.includes(source.split('/')[0]!) && existsSync(join(ROOT, source)) ? source : undefined
}

describe('Dockerfile', () => {
  it('builds in stages on node:26-slim and ships production dependencies only', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of stages) expect(stage).toMatch(/^node:26-slim\b/)
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
    for (const file of [command[1]!, healthcheck[1]!]) expect(sourceOf(file), file).toBeDefined()
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
  const { db, migrate, pgbouncer, app, lb } = compose.services

  it('runs Postgres on a named volume with a healthcheck, and migrates once before the app starts', () => {
    expect(db!.image).toMatch(/^postgres:\d+/)
    expect(db!.volumes).toEqual([
      'pgdata:/var/lib/postgresql/data',
      './deploy/postgres/roles.sql:/docker-entrypoint-initdb.d/roles.sql:ro'
    ])
    expect(existsSync(join(ROOT, 'deploy/postgres/roles.sql'))).toBe(true)
    expect(compose.volumes).toHaveProperty('pgdata')
    expect(db!.healthcheck.test.join(' ')).toContain('pg_isready')
    expect(migrate!.command).toEqual(['node', 'dist/src/cli.js', 'migrate'])
    expect(sourceOf(migrate!.command[1])).toBe('src/cli.ts')
    expect(migrate!.depends_on).toEqual({ db: { condition: 'service_healthy' } })
    expect(app!.depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' },
      pgbouncer: { condition: 'service_started' }
    })
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

  it('configures the app only with variables the config schema knows, trusting nginx’s address alone', () => {
    const known = Object.keys(ConfigSchema.properties)
    for (const service of [migrate!, app!]) {
      for (const name of Object.keys(service.environment)) expect(known, name).toContain(name)
    }
    const nginxAddress = lb!.networks.default.ipv4_address as string
    expect(app!.environment.TRUST_PROXY).toBe(nginxAddress)
    expect(trustedProxies(app!.environment.TRUST_PROXY)).toEqual([nginxAddress])
    const { networks } = compose as unknown as { networks: { default: { ipam: { config: { subnet: string }[] } } } }
    expect(proxyAddr.compile(networks.default.ipam.config[0]!.subnet)(nginxAddress, 0)).toBe(true)
    expect(app!.environment.DATABASE_URL).toMatch(/^postgres:\/\/\w+:.+@pgbouncer:6432\/\w+$/)
    expect(app!.environment.DATABASE_DIRECT_URL).toMatch(/^postgres:\/\/\w+:.+@db:5432\/\w+$/)
  })

  it('migrates as the schema owner and runs the app as the role without DDL rights, with no default password', () => {
    const role = (url: string) => new URL(url.replace(/\$\{[^}]+\}/, 'secret')).username
    expect(role(migrate!.environment.DATABASE_URL)).toBe(db!.environment.DATABASE_OWNER_ROLE)
    expect(role(app!.environment.DATABASE_URL)).toBe(db!.environment.DATABASE_SERVICE_ROLE)
    expect(migrate!.environment.DATABASE_URL).toContain('${DATABASE_OWNER_PASSWORD:?')
    expect(app!.environment.DATABASE_URL).toContain('${DATABASE_SERVICE_PASSWORD:?')
    expect(app!.environment.MIGRATE_ON_START).toBe('false')
    expect(finalStage).toMatch(/MIGRATE_ON_START=false/)
    // Every password must be given: `${NAME:?message}`, never a `${NAME:-default}`.
    const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')
    const passwords = [...text.matchAll(/\$\{(\w*PASSWORD\w*)(:.)?/g)]
    expect(passwords.map((match) => match[1])).toEqual(
      expect.arrayContaining(['POSTGRES_PASSWORD', 'DATABASE_OWNER_PASSWORD', 'DATABASE_SERVICE_PASSWORD'])
    )
    for (const match of passwords) expect(match[2], match[0]).toBe(':?')
    expect(db!.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/)
  })

  it('puts PgBouncer in transaction mode between the replicas and Postgres; migrations and LISTEN go direct', () => {
    expect(pgbouncer!.volumes).toEqual(['./deploy/pgbouncer.ini:/etc/pgbouncer/pgbouncer.ini:ro'])
    const ini = readFileSync(join(ROOT, 'deploy/pgbouncer.ini'), 'utf8')
    expect(ini).toMatch(/^pool_mode = transaction$/m)
    expect(ini).toMatch(/^animal_store = host=db port=5432 dbname=animal_store$/m)
    expect(ini).toMatch(/^listen_port = 6432$/m)
    // A failed login after a failover is tried again within a second, not after the default 15 s.
    expect(ini).toMatch(/^server_login_retry = 1$/m)
    expect(pgbouncer!.depends_on).toEqual({ db: { condition: 'service_healthy' } })
    const hostOf = (url: string) => new URL(url.replace(/\$\{[^}]+\}/, 'secret')).host
    expect(hostOf(app!.environment.DATABASE_URL)).toBe('pgbouncer:6432')
    expect(hostOf(app!.environment.DATABASE_DIRECT_URL)).toBe('db:5432')
    expect(hostOf(migrate!.environment.DATABASE_URL)).toBe('db:5432')
    expect(pgbouncer!.environment.DB_USER).toBe(db!.environment.DATABASE_SERVICE_ROLE)
  })

  it('lets a replica drain: the stop timeout exceeds SHUTDOWN_GRACE_MS', () => {
    const grace = Number(app!.environment.SHUTDOWN_GRACE_MS)
    expect(Number(String(app!.stop_grace_period).replace(/s$/, '')) * 1000).toBeGreaterThan(grace)
  })
})
