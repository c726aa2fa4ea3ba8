import { useEffect, useState } from 'preact/hooks'
import { ApiFailure, checkToken, onUnauthorized, session, signIn, type Whoami } from './api.js'
import { failureMessage } from './components/dialog.js'
import { IdentityContext } from './identity.js'
import { AccountPage } from './pages/account.js'
import { AccountsPage } from './pages/accounts.js'
import { EventsPage } from './pages/events.js'
import { KeyPage } from './pages/key.js'
import { KeysPage } from './pages/keys.js'
import { PlansPage } from './pages/plans.js'
import { WebhookPage, WebhooksPage } from './pages/webhooks.js'
import { useRoute, type Route } from './router.js'

type State = { state: 'signed-out'; message?: string } | { state: 'starting' } | { state: 'in'; identity: Whoami }

export function App() {
  const [state, setState] = useState<State>(() =>
    session.token() === null ? { state: 'signed-out' } : { state: 'starting' }
  )
  const signOut = (message?: string) => {
    session.signOut()
    setState({ state: 'signed-out', message })
  }
  useEffect(() => {
    onUnauthorized(() => signOut('The admin API refused the token: sign in again.'))
    if (session.token() === null) return
    checkToken().then(
      (identity) => setState({ state: 'in', identity }),
      (error: unknown) => signOut(failureMessage(error))
    )
  }, [])
  if (state.state === 'signed-out') {
    return <SignIn message={state.message} onSignedIn={(identity) => setState({ state: 'in', identity })} />
  }
  if (state.state === 'starting') return <p role="status">Signing in…</p>
  return (
    <IdentityContext.Provider value={state.identity}>
      <Shell identity={state.identity} onSignOut={() => signOut('Signed out.')} />
    </IdentityContext.Provider>
  )
}

function SignIn(props: { message: string | undefined; onSignedIn: (identity: Whoami) => void }) {
  const [token, setToken] = useState('')
  const [failure, setFailure] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setFailure(undefined)
    try {
      props.onSignedIn(await signIn(token))
    } catch (error) {
      setFailure(
        error instanceof ApiFailure && error.status === 401
          ? 'Wrong admin token: the admin API refused it.'
          : `Could not sign in: ${failureMessage(error)}`
      )
      setBusy(false)
    }
  }
  return (
    <main class="sign-in">
      <h1>Animal Store console</h1>
      {props.message && !failure && <p role="status">{props.message}</p>}
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          Admin token
          <input
            type="password"
            required
            autocomplete="current-password"
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
        </label>
        {failure && (
          <p role="alert" class="error">
            {failure}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  )
}

const SECTIONS = [
  { path: '/keys', label: 'Keys', pages: ['keys', 'key'] },
  { path: '/accounts', label: 'Accounts', pages: ['accounts', 'account'] },
  { path: '/plans', label: 'Plans', pages: ['plans'] },
  { path: '/webhooks', label: 'Webhooks', pages: ['webhooks', 'webhook'] },
  { path: '/events', label: 'Events', pages: ['events'] }
] as const

function Shell(props: { identity: Whoami; onSignOut: () => void }) {
  const route = useRoute()
  return (
    <>
      <header>
        <span class="brand">Animal Store console</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((section) => (
              <li key={section.path}>
                <a
                  href={`#${section.path}`}
                  aria-current={(section.pages as readonly string[]).includes(route.page) ? 'page' : undefined}
                >
                  {section.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="identity">
          Signed in as <strong>{props.identity.name}</strong>, <span class="role">{props.identity.role}</span>
        </p>
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        <Page route={route} />
      </main>
    </>
  )
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'keys':
      return <KeysPage query={route.query} />
    case 'key':
      return <KeyPage id={route.id} />
    case 'accounts':
      return <AccountsPage query={route.query} />
    case 'account':
      return <AccountPage id={route.id} />
    case 'events':
      return <EventsPage query={route.query} />
    case 'plans':
      return <PlansPage />
    case 'webhooks':
      return <WebhooksPage query={route.query} />
    case 'webhook':
      return <WebhookPage id={route.id} query={route.query} />
    case 'missing':
      return <h1>No such page</h1>
  }
}
