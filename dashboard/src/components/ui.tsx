import type { ReactNode } from "react";
import { Link } from "react-router-dom";
import type { Loaded } from "../hooks";
import type { Memory } from "../api/client";

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <h1 id="page-title">{title}</h1>
        {actions && <div className="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

/** Loading, error or the content: every page shows a failed call's own explanation. */
export function Show<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ReactNode }) {
  if (state.error) return <p className="error" role="alert">{state.error}</p>;
  if (state.data === undefined) return <p className="muted" aria-busy="true">Loading…</p>;
  return <>{children(state.data)}</>;
}

export function Tags({ tags, onPick }: { tags: readonly string[]; onPick?: (tag: string) => void }) {
  return (
    <span className="tags">
      {tags.map((t) =>
        onPick ? (
          <button key={t} type="button" className="tag" onClick={() => onPick(t)}>{t}</button>
        ) : (
          <span key={t} className="tag">{t}</span>
        ),
      )}
    </span>
  );
}

export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "—";

export function MemoryLine({ memory, children }: { memory: Memory; children?: ReactNode }) {
  return (
    <article className="memory" data-memory-id={memory.id}>
      <div className="memory-meta">
        <span className={`type type-${memory.content_type}`}>{memory.content_type}</span>
        <span className="muted">{memory.namespace}</span>
        <span className="muted">{when(memory.created_at)}</span>
        <span className="muted" title="importance">★ {memory.importance.toFixed(2)}</span>
      </div>
      <Link className="memory-content" to={`/memory/${memory.id}`}>
        {memory.content.length > 320 ? `${memory.content.slice(0, 320)}…` : memory.content}
      </Link>
      <Tags tags={memory.tags} />
      {children}
    </article>
  );
}

export function Stat({ label, value }: { label: string; value: ReactNode }) {
  return (
    <div className="stat">
      <div className="stat-value">{value}</div>
      <div className="stat-label">{label}</div>
    </div>
  );
}
