import type { Schemas } from "../api/client";

type RestoreReport = Schemas["RestoreReport"];

/** A restore's outcome (or its dry run's) per section: created, skipped, in conflict; then the
 *  first items that were not created, with the reason. */
export function RestoreTable({ title, report }: { title: string; report: RestoreReport }) {
  // Read defensively: other document formats answer with a report of their own shape.
  const sections = Object.entries(report.sections ?? {});
  const items = report.items ?? [];
  return (
    <div className="card restore-report" role="status" aria-label={title}>
      <p>{title}</p>
      <div className="scroll">
        <table className="grid">
          <thead>
            <tr>
              <th>Section</th>
              <th>created</th>
              <th>skipped</th>
              <th>conflict</th>
            </tr>
          </thead>
          <tbody>
            {sections.map(([name, s]) => (
              <tr key={name} data-section={name}>
                <td>{name}</td>
                <td>{s.created ?? 0}</td>
                <td>{s.skipped ?? 0}</td>
                <td>{s.conflict ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {items.length > 0 && (
        <ul className="muted">
          {items.slice(0, 10).map((i) => (
            <li key={`${i.section}-${i.key}`}>
              {i.section} {i.key}: {i.outcome} {i.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
