import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'

/** One span as OTLP/HTTP with JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) carries it, its attributes flattened. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  /** 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, string | number | boolean>
  /** 0 or absent: unset; 1 ok; 2 error. */
  status: { code?: number; message?: string }
  /** The service.name of the resource that sent it. */
  service: string | undefined
}

interface AnyValue {
  stringValue?: string
  intValue?: number | string
  doubleValue?: number
  boolValue?: boolean
}
interface KeyValue {
  key: string
  value: AnyValue
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes' | 'service'> & { attributes?: KeyValue[] })[] }[]
  }[]
}

const valueOf = (value: AnyValue) =>
  value.stringValue ??
  (value.intValue === undefined ? undefined : Number(value.intValue)) ??
  value.doubleValue ??
  value.boolValue ??
  ''

const flatten = (attributes: KeyValue[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]))

/**
 * An OTLP/HTTP endpoint on a free loopback port that accepts exports of traces: it keeps the spans of
 * JSON exports, and only counts the exports and their bytes in protobuf (the SDK's default). Its
 * `url` is what OTEL_EXPORTER_OTLP_ENDPOINT takes.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = []
  const exports = { count: 0, bytes: 0 }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end()
        return
      }
      let body = Buffer.concat(chunks)
      exports.count++
      exports.bytes += body.length
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
      if (request.headers['content-type'] !== 'application/json') {
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
        return
      }
      const exported = JSON.parse(body.toString()) as ExportRequest
      for (const { resource, scopeSpans = [] } of exported.resourceSpans ?? []) {
        const service = flatten(resource?.attributes)['service.name']
        for (const scope of scopeSpans) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              attributes: flatten(span.attributes),
              status: span.status ?? {},
              service: typeof service === 'string' ? service : undefined
            })
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    /** Exports received so far, in either encoding. */
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
