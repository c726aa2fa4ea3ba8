// `Authorization: Bearer <token>` (RFC 6750, section 2.1), the scheme word in any case.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** The bearer token of an Authorization header, or undefined when the header holds none. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1]
}
