import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type CompiledQuery
} from 'kysely'
import pg from 'pg'
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

type QueryCallback = (error: Error | null, result: pg.QueryResult) => void

/**
 * Runs a prepared statement on a pool or a client. The query is built from its text and values, as
 * for `query(text, values)`: given a config object instead, pg copies it property by property on
 * every call, which costs more than the rest of sending the query.
 */
export function runPrepared<Row>(db: Queryable, statement: PreparedStatement<Row>, values: unknown[]): Promise<Row[]> {
  const query = new pg.Query(statement.text, values)
  // Read by pg (it prepares named queries) but missing from its typings.
  ;(query as pg.Query & { name: string }).name = statement.name
  return new Promise((resolve, reject) => {
    const callback: QueryCallback = (error, result) => (error ? reject(error) : resolve(result.rows as Row[]))
    // pg takes a query object and a callback on pools and clients alike; its typings list only the
    // query object alone.
    ;(db.query as unknown as (query: pg.Query, callback: QueryCallback) => void).call(db, query, callback)
  })
}
