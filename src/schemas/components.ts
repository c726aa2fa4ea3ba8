import type { TSchema } from '@sinclair/typebox'
import { Authorization, Decision, DecisionRequest } from './decisions.js'
import { ErrorBody } from './error.js'
import { ApiKey, ApiKeys, IssuedApiKey, KeyRotation, NewApiKey, Scope } from './keys.js'
import { NewPet, Pet, Pets, PetStatus } from './pets.js'
import { RateLimitStatus } from './rate-limit.js'
import { UsageRow, UsageRows } from './usage.js'

/** Every schema routes reach by `$ref`: added once to the app, they are the document's components. */
export const components: TSchema[] = [
  PetStatus,
  NewPet,
  Pet,
  Pets,
  RateLimitStatus,
  Scope,
  ApiKey,
  ApiKeys,
  IssuedApiKey,
  NewApiKey,
  KeyRotation,
  UsageRow,
  UsageRows,
  DecisionRequest,
  Decision,
  Authorization,
  ErrorBody
]
