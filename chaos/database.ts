// After the load: idempotency_keys as the primary holds it, and each database node's copy of the
// tables the run writes, read once the standby has replayed everything the primary wrote.
import type { IdempotencyRow, NodeCopy } from './checker.js'
import { DATABASE, queryOnce, until, type Topology } from './topology.js'

/** The tables compared across the nodes, each with the order its rows are hashed in. */
const COMPARED = { pets: 'id', idempotency_keys: 'api_key_id, key', api_keys: 'id', accounts: 'id' } as const

export function readIdempotency(directUrl: string) {
  return queryOnce<IdempotencyRow>(
    directUrl,
    `SELECT i.key, k.prefix, i.pet_id::text AS "petId" FROM idempotency_keys i JOIN api_keys k ON k.id = i.api_key_id`,
    60_000
  )
}

/** Waits for a settled pair and the standby's replay to reach the primary's WAL position, then hashes each node's rows. */
export async function nodeCopies(topology: Topology): Promise<NodeCopy[]> {
  const { cluster } = topology
  await cluster.waitHealthy(180_000)
  const primary = await until('the primary', () => cluster.primary(), 60_000)
  const [position] = await queryOnce<{ lsn: string }>(
    cluster.nodeUrl(primary, DATABASE),
    'SELECT pg_current_wal_lsn()::text AS lsn'
  )
  for (const node of cluster.nodes.filter((node) => node.name !== primary.name)) {
    await until(
      `${node.name} to replay up to ${position!.lsn}`,
      async () => {
        const [row] = await queryOnce<{ caughtUp: boolean }>(
          cluster.nodeUrl(node, DATABASE),
          `SELECT pg_last_wal_replay_lsn() >= '${position!.lsn}'::pg_lsn AS "caughtUp"`
        )
        return row?.caughtUp ? true : undefined
      },
      60_000,
      500
    )
  }
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const tables: NodeCopy['tables'] = {}
      for (const [table, order] of Object.entries(COMPARED)) {
        const [row] = await queryOnce<{ rows: number; md5: string }>(
          cluster.nodeUrl(node, DATABASE),
          `SELECT count(*)::int AS rows, coalesce(md5(string_agg(t::text, '|' ORDER BY ${order})), '') AS md5 FROM ${table} t`,
          60_000
        )
        tables[table] = row!
      }
      return { name: node.name, role: node.name === primary.name ? 'primary' : 'standby', tables }
    })
  )
}
