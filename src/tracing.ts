import { subscribe } from 'node:diagnostics_channel'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span, type SpanStatus } from '@opentelemetry/api'
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import { ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions'
import type { FastifyRequest } from 'fastify'
import type { Config } from './config.js'
import { limitDecisions, type PublishedDecision } from './limits/decision-channel.js'
import { readTraceparentWith } from './trace-context.js'

/** The attributes a request's span carries for the limiter's decision. */
const LIMIT_OUTCOME = 'ratelimit.outcome'
const LIMIT_POLICY = 'ratelimit.policy'

/** `GET /v1/pets/:petId`, as the HTTP conventions name a server span; the path alone, so a query's values stay out. */
function describeRequest(span: Span, request: FastifyRequest) {
  const route = request.routeOptions.url
  span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
  const query = request.url.indexOf('?')
  if (query !== -1) span.setAttribute(ATTR_URL_PATH, request.url.slice(0, query))
}

/**
 * The exporter, with the status of a server span of a 4xx (the client's fault) left unset as the HTTP
 * conventions say: @fastify/otel sets Error on every error a hook throws, a 429's too, and a span's
 * Error cannot be taken back before it ends. Error stays for a 5xx.
 */
function leavingClientErrorsUnset(exporter: SpanExporter): SpanExporter {
  return {
    export(spans, done) {
      for (const span of spans) {
        const status = span.attributes[ATTR_HTTP_RESPONSE_STATUS_CODE]
        if (span.kind === SpanKind.SERVER && typeof status === 'number' && status < 500) {
          ;(span as { status: SpanStatus }).status = { code: SpanStatusCode.UNSET }
        }
      }
      exporter.export(spans, done)
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: async () => exporter.forceFlush?.()
  }
}

/** Each exporter reads the endpoint, headers and timeout from the OTEL_* variables itself. */
function exporterFor(protocol: Config['OTEL_EXPORTER_OTLP_PROTOCOL']): SpanExporter {
  switch (protocol) {
    case 'grpc':
      return new GrpcExporter()
    case 'http/json':
      return new JsonExporter()
    default:
      return new ProtobufExporter()
  }
}

function recordDecision(message: unknown) {
  const { outcome, policy } = message as PublishedDecision
  const span = trace.getActiveSpan()
  span?.setAttribute(LIMIT_OUTCOME, outcome)
  if (policy !== undefined) span?.setAttribute(LIMIT_POLICY, policy)
}

/**
 * Starts OpenTelemetry's SDK, which reads the standard OTEL_* variables itself (endpoint, sampler,
 * service name; the protocol comes checked through the configuration): a server span for each
 * request of every Fastify app made after this, a child for each query pg sends within one, the
 * limiter's decision on the request's span, and the traceparent that a webhook event keeps for its
 * deliveries (src/trace-context.ts). It patches pg as pg loads, so it runs before anything imports
 * pg. Only traces: metrics stay on the Prometheus listener. `shutdown` sends the spans still buffered.
 */
export function startTracing(config: Pick<Config, 'OTEL_EXPORTER_OTLP_PROTOCOL'>): { shutdown(): Promise<void> } {
  const sdk = new NodeSDK({
    // Batched as OTEL_BSP_* say, sampled as OTEL_TRACES_SAMPLER says.
    traceExporter: leavingClientErrorsUnset(exporterFor(config.OTEL_EXPORTER_OTLP_PROTOCOL)),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Hooks and handlers get no span of their own: the queries they send are the request span's children.
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        instrumentHandler: false,
        requestHook: describeRequest,
        // Probes every few seconds would crowd out the traces of requests.
        ignorePaths: ({ url }) => url.startsWith('/health/'),
        // A refusal is no exception: the status code and the span's status tell what failed.
        recordExceptions: false
      }),
      // Queries outside a request (the key cache's LISTEN, housekeeping, the webhook worker) make no trace.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true })
    ]
  })
  sdk.start()
  subscribe(limitDecisions.name, recordDecision)
  readTraceparentWith(() => {
    const carrier: { traceparent?: string } = {}
    propagation.inject(context.active(), carrier)
    return carrier.traceparent
  })
  return sdk
}
