import { api } from "../api/client";
import type { paths } from "../api/schema";
import { Page, Show, Stat } from "../components/ui";
import { useLoad } from "../hooks";
import { useEffect } from "react";

// Named by its route rather than its schema, whose component name the gateway may qualify.
type Health = paths["/health"]["get"]["responses"][200]["content"]["application/json"];

// /health answers 503 with the same body when something is down: both are a reading to show.
async function readHealth(): Promise<Health> {
  const { data, error, response } = await api.GET("/health");
  const body = (data ?? error) as Health | undefined;
  if (!body || typeof body !== "object" || !("status" in body)) throw new Error(`HTTP ${response.status}`);
  return body;
}

export function HealthPage() {
  const state = useLoad(readHealth, []);
  useEffect(() => {
    const timer = window.setInterval(state.reload, 10_000);
    return () => window.clearInterval(timer);
  }, [state.reload]);
  return (
    <Page title="Health">
      <Show state={state}>
        {(h) => (
          <>
            <div className="stats">
              <Stat label="overall" value={<span className={`state-${h.status}`}>{h.status}</span>} />
              <Stat label="database" value={h.db} />
              <Stat label="gateway uptime" value={`${Math.round(h.uptime)} s`} />
            </div>
            <table className="grid">
              <thead>
                <tr>
                  <th>Part</th>
                  <th>State</th>
                  <th>Detail</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(h.dependencies).map(([name, dep]) => {
                  const d = dep as { status?: string; detail?: string | null };
                  return (
                    <tr key={name}>
                      <td>{name}</td>
                      <td className={`state-${d.status ?? "unknown"}`}>{d.status ?? "unknown"}</td>
                      <td className="muted">{d.detail ?? ""}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            <p className="muted">Checked {new Date(h.timestamp).toLocaleTimeString()}; refreshed every 10 s.</p>
          </>
        )}
      </Show>
    </Page>
  );
}
