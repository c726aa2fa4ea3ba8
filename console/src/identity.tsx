import { createContext, type ComponentChildren } from 'preact'
import { useContext } from 'preact/hooks'
import type { Role, Whoami } from './api.js'

// Who is signed in, from GET /admin/v1/whoami. The console hides what the role may not do; the admin
// API refuses it anyway (403 insufficient_role), so hiding is for the operator's sake, not the guard.

// A service's token is refused by the whole admin API (it calls POST /v1/decisions alone).
const RANK: Record<Role, number> = { service: -1, viewer: 0, operator: 1, admin: 2 }

export const IdentityContext = createContext<Whoami | undefined>(undefined)

/** Whether the signed-in operator's role is `role` or above: `operator` for any change, by default. */
export function useCan(role: Role = 'operator'): boolean {
  const identity = useContext(IdentityContext)
  return identity !== undefined && RANK[identity.role] >= RANK[role]
}

/** Its children only for an operator whose role is `role` or above; nothing at all for the others. */
export function Allowed(props: { role?: Role; children: ComponentChildren }) {
  return useCan(props.role) ? <>{props.children}</> : null
}
