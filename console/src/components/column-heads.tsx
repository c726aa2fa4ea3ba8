/** A table's head: one row of column headers, in order. */
export function ColumnHeads(props: { names: string[] }) {
  return (
    <thead>
      <tr>
        {props.names.map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  )
}
