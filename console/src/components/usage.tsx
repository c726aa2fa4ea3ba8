import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js'
import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { get, type UsageDay, type UsageRow } from '../api.js'
import { count, instant } from '../format.js'
import { ColumnHeads } from './column-heads.js'
import { Await, useLoad } from './load.js'

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip)

const ADMITTED_COLOR = '#1f6f43'
const REFUSED_COLOR = '#b3261e'

const HOUR_MS = 3_600_000
const HOURS = 48

type Period = 'hours' | '30' | '90'

/**
 * Usage of a key or an account: the last 48 hours by UTC hour (from the usage export), or the last 30
 * or 90 days; a stacked bar chart and, beside it, the same numbers as a table.
 */
export function Usage(props: { path: string; subject: string; accountId: bigint; keyId?: bigint }) {
  const [period, setPeriod] = useState<Period>('30')
  const choiceId = useId()
  return (
    <section aria-labelledby={`${choiceId}-title`}>
      <h2 id={`${choiceId}-title`}>Usage</h2>
      {period === 'hours' ? (
        <HourlyUsage {...props} choice={<PeriodChoice id={choiceId} value={period} onChange={setPeriod} />} />
      ) : (
        <DailyUsage
          {...props}
          days={Number(period)}
          choice={<PeriodChoice id={choiceId} value={period} onChange={setPeriod} />}
        />
      )}
    </section>
  )
}

function PeriodChoice(props: { id: string; value: Period; onChange: (period: Period) => void }) {
  return (
    <div class="field">
      <label for={`${props.id}-period`}>Period</label>
      <select
        id={`${props.id}-period`}
        value={props.value}
        onChange={(event) => props.onChange(event.currentTarget.value as Period)}
      >
        <option value="hours">Last 48 hours, by hour</option>
        <option value="30">Last 30 days</option>
        <option value="90">Last 90 days</option>
      </select>
    </div>
  )
}

function Toolbar(props: { choice: ComponentChildren; onRefresh: () => void }) {
  return (
    <div class="toolbar">
      {props.choice}
      <button type="button" onClick={props.onRefresh}>
        Refresh usage
      </button>
    </div>
  )
}

function DailyUsage(props: { path: string; subject: string; days: number; choice: ComponentChildren }) {
  const [loaded, reload] = useLoad(
    () => get<{ days: UsageDay[] }>(`${props.path}?days=${props.days}`),
    [props.path, props.days]
  )
  return (
    <>
      <Toolbar choice={props.choice} onRefresh={reload} />
      <Await loaded={loaded} what="usage">
        {({ days: usage }) => (
          <UsageView
            unit="day"
            subject={props.subject}
            periods={usage.map((day) => ({ ...day, start: day.date, shown: day.date, bar: day.date.slice(5) }))}
          />
        )}
      </Await>
    </>
  )
}

/** The 48 UTC hours up to and including the current one, oldest first, each with what the export holds of it. */
async function lastHours(accountId: bigint, keyId: bigint | undefined): Promise<UsageHour[]> {
  const to = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + HOUR_MS
  const from = to - HOURS * HOUR_MS
  const query = new URLSearchParams({
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    granularity: 'hour',
    accountId: String(accountId),
    format: 'json'
  })
  const rows = await get<UsageRow[]>(`usage?${query.toString()}`)
  const hours = Array.from({ length: HOURS }, (_, i) => ({
    start: new Date(from + i * HOUR_MS).toISOString(),
    admitted: 0,
    refused: 0
  }))
  // An account's hour is the sum of its keys'; a key's page keeps to its own rows.
  for (const row of rows) {
    if (keyId !== undefined && row.keyId !== keyId) continue
    const hour = hours[(Date.parse(row.start) - from) / HOUR_MS]
    if (!hour) continue
    hour.admitted += row.admitted
    hour.refused += row.refused
  }
  return hours
}

interface UsageHour {
  start: string
  admitted: number
  refused: number
}

function HourlyUsage(props: { subject: string; accountId: bigint; keyId?: bigint; choice: ComponentChildren }) {
  const [loaded, reload] = useLoad(() => lastHours(props.accountId, props.keyId), [props.accountId, props.keyId])
  return (
    <>
      <Toolbar choice={props.choice} onRefresh={reload} />
      <Await loaded={loaded} what="usage">
        {(hours) => (
          <UsageView
            unit="hour"
            subject={props.subject}
            periods={[...hours]
              .reverse()
              .map((hour) => ({ ...hour, shown: instant(hour.start), bar: hourLabel(hour.start) }))}
          />
        )}
      </Await>
    </>
  )
}

/** `2026-11-26T17:00:00.000Z` as `26 17:00`: the day of the month and the hour. */
const hourLabel = (start: string) => `${start.slice(8, 10)} ${start.slice(11, 16)}`

/** A day or an hour of usage: its row head in the table and its bar's label in the chart. */
interface UsagePeriod {
  start: string
  shown: string
  bar: string
  admitted: number
  refused: number
}

/** Usage by period, newest first: a stacked bar chart, oldest first, and beside it the same numbers as a table. */
function UsageView({ periods, subject, unit }: { periods: UsagePeriod[]; subject: string; unit: 'day' | 'hour' }) {
  const admitted = periods.reduce((sum, period) => sum + period.admitted, 0)
  const refused = periods.reduce((sum, period) => sum + period.refused, 0)
  const latest = periods[0]
  const label =
    `Requests of ${subject} per UTC ${unit} over the last ${periods.length} ${unit}s, admitted and refused stacked: ` +
    `${count(admitted)} admitted and ${count(refused)} refused in all` +
    (latest
      ? `; ${unit === 'day' ? 'today' : 'this hour'} ${count(latest.admitted)} admitted and ${count(latest.refused)} refused.`
      : '.')
  return (
    <div class="usage">
      <UsageChart
        bars={[...periods].reverse().map((period) => ({ ...period, label: period.bar }))}
        axis={`UTC ${unit}`}
        label={label}
      />
      <div class="usage-table" tabIndex={0} role="region" aria-label={`Usage of ${subject} by ${unit}, as a table`}>
        <table aria-label={`Usage of ${subject} by ${unit}`}>
          <ColumnHeads names={[unit === 'day' ? 'Date (UTC)' : 'Hour (UTC)', 'Admitted', 'Refused']} />
          <tbody>
            {periods.map((period) => (
              <tr key={period.start}>
                <th scope="row">{period.shown}</th>
                <td>{count(period.admitted)}</td>
                <td>{count(period.refused)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}

interface Bar {
  label: string
  admitted: number
  refused: number
}

function UsageChart({ bars, axis, label }: { bars: Bar[]; axis: string; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    const chart = new Chart(canvas.current!, {
      type: 'bar',
      data: {
        labels: bars.map((bar) => bar.label),
        datasets: [
          { label: 'Admitted', data: bars.map((bar) => bar.admitted), backgroundColor: ADMITTED_COLOR },
          { label: 'Refused', data: bars.map((bar) => bar.refused), backgroundColor: REFUSED_COLOR }
        ]
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true, title: { display: true, text: axis } },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'Requests' } }
        }
      }
    })
    return () => chart.destroy()
  }, [bars])
  return (
    <div class="chart">
      <canvas ref={canvas} role="img" aria-label={label}>
        {label}
      </canvas>
    </div>
  )
}
