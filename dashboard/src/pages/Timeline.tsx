import { useState } from "react";
import { Link } from "react-router-dom";
import { api, unwrap } from "../api/client";
import { list, record, type Brief, type Day, type Hierarchy } from "../api/shapes";
import { Page, Show, when } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

type View = "days" | "decisions" | "hierarchy";

export function Timeline() {
  const namespace = useNamespace();
  const [view, setView] = useState<View>("days");
  const [month, setMonth] = useState("");
  const timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const state = useLoad(async () => {
    if (view === "hierarchy") {
      return {
        hierarchy: record(
          await unwrap(api.GET("/api/hierarchy", { params: { query: { namespace: namespace ?? null, month: month || null, timezone } } })),
        ) as Hierarchy,
      };
    }
    const reply = await unwrap(
      api.GET("/api/timeline", {
        params: { query: { namespace: namespace ?? null, mode: view, include_memories: true, limit: 30, timezone } },
      }),
    );
    return view === "days" ? { days: list<Day>(reply) } : { decisions: list<Brief & { supersedes: string[] }>(record(reply).decisions) };
  }, [view, namespace, month]);

  return (
    <Page title="Timeline">
      <div className="tabs" role="tablist" aria-label="Timeline view">
        {(["days", "decisions", "hierarchy"] as const).map((v) => (
          <button key={v} type="button" role="tab" aria-selected={view === v} onClick={() => setView(v)}>
            {v}
          </button>
        ))}
        {view === "hierarchy" && (
          <label>
            Month <input type="month" value={month} onChange={(e) => setMonth(e.target.value)} />
          </label>
        )}
      </div>
      <Show state={state}>
        {(data) => (
          <>
            {data.days && <Days days={data.days} />}
            {data.decisions && <Decisions decisions={data.decisions} />}
            {data.hierarchy && <Tree hierarchy={data.hierarchy} />}
          </>
        )}
      </Show>
    </Page>
  );
}

const Snippet = ({ m }: { m: Brief }) => <Link to={`/memory/${m.id}`}>{m.content.length > 160 ? `${m.content.slice(0, 160)}…` : m.content}</Link>;

function Days({ days }: { days: Day[] }) {
  if (!days.length) return <p className="empty">No memories in this range.</p>;
  return (
    <ol className="timeline">
      {days.map((d) => (
        <li key={d.date}>
          <h2>
            {d.date} <span className="muted">· {d.count}</span>
          </h2>
          <ul>
            {(d.memories ?? []).map((m) => (
              <li key={m.id}>
                <span className={`type type-${m.content_type}`}>{m.content_type}</span> <Snippet m={m} />
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}

function Decisions({ decisions }: { decisions: (Brief & { supersedes: string[] })[] }) {
  if (!decisions.length) return <p className="empty">No decisions recorded yet.</p>;
  return (
    <ol className="timeline">
      {decisions.map((d) => (
        <li key={d.id}>
          <span className="muted">{when(d.created_at)}</span> <Snippet m={d} />
          {d.superseded_by && <span className="tag">superseded</span>}
          {d.supersedes.length > 0 && (
            <span className="muted">
              {" "}
              replaces{" "}
              {d.supersedes.map((id) => (
                <Link key={id} to={`/memory/${id}`}>{id.slice(-6)} </Link>
              ))}
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}

function Tree({ hierarchy }: { hierarchy: Hierarchy }) {
  const epochs = hierarchy.epochs ?? [];
  const orphans = hierarchy.orphan_themes ?? [];
  if (!epochs.length && !orphans.length) {
    return <p className="empty">No epochs or themes yet: consolidation writes them as the memory grows.</p>;
  }
  return (
    <ul className="tree">
      {epochs.map((e) => (
        <li key={e.id}>
          <strong>{e.month}</strong> <Snippet m={e} />
          <ul>
            {e.themes.map((t) => (
              <li key={t.id}>
                <Snippet m={t} />
                <ul>
                  {t.episodes.map((ep) => (
                    <li key={ep.id}><Snippet m={ep} /></li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </li>
      ))}
      {orphans.map((t) => (
        <li key={t.id}>
          <strong>{t.month}</strong> <Snippet m={t} />
        </li>
      ))}
    </ul>
  );
}
