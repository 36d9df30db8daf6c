import { useState } from "react";
import { Link } from "react-router-dom";
import { api, unwrap, type Schemas } from "../api/client";
import { useAccess } from "../auth";
import { Page, Show, when } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";
import { JobRun } from "../components/JobRun";

type Run = Schemas["JobRunOut"];
type Contradiction = Schemas["Contradiction"];

export function Maintenance() {
  const namespace = useNamespace();
  const { canWrite } = useAccess();
  const ns = namespace ?? null;
  const contradictions = useLoad(
    () => unwrap(api.GET("/api/contradictions", { params: { query: { namespace: ns, status: "pending" } } })),
    [ns],
  );
  const jobs = useLoad(() => unwrap(api.GET("/api/maintenance/jobs")), []);
  const consolidations = useLoad(() => unwrap(api.GET("/api/consolidations", { params: { query: { namespace: ns } } })), [ns]);
  const decay = useLoad(() => unwrap(api.GET("/api/analytics/decay-preview", { params: { query: { namespace: ns } } })), [ns]);
  const [preview, setPreview] = useState<Run | null>(null);
  const [started, setStarted] = useState<{ id: number; job: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fail = (e: unknown) => setError(e instanceof Error ? e.message : String(e));

  const resolve = (c: Contradiction, keep: string | null) =>
    unwrap(
      api.PATCH("/api/contradictions/{contradiction_id}", {
        params: { path: { contradiction_id: c.id } },
        body: keep ? { status: "resolved", keep_id: keep } : { status: "dismissed" },
      }),
    )
      .then(contradictions.reload)
      .catch(fail);

  const previewConsolidation = () =>
    unwrap(api.POST("/api/consolidate", { body: { namespace: ns, dry_run: true, wait_seconds: 20 } }))
      // The answer is the finished run, or only its id while it still works: read it back.
      .then((r) => {
        const runId = "run_id" in r ? Number(r.run_id) : r.id;
        return unwrap(api.GET("/api/maintenance/jobs/runs/{run_id}", { params: { path: { run_id: runId } } }));
      })
      .then(setPreview)
      .catch(fail);

  const runJob = (name: string) =>
    unwrap(api.POST("/api/maintenance/jobs/{name}/run", { params: { path: { name } }, body: { namespace: ns, dry_run: false, wait_seconds: 0 } }))
      .then((run) => setStarted({ id: run.id, job: run.job }))
      .catch(fail);

  return (
    <Page title="Maintenance">
      {error && <p className="error" role="alert">{error}</p>}
      <h2>Contradictions to resolve</h2>
      <Show state={contradictions}>
        {(rows) =>
          rows.length ? (
            <ul className="contradictions">
              {rows.map((c) => (
                <li key={c.id} className="card" data-contradiction-id={c.id}>
                  <p className="muted">{c.description} {c.score != null && `(score ${c.score.toFixed(2)})`}</p>
                  <div className="columns">
                    {([
                      ["A", c.memory_a_id, c.memory_a_preview],
                      ["B", c.memory_b_id, c.memory_b_preview],
                    ] as const).map(([side, id, preview]) => (
                      <div key={side}>
                        <Link to={`/memory/${id}`}>{preview}</Link>
                        {canWrite && (
                          <div>
                            <button type="button" onClick={() => void resolve(c, id)}>Keep {side}</button>
                          </div>
                        )}
                      </div>
                    ))}
                  </div>
                  {canWrite && (
                    <button type="button" onClick={() => void resolve(c, null)}>Not a contradiction</button>
                  )}
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">No open contradictions.</p>
          )
        }
      </Show>
      <h2>Consolidation</h2>
      {canWrite && (
        <button type="button" onClick={() => void previewConsolidation()}>Preview consolidation</button>
      )}
      {preview && (
        <div className="card">
          <p>
            Preview run #{preview.id}: {preview.status}
          </p>
          {preview.report && <pre className="report">{JSON.stringify(preview.report, null, 2)}</pre>}
        </div>
      )}
      <Show state={consolidations}>
        {(rows) =>
          rows.length ? (
            <table className="grid">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Strategy</th>
                  <th>Merged</th>
                  <th>Summary</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.id}>
                    <td>{when(c.created_at)}</td>
                    <td>{c.strategy}</td>
                    <td>{c.memories_merged}</td>
                    <td>{c.summary_id ? <Link to={`/memory/${c.summary_id}`}>summary</Link> : "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">No consolidations yet.</p>
          )
        }
      </Show>
      <h2>Decay preview</h2>
      <Show state={decay}>
        {(d) =>
          d.candidates.length ? (
            <>
              <p className="muted">
                {d.total} memories older than {d.decayAgeDays} days would lose importance:
              </p>
              <ul>
                {d.candidates.map((c) => (
                  <li key={c.id}>
                    <Link to={`/memory/${c.id}`}>{c.content.slice(0, 120)}</Link>{" "}
                    <span className="muted">importance {c.importance.toFixed(2)}, quality {c.quality.toFixed(2)}</span>
                  </li>
                ))}
              </ul>
            </>
          ) : (
            <p className="muted">Nothing would decay now.</p>
          )
        }
      </Show>
      <h2>Jobs</h2>
      <Show state={jobs}>
        {(reply) => (
          <table className="grid">
            <thead>
              <tr>
                <th>Job</th>
                <th>Schedule</th>
                <th>Last run</th>
                <th>Next</th>
                {canWrite && <th />}
              </tr>
            </thead>
            <tbody>
              {reply.jobs.map((j) => (
                <tr key={j.name}>
                  <td title={j.description}>{j.name}</td>
                  <td>{j.schedule}</td>
                  <td>
                    {when(j.last_run_at)} <span className={`state-${j.last_status}`}>{j.last_status}</span>
                  </td>
                  <td>{when(j.next_run_at)}</td>
                  {canWrite && (
                    <td>
                      <button type="button" onClick={() => void runJob(j.name)}>Run now</button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      {started && <JobRun key={started.id} runId={started.id} label={started.job} onDone={jobs.reload} />}
    </Page>
  );
}
