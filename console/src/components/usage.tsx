import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js'
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { get, type UsageDay } from '../api.js'
import { count } from '../format.js'
import { ColumnHeads } from './column-heads.js'
import { Await, useLoad } from './load.js'

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip)

const ADMITTED_COLOR = '#1f6f43'
const REFUSED_COLOR = '#b3261e'

/** Daily usage of a key or an account: a stacked bar chart and, beside it, the same numbers as a table. */
export function Usage(props: { path: string; subject: string }) {
  const [days, setDays] = useState(30)
  const [loaded, reload] = useLoad(() => get<{ days: UsageDay[] }>(`${props.path}?days=${days}`), [props.path, days])
  const choiceId = useId()
  return (
    <section aria-labelledby={`${choiceId}-title`}>
      <h2 id={`${choiceId}-title`}>Usage</h2>
      <div class="toolbar">
        <div class="field">
          <label for={`${choiceId}-days`}>Days</label>
          <select id={`${choiceId}-days`} value={days} onChange={(event) => setDays(Number(event.currentTarget.value))}>
            <option value={30}>Last 30 days</option>
            <option value={90}>Last 90 days</option>
          </select>
        </div>
        <button type="button" onClick={reload}>
          Refresh usage
        </button>
      </div>
      <Await loaded={loaded} what="usage">
        {({ days: usage }) => <UsageView usage={usage} subject={props.subject} />}
      </Await>
    </section>
  )
}

function UsageView({ usage, subject }: { usage: UsageDay[]; subject: string }) {
  const oldestFirst = [...usage].reverse()
  const admitted = usage.reduce((sum, day) => sum + day.admitted, 0)
  const refused = usage.reduce((sum, day) => sum + day.refused, 0)
  const today = usage[0]
  const label =
    `Requests of ${subject} per UTC day over the last ${usage.length} days, admitted and refused stacked: ` +
    `${count(admitted)} admitted and ${count(refused)} refused in all` +
    (today ? `; today ${count(today.admitted)} admitted and ${count(today.refused)} refused.` : '.')
  return (
    <div class="usage">
      <UsageChart days={oldestFirst} label={label} />
      <div class="usage-table" tabIndex={0} role="region" aria-label={`Usage of ${subject} by day, as a table`}>
        <table aria-label={`Usage of ${subject} by day`}>
          <ColumnHeads names={['Date (UTC)', 'Admitted', 'Refused']} />
          <tbody>
            {usage.map((day) => (
              <tr key={day.date}>
                <th scope="row">{day.date}</th>
                <td>{count(day.admitted)}</td>
                <td>{count(day.refused)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}

function UsageChart({ days, label }: { days: UsageDay[]; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    const chart = new Chart(canvas.current!, {
      type: 'bar',
      data: {
        labels: days.map((day) => day.date.slice(5)),
        datasets: [
          { label: 'Admitted', data: days.map((day) => day.admitted), backgroundColor: ADMITTED_COLOR },
          { label: 'Refused', data: days.map((day) => day.refused), backgroundColor: REFUSED_COLOR }
        ]
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true, title: { display: true, text: 'UTC day' } },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'Requests' } }
        }
      }
    })
    return () => chart.destroy()
  }, [days])
  return (
    <div class="chart">
      <canvas ref={canvas} role="img" aria-label={label}>
        {label}
      </canvas>
    </div>
  )
}
