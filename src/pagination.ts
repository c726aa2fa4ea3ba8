import { createHmac, timingSafeEqual } from 'node:crypto'
import { invalidRequest } from './errors.js'
import { INT64_MAX, INT64_MIN } from './schemas/int64.js'
import type { PetStatus } from './schemas/pets.js'

export interface CursorPosition {
  afterId: bigint
  status: PetStatus | undefined
}

const MAC_BYTES = 16
const RECENT_CURSORS = 1_024
// What encode writes for an id: an optional minus and decimal digits, nothing BigInt would also take (hex, spaces).
const DECIMAL_ID = /^-?\d{1,19}$/

/**
 * Cursors are opaque to clients: the last id seen and the filter it belongs to, signed with the
 * deployment's secret, so a tampered cursor or one taken from another listing is refused.
 */
export function createCursorCodec(secret: Buffer) {
  const mac = (payload: string) => createHmac('sha256', secret).update(payload).digest().subarray(0, MAC_BYTES)

  // Encoding is a pure function of the position, and the first pages of each filter are asked for
  // far more often than the rest: their cursors are kept rather than signed again.
  const recent = new Map<string, string>()

  return {
    encode(position: CursorPosition): string {
      const payload = `${position.afterId}.${position.status ?? ''}`
      let cursor = recent.get(payload)
      if (cursor === undefined) {
        cursor = `${Buffer.from(payload).toString('base64url')}.${mac(payload).toString('base64url')}`
        if (recent.size >= RECENT_CURSORS) recent.delete(recent.keys().next().value!)
        recent.set(payload, cursor)
      }
      return cursor
    },

    decode(cursor: string, status: PetStatus | undefined): bigint {
      const [encodedPayload, encodedMac, extra] = cursor.split('.')
      if (encodedPayload === undefined || encodedMac === undefined || extra !== undefined) throw badCursor()
      const payload = Buffer.from(encodedPayload, 'base64url').toString()
      const given = Buffer.from(encodedMac, 'base64url')
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload))) throw badCursor()
      const [afterId, cursorStatus] = payload.split('.')
      if ((cursorStatus || undefined) !== status) {
        throw invalidRequest('cursor belongs to a listing with another status filter')
      }
      if (!DECIMAL_ID.test(afterId!)) throw badCursor()
      const id = BigInt(afterId!)
      if (id < INT64_MIN || id > INT64_MAX) throw badCursor()
      return id
    }
  }
}

export type CursorCodec = ReturnType<typeof createCursorCodec>

function badCursor() {
  return invalidRequest('cursor is not valid; use the Link header of the previous page')
}

/**
 * Cursors of one listing and filter: signed with a key derived from the deployment's secret and the
 * listing's name, so a cursor of another listing (the pets', another filter's, another account's) is refused.
 */
export function listingCursors(secret: Buffer, listing: string) {
  // The words date from when only the admin API had such listings: its cursors stay valid.
  return createCursorCodec(createHmac('sha256', secret).update(`admin listing ${listing}`).digest())
}

/**
 * Cursors of a listing ordered by an instant, then an id (usage by period and key): the last row's
 * pair, signed as listingCursors signs its own, so a cursor of another listing is refused.
 */
export function instantIdCursors(secret: Buffer, listing: string) {
  const key = createHmac('sha256', secret).update(`listing by instant and id ${listing}`).digest()
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES)
  return {
    encode(position: { start: Date; keyId: bigint }): string {
      const payload = `${position.start.getTime()}.${position.keyId}`
      return `${Buffer.from(payload).toString('base64url')}.${mac(payload).toString('base64url')}`
    },
    decode(cursor: string): { start: Date; keyId: bigint } {
      const [encodedPayload, encodedMac, extra] = cursor.split('.')
      if (encodedPayload === undefined || encodedMac === undefined || extra !== undefined) throw badCursor()
      const payload = Buffer.from(encodedPayload, 'base64url').toString()
      const given = Buffer.from(encodedMac, 'base64url')
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload))) throw badCursor()
      const [start, id] = payload.split('.')
      if (!/^-?\d{1,15}$/.test(start!) || !DECIMAL_ID.test(id!)) throw badCursor()
      return { start: new Date(Number(start)), keyId: BigInt(id!) }
    }
  }
}
