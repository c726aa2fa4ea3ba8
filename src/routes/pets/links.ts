import type { Config } from '../../config.js'
import type { PetStatus } from '../../schemas/pets.js'

/** The headers of GET /v1/pets/{petId} (docs/decisions.md): when it was deprecated, its sunset and its successor. */
export function petDeprecationHeaders(config: Pick<Config, 'PUBLIC_BASE_URL' | 'DEPRECATION_DATE' | 'SUNSET_DATE'>) {
  return {
    deprecation: `@${Math.floor(Date.parse(config.DEPRECATION_DATE) / 1000)}`,
    sunset: new Date(Date.parse(config.SUNSET_DATE)).toUTCString(),
    link: `<${config.PUBLIC_BASE_URL}/pets>; rel="successor-version"`
  }
}

/** `Link: rel="next"` of a page of pets, to the page after `cursor`'s position with the same limit and filter. */
export function nextPageLink(base: string, limit: number, status: PetStatus | undefined, cursor: string): string {
  const filter = status === undefined ? '' : `&status=${status}`
  return `<${base}/pets?limit=${limit}${filter}&cursor=${cursor}>; rel="next"`
}
