// The schema of a migrated database as one SQL file, read from the catalog: tables (columns,
// constraints, indexes, triggers, grants), views, then functions with their bodies. Every part is
// sorted by name and written by PostgreSQL's own pg_get_*def functions, so the text is the same
// whichever server (15 or later) it comes from and however the database got there.
import { sql, type Kysely } from 'kysely'

export const SCHEMA_FILE = 'db/schema.sql'

const HEADER = `-- The schema of a database migrated to the head, read from its catalog: written by
-- \`npm run db:schema\`, checked by test/db/schema-file.test.ts. Do not edit: change it with a migration.
`

const PRIVILEGE_ORDER = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'TRUNCATE',
  'REFERENCES',
  'TRIGGER',
  'USAGE',
  'EXECUTE'
]

interface Relation {
  oid: number
  name: string
  kind: string
  persistence: string
  /** Storage parameters (fillfactor), as name=value. */
  options: string[] | null
  /** For the sequence of an identity column: its table's oid. */
  identityOf: number | null
}

interface Grant {
  object: string
  grantee: string
  privilege: string
}

type Db = Kysely<any>

async function rows<T>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  return (await query.execute(db)).rows as T[]
}

/** The whole file's text. */
export async function schemaSql(db: Db): Promise<string> {
  const relations = await rows<Relation>(
    db,
    sql`
      SELECT c.oid::int AS oid, quote_ident(c.relname) AS name, c.relkind AS kind, c.relpersistence AS persistence, c.reloptions AS options,
        (SELECT d.refobjid::int FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'i' AND c.relkind = 'S') AS "identityOf"
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'c')
        AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')
      ORDER BY c.relname COLLATE "C"`
  )
  const grants = await relationGrants(db)
  const sections: string[] = [HEADER.trimEnd()]
  for (const relation of relations.filter((r) => r.kind === 'r' || r.kind === 'p')) {
    sections.push(await tableSql(db, relation, grants, relations))
  }
  // A sequence of an identity column is the column's; its grants are written with its table.
  for (const relation of relations.filter((r) => r.kind === 'S' && r.identityOf === null)) {
    sections.push([`CREATE SEQUENCE ${relation.name};`, ...grantLines('SEQUENCE', relation.name, grants)].join('\n'))
  }
  for (const relation of relations.filter((r) => r.kind === 'c')) {
    const fields = await rows<{ field: string }>(
      db,
      sql`
        SELECT quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod) AS field
        FROM pg_attribute a WHERE a.attrelid = ${relation.oid}::oid AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum`
    )
    sections.push(`CREATE TYPE ${relation.name} AS (\n${fields.map(({ field }) => `  ${field}`).join(',\n')}\n);`)
  }
  for (const relation of relations.filter((r) => r.kind === 'v' || r.kind === 'm')) {
    const [view] = await rows<{ definition: string }>(
      db,
      sql`SELECT pg_get_viewdef(${relation.oid}::oid, true) AS definition`
    )
    const kind = relation.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW'
    sections.push(
      [
        `CREATE ${kind} ${relation.name} AS\n${view!.definition.trimEnd()}`,
        ...(await triggerLines(db, relation.oid)),
        ...grantLines('TABLE', relation.name, grants)
      ].join('\n')
    )
  }
  sections.push(...(await functionSections(db)))
  sections.push(...(await databaseSettings(db)))
  return `${sections.join('\n\n')}\n`
}

async function tableSql(db: Db, table: Relation, grants: Grant[], relations: Relation[]): Promise<string> {
  const columns = await rows<{
    name: string
    type: string
    not_null: boolean
    default: string | null
    identity: string
    generated: string
  }>(
    db,
    sql`
      SELECT quote_ident(a.attname) AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
        pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity AS identity, a.attgenerated AS generated
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = ${table.oid}::oid AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`
  )
  // Primary key, unique, check, foreign key, exclusion: in that order, each kind by name.
  const constraints = await rows<{ name: string; definition: string }>(
    db,
    sql`
      SELECT quote_ident(conname) AS name, pg_get_constraintdef(oid, true) AS definition
      FROM pg_constraint WHERE conrelid = ${table.oid}::oid AND contype IN ('p', 'u', 'c', 'f', 'x')
      ORDER BY array_position(ARRAY['p', 'u', 'c', 'f', 'x']::"char"[], contype), conname COLLATE "C"`
  )
  const indexes = await rows<{ definition: string }>(
    db,
    sql`
      SELECT pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = ${table.oid}::oid
        AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid)
      ORDER BY c.relname COLLATE "C"`
  )
  const body = [
    ...columns.map((column) => {
      let line = `  ${column.name} ${column.type}`
      if (column.generated === 's') line += ` GENERATED ALWAYS AS (${column.default}) STORED`
      else if (column.default !== null) line += ` DEFAULT ${column.default}`
      if (column.identity === 'a') line += ' GENERATED ALWAYS AS IDENTITY'
      if (column.identity === 'd') line += ' GENERATED BY DEFAULT AS IDENTITY'
      if (column.not_null) line += ' NOT NULL'
      return line
    }),
    ...constraints.map((constraint) => `  CONSTRAINT ${constraint.name} ${constraint.definition}`)
  ]
  const unlogged = table.persistence === 'u' ? 'UNLOGGED ' : ''
  const storage = table.options ? ` WITH (${table.options.join(', ')})` : ''
  return [
    `CREATE ${unlogged}TABLE ${table.name} (\n${body.join(',\n')}\n)${storage};`,
    ...indexes.map((index) => `${stripPublic(index.definition)};`),
    ...(await triggerLines(db, table.oid)),
    ...grantLines('TABLE', table.name, grants),
    ...relations
      .filter((sequence) => sequence.identityOf === table.oid)
      .flatMap((sequence) => grantLines('SEQUENCE', sequence.name, grants))
  ].join('\n')
}

async function triggerLines(db: Db, relation: number): Promise<string[]> {
  const triggers = await rows<{ definition: string }>(
    db,
    sql`
      SELECT pg_get_triggerdef(oid, true) AS definition FROM pg_trigger
      WHERE tgrelid = ${relation}::oid AND NOT tgisinternal ORDER BY tgname COLLATE "C"`
  )
  return triggers.map((trigger) => `${stripPublic(trigger.definition)};`)
}

// pg_get_indexdef and pg_get_triggerdef name the table with its schema; every object here is in public.
const stripPublic = (text: string) => text.replace(/\bpublic\./g, '')

/** Every privilege granted on a relation to a role other than its owner. */
async function relationGrants(db: Db): Promise<Grant[]> {
  return rows<Grant>(
    db,
    sql`
      SELECT quote_ident(c.relname) AS object, coalesce(quote_ident(r.rolname), 'PUBLIC') AS grantee, x.privilege_type AS privilege
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
        LATERAL aclexplode(c.relacl) x LEFT JOIN pg_roles r ON r.oid = x.grantee
      WHERE n.nspname = 'public' AND x.grantee <> c.relowner
      ORDER BY 1, 2`
  )
}

function grantLines(kind: 'TABLE' | 'SEQUENCE', object: string, grants: Grant[]): string[] {
  const byGrantee = new Map<string, string[]>()
  for (const grant of grants.filter((g) => g.object === object)) {
    byGrantee.set(grant.grantee, [...(byGrantee.get(grant.grantee) ?? []), grant.privilege])
  }
  const target = kind === 'TABLE' ? object : `SEQUENCE ${object}`
  return [...byGrantee].map(
    ([grantee, privileges]) => `GRANT ${sortPrivileges(privileges).join(', ')} ON ${target} TO ${grantee};`
  )
}

const sortPrivileges = (privileges: string[]) =>
  [...privileges].sort((a, b) => PRIVILEGE_ORDER.indexOf(a) - PRIVILEGE_ORDER.indexOf(b))

/** Each function: its definition, then who may run it when that is not everyone. */
async function functionSections(db: Db): Promise<string[]> {
  const functions = await rows<{
    definition: string
    signature: string
    publicExecutes: boolean
    grantees: string[]
  }>(
    db,
    sql`
      SELECT pg_get_functiondef(p.oid) AS definition,
        p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS signature,
        p.proacl IS NULL OR EXISTS (SELECT FROM aclexplode(p.proacl) x WHERE x.grantee = 0) AS "publicExecutes",
        coalesce(ARRAY(
          SELECT quote_ident(r.rolname) FROM aclexplode(p.proacl) x JOIN pg_roles r ON r.oid = x.grantee
          WHERE x.grantee <> p.proowner ORDER BY r.rolname COLLATE "C"
        ), '{}') AS grantees
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
        AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
      ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C"`
  )
  return functions.map(({ definition, signature, publicExecutes, grantees }) => {
    const lines = [`${definition.replace(/^(CREATE OR REPLACE (?:FUNCTION|PROCEDURE)) public\./, '$1 ').trimEnd()};`]
    if (!publicExecutes) lines.push(`REVOKE ALL ON FUNCTION ${signature} FROM PUBLIC;`)
    for (const grantee of grantees) lines.push(`GRANT EXECUTE ON FUNCTION ${signature} TO ${grantee};`)
    return lines.join('\n')
  })
}

/** The settings the migrations give the database itself (ALTER DATABASE ... SET), for every role. */
async function databaseSettings(db: Db): Promise<string[]> {
  const settings = await rows<{ setting: string }>(
    db,
    sql`
      SELECT unnest(s.setconfig) AS setting FROM pg_db_role_setting s
      WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) AND s.setrole = 0
      ORDER BY 1`
  )
  return settings.map(({ setting }) => {
    const at = setting.indexOf('=')
    return `-- Set on the database: ALTER DATABASE ... SET ${setting.slice(0, at)} = '${setting.slice(at + 1)}'`
  })
}
