import { useEffect, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";

type Run = Schemas["JobRunOut"];
/** What a job route answers: the finished report with its run id, or the run still going. */
export type Started = Schemas["ReportOut"] | Run;

export const runIdOf = (started: Started): number => ("run_id" in started ? Number(started.run_id) : started.id);

const POLL_MS = 1000;

/** A job run followed to its end: its stage and done/total while it runs, then its report.
 *  Long work shows progress; nothing is assumed about how long it takes. */
export function JobRun({ runId, label, onDone }: { runId: number; label: string; onDone?: (run: Run) => void }) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let timer: number | undefined;
    const poll = () =>
      unwrap(api.GET("/api/maintenance/jobs/runs/{run_id}", { params: { path: { run_id: runId } } }))
        .then((r) => {
          if (!live) return;
          setRun(r);
          if (r.status === "running") timer = window.setTimeout(poll, POLL_MS);
          else onDone?.(r);
        })
        .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    void poll();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runId]);

  if (error) return <p className="error" role="alert">{error}</p>;
  const progress = (run?.progress ?? {}) as { stage?: unknown; done?: unknown; total?: unknown };
  const done = typeof progress.done === "number" ? progress.done : null;
  const total = typeof progress.total === "number" && progress.total > 0 ? progress.total : null;
  const status = run?.status ?? "starting";
  return (
    <div className="card job-run" data-run-id={runId} data-status={status} aria-live="polite">
      <p>
        {label} · run #{runId}: <strong className={`state-${status}`}>{status}</strong>
        {typeof progress.stage === "string" && progress.stage ? ` · ${progress.stage}` : ""}
        {done !== null ? ` · ${done}${total !== null ? ` of ${total}` : ""}` : ""}
      </p>
      {status === "running" || status === "starting" ? (
        <progress aria-label={`${label} progress`} max={total ?? undefined} value={total !== null && done !== null ? done : undefined} />
      ) : (
        <progress aria-label={`${label} progress`} max={1} value={1} />
      )}
      {run?.error && <p className="error" role="alert">{run.error}</p>}
      {run?.report && <pre className="report">{JSON.stringify(run.report, null, 2)}</pre>}
    </div>
  );
}
