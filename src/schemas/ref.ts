import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox'

/** A `$ref` to a schema registered once under its `$id` (a component), typed as the schema itself. */
export function Ref<T extends TSchema>(schema: T, options?: SchemaOptions) {
  if (!schema.$id) throw new Error('Only a schema with an $id can be referenced')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id, options))
}
