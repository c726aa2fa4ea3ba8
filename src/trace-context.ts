/**
 * The W3C traceparent of the work under way, for what carries it past the request (a webhook event):
 * tracing (src/tracing.ts) says where it is read from; without tracing there is none.
 */
let read: () => string | undefined = () => undefined

export const currentTraceparent = (): string | undefined => read()

export function readTraceparentWith(source: () => string | undefined): void {
  read = source
}
