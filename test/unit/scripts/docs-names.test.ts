import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { checkDoc, errorCodes, loadNames, schemaNames, type Names } from '../../../scripts/docs-names.js'
import { ERRORS } from '../../../src/errors.js'

const ROOT = resolve(import.meta.dirname, '../../..')

let folder: string
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'animal-store-docs-names-'))
})
afterEach(() => rm(folder, { recursive: true, force: true }))

async function write(files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true })
    await writeFile(join(folder, path), text)
  }
  return Object.keys(files).sort()
}

/** A small tree's names, as loadNames reads them from a real one. */
const fixtureNames = (): Names => ({
  tables: new Set(['pets', 'limit_counters', 'audit_retention']),
  functions: new Set(['count_units', 'service_now']),
  dropped: new Set(['count_requests', 'rate_limit_counters']),
  environment: new Set(['DATABASE_URL', 'ADMIN_HOST', 'ADMIN_PORT', 'OVERLOAD_MAX_EVENT_LOOP_DELAY_MS']),
  packages: new Set(['@fastify/rate-limit', 'fastify']),
  errorCodes: new Set(['rate_limited', 'key_banned', 'account_exists']),
  files: new Set([
    'src/app.ts',
    'src/admin/auth.ts',
    'migrations/0028_count_units_set_based.ts',
    'bench/wrk/mixed.lua',
    'test/unit/scripts/docs-names.test.ts'
  ]),
  isIgnored: (path) => path === 'dist' || path.startsWith('dist/'),
  treeWords: new Set(['BENCH_ROUNDS', 'report.json'])
})

const problems = (text: string, names = fixtureNames(), file = 'docs/guide.md') =>
  checkDoc(file, text, names).map(({ line, name }) => `${line} ${name}`)

describe('the schema the docs check reads', () => {
  it("has today's tables and functions, and knows the dropped ones", () => {
    const schema = schemaNames(ROOT)
    expect(schema.tables).toContain('limit_counters')
    expect(schema.tables).toContain('webhook_deliveries')
    expect(schema.functions).toContain('count_units')
    expect(schema.functions).toContain('service_now')
    // The baseline (migrations/0028_baseline.sql) holds what release 2d40fdd had, not what it dropped.
    expect([...schema.dropped]).toEqual(['count_requests'])
    expect(schema.tables).not.toContain('rate_limit_counters')
    expect(schema.functions).not.toContain('count_requests')
  })

  it('reads a baseline and one .sql file per function as well, each migration up to its down()', async () => {
    const files = await write({
      'migrations/0001_baseline.sql':
        'CREATE TABLE public.pets (id bigint);\nCREATE UNLOGGED TABLE IF NOT EXISTS counters (n int);\n',
      'migrations/0002_counting.ts': [
        'export async function up(db) {\n  await sql`CREATE FUNCTION count_old(a int) RETURNS int`.execute(db)',
        '  await sql`DROP TABLE counters CASCADE`.execute(db)',
        "  await db.schema.createTable('usage').execute()",
        '  await sql`ALTER TABLE usage RENAME TO hourly_usage`.execute(db)\n}',
        'export async function down(db) {\n  await sql`DROP TABLE pets`.execute(db)\n}\n'
      ].join('\n'),
      'migrations/0003_drop.ts': 'export async function up(db) {\n  await sql`DROP FUNCTION count_old(int)`\n}\n',
      'migrations/functions/count_units.sql': 'CREATE OR REPLACE FUNCTION public.count_units(ids bigint[])\n'
    })
    const schema = schemaNames(folder, files)
    expect([...schema.tables].sort()).toEqual(['hourly_usage', 'pets'])
    expect([...schema.functions]).toEqual(['count_units'])
    // A renamed table's old name is gone as a dropped one is.
    expect([...schema.dropped].sort()).toEqual(['count_old', 'counters', 'usage'])
  })
})

describe('the error codes the docs check reads', () => {
  it("are the registry's, and nothing else", () => {
    expect([...errorCodes()]).toEqual(Object.keys(ERRORS))
    expect(errorCodes()).not.toContain('plans')
  })
})

describe('a doc checked against the names', () => {
  it('fails on each kind of name the tree lacks, naming the line', () => {
    const doc = [
      '# Guide',
      'Counting is `count_requests` over `rate_limit_counters` (subject `account:<id>`).', // 2
      'It calls `count_requests(subjects, …)` and `missing_fn(1)`.', // 3
      '`@fastify/bearer-auth` guards the admin API; `node:nonexistent` too.', // 4
      'Set `REMOVED_SETTING` or `ADMIN_HOST:ADMIN_PORT` or `OLD_*`.', // 5
      'See `src/gone.ts` and `lib/` and `gone.sql` and `bench/**/*.py`.', // 6
      'The admin API answers 409 `account_gone`; `403` `role_missing`, or `429 no_such_code`.', // 7
      'The `missing_table` table, and `UPDATE forgotten SET days = 90`.', // 8
      '',
      '| HTTP | code | when |',
      '|---|---|---|',
      '| 429 | `out_of_units` | never |' // 12
    ].join('\n')
    expect(problems(doc)).toEqual([
      '2 count_requests',
      '2 rate_limit_counters',
      '3 count_requests',
      '3 missing_fn',
      '4 @fastify/bearer-auth',
      '4 node:nonexistent',
      '5 REMOVED_SETTING',
      '5 OLD_*',
      '6 src/gone.ts',
      '6 lib/',
      '6 gone.sql',
      '6 bench/**/*.py',
      '7 account_gone',
      '7 role_missing',
      '7 no_such_code',
      '8 missing_table',
      '8 forgotten',
      '12 out_of_units'
    ])
  })

  it('passes names the tree has, and what is not a name it checks', () => {
    const doc = [
      '`count_units` locks `limit_counters`; `service_now()`, `clock_timestamp()`, `pg_is_in_recovery()`.',
      '`UPDATE audit_retention SET days = 90`; `FOR UPDATE SKIP LOCKED`; `audit_retention.days`.',
      '`DATABASE_URL=postgres://x`, `BENCH_ROUNDS=1 npm run bench`, `OVERLOAD_*`, `ADMIN_HOST:ADMIN_PORT`.',
      '`@fastify/rate-limit`, `node:crypto`, `helmet`, `chromium`.',
      '`src/app.ts`, `src/admin/`, `admin/auth.ts`, `bench/wrk/*.lua`, `test/**/*.test.ts`, `dist/src/server.js`.',
      '`report.json`, `./src/app.ts`, `src/app.ts:12`.',
      '`GET /v1/pets?limit=20`, `/admin/v1`, `X-RateLimit-Reset`, `Retry-After: 1`, `application/json`.',
      '`{"code": "no_such_code"}`, `previousSecretExpiresAt`, `--grace-seconds 86400`, `10.0.0.0/8`.',
      '`npm run --silent cli -- keys create --plan pro`, `.css`, `animal_store_app`, `pets:read`.',
      'A 429 `rate_limited`, then `key_banned`; a `fixed` window; the `pets` table.',
      '',
      '```sql',
      'SELECT count_requests(), * FROM rate_limit_counters',
      '```'
    ].join('\n')
    expect(problems(doc)).toEqual([])
  })

  it('leaves history pages alone, and names a doc declares not in the code', () => {
    const stale = 'Counting was `count_requests`; `@fastify/bearer-auth` guarded the admin API.'
    expect(problems(stale, fixtureNames(), 'docs/history/rate-limits.md')).toEqual([])
    expect(problems(stale, fixtureNames(), 'README.md')).toEqual(['1 count_requests', '1 @fastify/bearer-auth'])
    const declared = `<!-- not in the code: @fastify/bearer-auth -->\n\n${stale}`
    expect(problems(declared)).toEqual(['3 count_requests'])
  })
})

describe("today's tree", () => {
  // Reads every file of the tree: seconds on a busy machine.
  it('fails a doc that names what was dropped or never installed as current', { timeout: 30_000 }, () => {
    const names = loadNames(ROOT)
    // Built from parts, so that no file of the tree names this variable.
    const variable = ['RETIRED', 'SETTING', 'MS'].join('_')
    const doc = [
      'Counting is `count_requests`, over the `rate_limit_counters` table.',
      '`@fastify/bearer-auth` guards the admin API.',
      `Set \`${variable}\`.`,
      'See `src/limits/counter.ts`; `migrations/0028_baseline.sql` is current.',
      'A closed account answers 409 `account_closed`, a retired error 410 `expired`.'
    ].join('\n')
    expect(checkDoc('docs/rate-limits.md', doc, names).map(({ line, name }) => `${line} ${name}`)).toEqual([
      '1 count_requests',
      '1 rate_limit_counters',
      '2 @fastify/bearer-auth',
      `3 ${variable}`,
      '4 src/limits/counter.ts',
      '5 expired'
    ])
  })
})
