// What a request costs on its account's plan, for a route of this API or of any service behind
// decisions and authorize: pure, so that it is tested without a database.

/** A route as a plan's costs name it: a method in capitals, a space, a path (`GET /v1/orders/{id}`). */
export const ROUTE_NAME = /^[A-Z]{1,16} \/[!-~]{0,254}$/

/** A template's segments: a literal, or null for a `{param}` that stands for any one non-empty segment. */
interface Template {
  name: string
  method: string
  segments: (string | null)[]
  literals: number
  cost: number
}

const PARAMETER = /^\{[^{}/]+\}$/
const templatesOf = new WeakMap<Record<string, number>, Template[]>()

/** The templates among a plan's costs, the most literal segments first, then by name: the order they are tried in. */
function templates(costs: Record<string, number>): Template[] {
  let found = templatesOf.get(costs)
  if (found === undefined) {
    found = Object.entries(costs)
      .filter(([name]) => name.includes('{'))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, cost]) => {
        const [method = '', path = ''] = name.split(' ', 2)
        const segments = path.split('/').map((segment) => (PARAMETER.test(segment) ? null : segment))
        return { name, method, segments, literals: segments.filter((segment) => segment !== null).length, cost }
      })
      .sort((a, b) => b.literals - a.literals)
    templatesOf.set(costs, found)
  }
  return found
}

/** A URI's path: what precedes its query or fragment, percent-encoding kept as sent. */
export const requestPath = (uri: string) => {
  const end = uri.search(/[?#]/)
  return end === -1 ? uri : uri.slice(0, end)
}

/** A route as usage is reported by it when a plan's costs name none that matches (decisions, authorize). */
export const UNNAMED_ROUTE = 'other'

/**
 * The units `method path` costs on a plan, and the name in its costs that set them: exactly that
 * route, else the template that matches it with the most literal segments (`{id}` stands for one
 * segment); else 1, and no name.
 */
export function routeCostOf(
  costs: Record<string, number>,
  method: string,
  path: string
): { route: string | undefined; cost: number } {
  const route = `${method} ${path}`
  const exact = costs[route]
  if (exact !== undefined) return { route, cost: exact }
  const segments = path.split('/')
  for (const template of templates(costs)) {
    if (template.method !== method || template.segments.length !== segments.length) continue
    if (template.segments.every((literal, i) => (literal === null ? segments[i] !== '' : literal === segments[i]))) {
      return { route: template.name, cost: template.cost }
    }
  }
  return { route: undefined, cost: 1 }
}
