import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './int64.js'
import { Ref } from './ref.js'

const PET_STATUSES = ['available', 'pending', 'sold'] as const

// A plain string enum, so validation errors and the OpenAPI document list the values directly.
export const PetStatus = Type.Unsafe<(typeof PET_STATUSES)[number]>({
  $id: 'PetStatus',
  type: 'string',
  enum: [...PET_STATUSES],
  title: 'PetStatus',
  description: 'Availability status'
})

/**
 * Text Postgres can store as sent and a terminal prints as it is: no C0 or C1 control character, no
 * invisible format character of the BMP (Unicode category Cf: zero-width spaces and joiners, the byte
 * order mark, bidirectional marks, overrides and isolates), no line or paragraph separator, no
 * unpaired UTF-16 surrogate. Without the `u` flag, which the serializer's schema compiler lacks; the
 * request validator's storableText keyword (validation.ts), beside every use of it, and the services'
 * checkName refuse the format characters beyond the BMP as well.
 */
export const STORABLE_TEXT =
  '^[^\\u0000-\\u001F\\u007F-\\u009F\\u00AD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u0890\\u0891\\u08E2\\u180E' +
  '\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\uD800-\\uDFFF\\uFEFF\\uFFF9-\\uFFFB]*$'

const petFields = {
  name: Type.String({ minLength: 1, maxLength: 255, pattern: STORABLE_TEXT, description: "The animal's name" }),
  categoryId: Int64({ description: 'Identifier of the category the animal belongs to' }),
  status: Type.Optional(Ref(PetStatus))
}

export const NewPet = Type.Object(petFields, {
  $id: 'NewPet',
  title: 'NewPet',
  additionalProperties: false
})

export const Pet = Type.Object(
  { id: Int64({ description: 'Unique identifier, assigned by the service on creation' }), ...petFields },
  { $id: 'Pet', title: 'Pet', additionalProperties: false }
)

export const Pets = Type.Array(Ref(Pet), { $id: 'Pets', title: 'Pets' })

export const DEFAULT_PAGE_SIZE = 20

export const ListPetsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: DEFAULT_PAGE_SIZE,
      description: 'Maximum number of animals to return'
    })
  ),
  status: Type.Optional(Ref(PetStatus, { description: 'Only pets with this status' })),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'Opaque position from a `Link: rel="next"` header' })
  )
})

export const PetParams = Type.Object({
  petId: Int64({ description: 'Identifier of the animal to retrieve' })
})

export type PetStatus = Static<typeof PetStatus>
export type NewPet = Static<typeof NewPet>
export type Pet = Static<typeof Pet>
export type ListPetsQuery = Static<typeof ListPetsQuery>
