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
 * bidirectional override or isolate, no unpaired UTF-16 surrogate.
 */
export const STORABLE_TEXT =
  '^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069\\uD800-\\uDFFF]*$'

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
