// After the load: every acknowledged pet read back through the API, by id and in the list, with the
// fields it was acknowledged with. What was read is written to readback.json for the checker.
import { isLosslessNumber, parse } from 'lossless-json'
import { retryingFetch } from '../client/src/retry.js'
import type { LedgerPet } from './ledger.js'

export interface ReadBack {
  /** Acknowledged pets read by id. */
  checked: number
  /** Each acknowledged pet GET /v1/pets/{id} did not return as acknowledged: the status, and the pet if any. */
  byId: { expected: LedgerPet; status: number; found: LedgerPet | null }[]
  /** Pets the list returned, over every page. */
  listed: number
  /** Acknowledged pets the list did not return, or returned with other fields. */
  notListed: { expected: LedgerPet; found: LedgerPet | null }[]
  /** Whether the list could be read to its end. */
  listComplete: boolean
}

const decimal = (value: unknown) => (isLosslessNumber(value) ? value.toString() : String(value))

const asPet = (body: Record<string, unknown>): LedgerPet => ({
  id: decimal(body.id),
  name: String(body.name),
  categoryId: decimal(body.categoryId),
  status: typeof body.status === 'string' ? body.status : null
})

const samePet = (a: LedgerPet, b: LedgerPet | null | undefined) =>
  b !== null &&
  b !== undefined &&
  a.id === b.id &&
  a.name === b.name &&
  a.categoryId === b.categoryId &&
  a.status === b.status

/** Reads `acknowledged` back through `url` with `secret`, a few requests at a time. */
export async function readBack(url: string, secret: string, acknowledged: LedgerPet[]): Promise<ReadBack> {
  const fetcher = retryingFetch((request) => fetch(request, { signal: AbortSignal.timeout(30_000) }), {
    maxAttempts: 6
  })
  const get = async (path: string) => {
    const response = await fetcher(new Request(`${url}${path}`, { headers: { authorization: `Bearer ${secret}` } }))
    return { status: response.status, link: response.headers.get('link'), body: parse(await response.text()) }
  }
  const byId: ReadBack['byId'] = []
  const queue = [...acknowledged]
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let pet = queue.shift(); pet; pet = queue.shift()) {
        const { status, body } = await get(`/v1/pets/${pet.id}`).catch(() => ({ status: 0, body: null }))
        const found = status === 200 ? asPet(body as Record<string, unknown>) : null
        if (!samePet(pet, found)) byId.push({ expected: pet, status, found })
      }
    })
  )
  const listed = new Map<string, LedgerPet>()
  let path: string | undefined = '/v1/pets?limit=100'
  let listComplete = true
  while (path) {
    const page: Awaited<ReturnType<typeof get>> | undefined = await get(path).catch(() => undefined)
    if (page?.status !== 200) {
      listComplete = false
      break
    }
    for (const body of page.body as Record<string, unknown>[]) {
      const pet = asPet(body)
      listed.set(pet.id, pet)
    }
    const next: string | undefined = page.link?.match(/<[^>]*?(\/pets\?[^>]*)>;\s*rel="next"/)?.[1]
    path = next ? `/v1${next}` : undefined
  }
  const notListed = acknowledged
    .filter((pet) => !samePet(pet, listed.get(pet.id)))
    .map((pet) => ({ expected: pet, found: listed.get(pet.id) ?? null }))
  return { checked: acknowledged.length, byId, listed: listed.size, notListed, listComplete }
}
