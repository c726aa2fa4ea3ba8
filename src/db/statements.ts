import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable
} from 'kysely'
import pg from 'pg'
import type { Database } from './schema.js'

/** Kysely as a query builder only: statements compiled at start-up, never executed through it. */
const builder = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler()
  }
})

/** A value of a statement, by name, while Kysely compiles it: it becomes one of the statement's parameters. */
class Parameter {
  constructor(readonly name: string) {}
}

export type Queryable = Pick<pg.Pool, 'query'>

type QueryCallback = (error: Error | null, result: pg.QueryResult) => void

/**
 * A hot statement that Kysely builds and compiles once, from a function that receives its values by
 * name: each run sends the compiled text and the values, unnamed. Unnamed, because a transaction
 * pooler hands each transaction any server connection, where a named prepared statement would not
 * exist; compiled once, because building and compiling it per request cost about 5 µs.
 */
export function statement<Values extends Record<string, unknown>, Row>(
  build: (db: Kysely<Database>, values: Values) => Compilable<Row>
): (db: Queryable, values: Values) => Promise<Row[]> {
  const placeholders = new Proxy({}, { get: (_target, name) => new Parameter(String(name)) }) as Values
  const compiled = build(builder, placeholders).compile()
  const names = compiled.parameters.map((parameter) => {
    if (parameter instanceof Parameter) return parameter.name
    throw new Error(`A statement takes every value by name; it has a fixed ${String(parameter)} in ${compiled.sql}`)
  })
  return (db, values) =>
    run<Row>(
      db,
      compiled.sql,
      names.map((name) => values[name])
    )
}

/**
 * Runs a query built from its text and values, as `query(text, values)` does, on a pool or a client:
 * given a config object instead, pg copies it property by property on every call, which costs more
 * than the rest of sending the query.
 */
function run<Row>(db: Queryable, text: string, values: unknown[]): Promise<Row[]> {
  const query = new pg.Query(text, values)
  return new Promise((resolve, reject) => {
    const callback: QueryCallback = (error, result) => (error ? reject(error) : resolve(result.rows as Row[]))
    // pg takes a query object and a callback on pools and clients alike; its typings list only the
    // query object alone.
    ;(db.query as unknown as (query: pg.Query, callback: QueryCallback) => void).call(db, query, callback)
  })
}
