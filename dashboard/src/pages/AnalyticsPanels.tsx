import { useState } from "react";
import { api, unwrap } from "../api/client";
import { list, record } from "../api/shapes";
import { useAccess } from "../auth";
import { JobRun, runIdOf } from "../components/JobRun";
import { Show, Stat, when } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

const fail = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Which models or agents write the memories that turn out useful (three memories at least). */
export function ProducerQuality() {
  const namespace = useNamespace();
  const [by, setBy] = useState<"model" | "agent">("model");
  const rows = useLoad(
    () => unwrap(api.GET("/api/analytics/producer-quality", { params: { query: { namespace: namespace ?? null, by, limit: 15 } } })),
    [namespace, by],
  );
  return (
    <section aria-labelledby="producer-quality">
      <h2 id="producer-quality">Producer quality</h2>
      <div className="toolbar" role="group" aria-label="Producer">
        {(["model", "agent"] as const).map((b) => (
          <button key={b} type="button" className="tag" aria-pressed={by === b} onClick={() => setBy(b)}>
            by {b}
          </button>
        ))}
      </div>
      <Show state={rows}>
        {(r) =>
          r.length ? (
            <div className="scroll">
              <table className="grid">
                <thead>
                  <tr>
                    <th>{by}</th>
                    <th>memories</th>
                    <th>useful per memory</th>
                  </tr>
                </thead>
                <tbody>
                  {r.map((p) => (
                    <tr key={p.producer}>
                      <td>{p.producer}</td>
                      <td>{p.memoryCount}</td>
                      <td>{p.avgUsefulCount.toFixed(2)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="muted">No {by} has written three memories yet.</p>
          )
        }
      </Show>
    </section>
  );
}

interface RegressionResult {
  query: string;
  overlap_at_10: number;
  avg_rank_shift: number;
  exact_order: boolean;
  alert: boolean;
}

/** The golden queries' latest run against their baselines (the retrieval-regression job). */
export function RetrievalRegression() {
  const latest = useLoad(async () => record(await unwrap(api.GET("/api/retrieval-regression/latest"))), []);
  return (
    <section aria-labelledby="retrieval-regression">
      <h2 id="retrieval-regression">Retrieval regression</h2>
      <Show state={latest}>
        {(r) => {
          const results = list<RegressionResult>(r.results);
          const alerts = results.filter((x) => x.alert).length;
          const overlap = results.length ? results.reduce((s, x) => s + x.overlap_at_10, 0) / results.length : null;
          const at = results.length ? (record(results[0]).created_at as string | undefined) : undefined;
          if (r.run_id == null) return <p className="muted">No run yet: set golden queries (retrieval_regression.queries) and run the job.</p>;
          return (
            <>
              <div className="stats">
                <Stat label="golden queries" value={typeof r.golden_count === "number" ? r.golden_count : results.length} />
                <Stat label="alerts in the last run" value={alerts} />
                <Stat label="average overlap@10" value={overlap === null ? "—" : overlap.toFixed(2)} />
              </div>
              <p className="muted">
                Run {String(r.run_id)}
                {at ? `, ${when(at)}` : ""}
              </p>
              <div className="scroll">
                <table className="grid">
                  <thead>
                    <tr>
                      <th>query</th>
                      <th>overlap@10</th>
                      <th>rank shift</th>
                      <th>same order</th>
                      <th>alert</th>
                    </tr>
                  </thead>
                  <tbody>
                    {results.map((x, i) => (
                      <tr key={i} className={x.alert ? "alert-row" : undefined}>
                        <td>{x.query}</td>
                        <td>{x.overlap_at_10.toFixed(2)}</td>
                        <td>{x.avg_rank_shift.toFixed(2)}</td>
                        <td>{x.exact_order ? "yes" : "no"}</td>
                        <td>{x.alert ? "drifted" : "ok"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          );
        }}
      </Show>
    </section>
  );
}

/** A consolidation preview (dry run) and the automatic consolidation run now, each followed to its end. */
export function ConsolidationNow() {
  const namespace = useNamespace();
  const { canWrite } = useAccess();
  const [run, setRun] = useState<{ id: number; label: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!canWrite) return null;
  const start = (label: string, call: Promise<Parameters<typeof runIdOf>[0]>) => {
    setError(null);
    call.then((started) => setRun({ id: runIdOf(started), label })).catch((e: unknown) => setError(fail(e)));
  };
  const ns = namespace ?? null;
  return (
    <section aria-labelledby="consolidation-now">
      <h2 id="consolidation-now">Consolidation</h2>
      <p className="muted">Clusters of near-duplicate memories merged into a summary (the originals are archived, never deleted).</p>
      <div className="actions">
        <button type="button" onClick={() => start("Consolidation preview", unwrap(api.POST("/api/consolidate", { body: { namespace: ns, dry_run: true, wait_seconds: 0 } })))}>
          Preview consolidation
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => start("Auto-consolidation", unwrap(api.POST("/api/auto-consolidate", { body: { namespace: ns, wait_seconds: 0 } })))}
        >
          Run auto-consolidation now
        </button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {run && <JobRun key={run.id} runId={run.id} label={run.label} />}
    </section>
  );
}
