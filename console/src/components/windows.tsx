import { useId } from 'preact/hooks'
import { get, type AccountWindows, type RateLimitWindow } from '../api.js'
import { count, instant } from '../format.js'
import { href } from '../router.js'
import { ColumnHeads } from './column-heads.js'
import { Await, useLoad } from './load.js'

const WINDOW_NAMES: Record<RateLimitWindow['name'], string> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  month: 'Month'
}

const resetAt = (reset: number) => instant(new Date(reset * 1000).toISOString())

/**
 * The account's limits as they stand, read when the page loads and again on Refresh windows, and the
 * keys of it banned now.
 */
export function Windows(props: { accountId: bigint; subject: string }) {
  const [loaded, reload] = useLoad(() => get<AccountWindows>(`accounts/${props.accountId}/windows`), [props.accountId])
  const titleId = useId()
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>Windows</h2>
      <p class="note">
        Shared by all of the account's keys, each limit over its UTC window. Counts include units an instance has leased
        ahead and not yet served.
      </p>
      <div class="toolbar">
        <button type="button" onClick={reload}>
          Refresh windows
        </button>
      </div>
      <Await loaded={loaded} what="the windows">
        {({ windows, bans }) => (
          <>
            <table aria-label={`Windows of ${props.subject}`}>
              <ColumnHeads names={['Window', 'Used', 'Limit', 'Remaining', 'Resets']} />
              <tbody>
                {windows.map((window) => (
                  <tr key={window.name}>
                    <th scope="row">{WINDOW_NAMES[window.name]}</th>
                    <td>
                      <div class="used">
                        <span>{count(window.used)}</span>
                        <meter
                          min={0}
                          max={window.limit}
                          value={window.used}
                          low={window.limit * 0.75}
                          high={window.limit * 0.9}
                          optimum={0}
                          aria-label={`${WINDOW_NAMES[window.name]} window: ${count(window.used)} of ${count(window.limit)} used`}
                        />
                      </div>
                    </td>
                    <td>{count(window.limit)}</td>
                    <td>{count(window.remaining)}</td>
                    <td>{resetAt(window.reset)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h3>Banned keys</h3>
            {bans.length === 0 ? (
              <p>No key of the account is banned.</p>
            ) : (
              <table aria-label={`Banned keys of ${props.subject}`}>
                <ColumnHeads names={['Key', 'Banned until']} />
                <tbody>
                  {bans.map((ban) => (
                    <tr key={ban.keyId}>
                      <th scope="row">
                        <a href={href(`/keys/${ban.keyId}`)}>{ban.prefix}</a>
                      </th>
                      <td>{instant(ban.bannedUntil)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Await>
    </section>
  )
}
