import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type SerializerFactory = ReturnType<typeof SerializerSelector>
type Serializer = ReturnType<ReturnType<SerializerFactory>>

const defaultFactory = SerializerSelector()
const serializersByContext = new Map<string, Map<string, Serializer>>()

/**
 * Fastify's own response serializers (fast-json-stringify), each built once per process for a given
 * response schema and set of shared schemas: a server builds two apps, a test process many more,
 * and building the serializers is most of building one. Bounded by the schemas the code defines.
 */
export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const contextKey = JSON.stringify([externalSchemas, options])
  let built = serializersByContext.get(contextKey)
  if (!built) serializersByContext.set(contextKey, (built = new Map()))
  const compile = defaultFactory(externalSchemas, options)
  return (route) => {
    const key = JSON.stringify(route.schema)
    let serializer = built.get(key)
    if (!serializer) built.set(key, (serializer = compile(route)))
    return serializer
  }
}
