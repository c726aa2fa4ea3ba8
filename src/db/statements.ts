import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type Compilable,
  type RawBuilder
} from 'kysely'
import { setTimeout } from 'node:timers/promises'
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

/** Pools whose connections are sessions of their own (no transaction pooler): statements may be prepared there. */
const sessionPools = new WeakSet<Queryable>()

/**
 * Lets the statements below be prepared under a name on this pool's connections: Postgres then
 * parses and plans each once per connection instead of on every run
 * (docs/history/benchmark.md#measurements-behind-the-code). Only for a pool that reaches Postgres directly or through a session pooler: through a transaction
 * pooler the next transaction may run on a server connection where the name does not exist.
 */
export function prepareStatementsOn(pool: Queryable): void {
  sessionPools.add(pool)
}

let statementCount = 0

/**
 * A hot statement that Kysely builds and compiles once, from a function that receives its values by
 * name: each run sends the compiled text and the values, as a statement prepared under its own name
 * on the pools `prepareStatementsOn` names and unnamed on the others (a transaction pooler).
 * Compiled once, because building and compiling it per request costs CPU on every request
 * (docs/history/benchmark.md#measurements-behind-the-code).
 */
export function statement<Values extends Record<string, unknown>, Row>(
  build: (db: Kysely<Database>, values: Values) => Compilable<Row> | RawBuilder<Row>
): (db: Queryable, values: Values) => Promise<Row[]> {
  const placeholders = new Proxy({}, { get: (_target, name) => new Parameter(String(name)) }) as Values
  const query = build(builder, placeholders)
  // A `sql` template compiles against a Kysely instance; a query builder knows its own.
  const compiled = 'isRawBuilder' in query ? query.compile(builder) : query.compile()
  const names = compiled.parameters.map((parameter) => {
    if (parameter instanceof Parameter) return parameter.name
    throw new Error(`A statement takes every value by name; it has a fixed ${String(parameter)} in ${compiled.sql}`)
  })
  const preparedName = `animal_store_${++statementCount}`
  return (db, values) => {
    const query = new pg.Query(
      compiled.sql,
      names.map((name) => values[name])
    )
    // Set after construction: pg copies a config object property by property on every call, which
    // costs more than the rest of sending the query.
    if (sessionPools.has(db)) (query as pg.Query & { name: string }).name = preparedName
    return run<Row>(db, query)
  }
}

/** deadlock_detected: PostgreSQL rolled the victim's transaction back whole. */
const DEADLOCK_DETECTED = '40P01'
/** Runs of a statement that keeps losing deadlocks, and the pause before each further run. */
const DEADLOCK_RUNS = 3
const DEADLOCK_PAUSE_MS = { least: 10, spread: 40 }

/**
 * Runs a statement of its own transaction (autocommit) again when PostgreSQL chose it as a
 * deadlock's victim: it was rolled back whole, so a further run changes nothing twice. The counting
 * statements take each account's row in account order, so two of them should never deadlock; this
 * is the safety net should a lock taken out of that order ever meet them. The pause lets the
 * winner, which already holds what it needs, finish first.
 */
export async function againOnDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if ((error as { code?: unknown }).code !== DEADLOCK_DETECTED || attempt === DEADLOCK_RUNS) throw error
    }
    await setTimeout(DEADLOCK_PAUSE_MS.least + Math.random() * DEADLOCK_PAUSE_MS.spread)
  }
}

/** Runs a query object on a pool or a client, as `query(text, values)` would. */
function run<Row>(db: Queryable, query: pg.Query): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const callback: QueryCallback = (error, result) => (error ? reject(error) : resolve(result.rows as Row[]))
    // pg takes a query object and a callback on pools and clients alike; its typings list only the
    // query object alone.
    ;(db.query as unknown as (query: pg.Query, callback: QueryCallback) => void).call(db, query, callback)
  })
}
