import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type CompiledQuery
} from 'kysely'
import type pg from 'pg'
import type { Database } from './schema.js'

/** Kysely as a query builder only: statements compiled at start-up, never executed through it. */
export const builder = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler()
  }
})

/**
 * A hot statement that Kysely builds and compiles once and Postgres prepares once per connection:
 * each run sends only its name and values, so Postgres skips parsing and planning it.
 */
export interface PreparedStatement<Row> {
  name: string
  text: string
  parameters: readonly string[]
  /** Carries the row type only. */
  readonly row?: Row
}

/** `parameters` names the values in the order the compiled statement takes them; checked here. */
export function prepare<Row>(
  name: string,
  query: Compilable<Row> | CompiledQuery<Row>,
  parameters: readonly string[]
): PreparedStatement<Row> {
  const compiled = 'compile' in query ? query.compile() : query
  if (compiled.parameters.length !== parameters.length) {
    throw new Error(`Statement ${name} takes ${compiled.parameters.length} values, not ${parameters.length}`)
  }
  return { name, text: compiled.sql, parameters }
}

export type Queryable = Pick<pg.Pool, 'query'>

export async function runPrepared<Row>(db: Queryable, statement: PreparedStatement<Row>, values: unknown[]): Promise<Row[]> {
  const result = await db.query({ name: statement.name, text: statement.text, values })
  return result.rows as Row[]
}
