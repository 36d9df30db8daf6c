import { useState } from "react";
import { Link, useParams } from "react-router-dom";
import { api, unwrap, type Memory } from "../api/client";
import { useAccess } from "../auth";
import { Page, Show, Tags, when } from "../components/ui";
import { useLoad } from "../hooks";
import { list, record, type Brief } from "../api/shapes";
import { MemoryLinks } from "../components/MemoryLinks";
import { WordDiff } from "../components/WordDiff";

const TYPES = ["text", "note", "decision", "conversation", "summary"] as const;

export function MemoryDetail() {
  const { id = "" } = useParams();
  const { canWrite } = useAccess();
  const memory = useLoad(() => unwrap(api.GET("/api/memories/{memory_id}", { params: { path: { memory_id: id } } })), [id]);
  const lineage = useLoad(
    () => unwrap(api.GET("/api/timeline", { params: { query: { mode: "lineage", memory_id: id } } })),
    [id],
  );
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const act = (call: Promise<unknown>) =>
    call
      .then(() => {
        setError(null);
        setEditing(false);
        memory.reload();
      })
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));

  return (
    <Page title="Memory">
      <Show state={memory}>
        {(m) => (
          <>
            {m.superseded_by && <Superseded memory={m} by={m.superseded_by} />}
            {!m.is_active && <p className="notice">This memory is archived (in the trash).</p>}
            {editing ? (
              <EditForm memory={m} onSave={(patch) => act(unwrap(api.PATCH("/api/memories/{memory_id}", { params: { path: { memory_id: id } }, body: patch })))} onCancel={() => setEditing(false)} />
            ) : (
              <article className="card">
                <pre className="content">{m.content}</pre>
                <Tags tags={m.tags} />
              </article>
            )}
            {error && <p className="error" role="alert">{error}</p>}
            {canWrite && !editing && (
              <div className="actions">
                <button type="button" onClick={() => setEditing(true)}>Edit</button>
                {m.is_active ? (
                  <button type="button" className="danger" onClick={() => void act(unwrap(api.POST("/api/memories/{memory_id}/archive", { params: { path: { memory_id: id } } })))}>
                    Archive
                  </button>
                ) : (
                  <button type="button" onClick={() => void act(unwrap(api.POST("/api/memories/{memory_id}/restore", { params: { path: { memory_id: id } } })))}>
                    Restore
                  </button>
                )}
              </div>
            )}
            <Facts memory={m} />
            <Variants memory={m} />
            <Entities memory={m} />
          </>
        )}
      </Show>
      <h2>Versions</h2>
      <Show state={lineage}>
        {(reply) => {
          const chain = list<Brief>(record(reply).lineage);
          return chain.length ? (
            <ol className="lineage">
              {chain.map((v) => (
                <li key={v.id}>
                  {v.id === id ? <strong>this memory</strong> : <Link to={`/memory/${v.id}`}>{v.content.slice(0, 120)}</Link>}
                  <span className="muted"> · {when(v.created_at)}</span>
                </li>
              ))}
            </ol>
          ) : (
            <p className="muted">One version.</p>
          );
        }}
      </Show>
      <MemoryLinks memoryId={id} center={memory.data ? memory.data.content : "this memory"} />
    </Page>
  );
}

/** The banner of a superseded memory: a link to the newer one and what it changed, word by word. */
function Superseded({ memory, by }: { memory: Memory; by: string }) {
  const newer = useLoad(() => unwrap(api.GET("/api/memories/{memory_id}", { params: { path: { memory_id: by } } })), [by]);
  return (
    <div className="notice superseded">
      <p>
        Superseded by <Link to={`/memory/${by}`}>a newer memory</Link>.
      </p>
      {newer.data && (
        <>
          <p className="muted">What the newer memory changed:</p>
          <WordDiff before={memory.content} after={newer.data.content} />
        </>
      )}
      {newer.error && <p className="muted">The newer memory cannot be read: {newer.error}</p>}
    </div>
  );
}

function Facts({ memory: m }: { memory: Memory }) {
  const rows: [string, string][] = [
    ["id", m.id],
    ["namespace", m.namespace],
    ["type", m.content_type],
    ["source", m.source],
    ["importance", m.importance.toFixed(2)],
    ["version", String(m.version)],
    ["created", when(m.created_at)],
    ["updated", when(m.updated_at)],
    ["accessed", `${m.access_count} times, last ${when(m.last_accessed_at)}`],
    ["useful", String(m.useful_count)],
    ["agent", m.agent ?? "—"],
    ["model", m.model_name ?? m.model_id ?? "—"],
    ["enrichment", m.enrichment_status],
  ];
  return (
    <dl className="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Near-duplicates folded into this memory at store time (kept, not discarded). */
function Variants({ memory }: { memory: Memory }) {
  const variants = list<Record<string, unknown>>(record(memory.metadata).variants);
  if (!variants.length) return null;
  return (
    <>
      <h2>Variants</h2>
      <ul>
        {variants.map((v, i) => (
          <li key={i}>{String(v.content ?? JSON.stringify(v))}</li>
        ))}
      </ul>
    </>
  );
}

function Entities({ memory }: { memory: Memory }) {
  const named = list<Record<string, unknown>>(record(memory.metadata).entities);
  if (!named.length) return null;
  return (
    <>
    <h2>Entities</h2>
    <ul className="tags">
      {named.map((e, i) => {
        const name = String(e.name ?? e.text ?? "");
        return (
          <li key={i} className="tag">
            {typeof e.id === "string" ? <Link to={`/entities/${e.id}`}>{name}</Link> : <Link to={`/entities?query=${encodeURIComponent(name)}`}>{name}</Link>}
            {typeof e.type === "string" && <span className="muted"> {e.type}</span>}
          </li>
        );
      })}
    </ul>
    </>
  );
}

type Patch = { content?: string; tags?: string[]; importance?: number; content_type?: (typeof TYPES)[number] };

function EditForm({ memory, onSave, onCancel }: { memory: Memory; onSave: (patch: Patch) => void; onCancel: () => void }) {
  const [content, setContent] = useState(memory.content);
  const [tags, setTags] = useState(memory.tags.join(", "));
  const [importance, setImportance] = useState(memory.importance);
  const [type, setType] = useState(memory.content_type);
  return (
    <form
      className="card form"
      aria-label="Edit memory"
      onSubmit={(e) => {
        e.preventDefault();
        const patch: Patch = {};
        if (content !== memory.content) patch.content = content;
        const newTags = tags.split(",").map((t) => t.trim()).filter(Boolean);
        if (newTags.join(",") !== memory.tags.join(",")) patch.tags = newTags;
        if (importance !== memory.importance) patch.importance = importance;
        if (type !== memory.content_type && (TYPES as readonly string[]).includes(type)) patch.content_type = type as Patch["content_type"];
        onSave(patch);
      }}
    >
      <label>
        Content
        <textarea rows={8} required value={content} onChange={(e) => setContent(e.target.value)} />
      </label>
      <label>
        Tags (comma-separated)
        <input value={tags} onChange={(e) => setTags(e.target.value)} />
      </label>
      <label>
        Importance {importance.toFixed(2)}
        <input type="range" min={0} max={1} step={0.05} value={importance} onChange={(e) => setImportance(Number(e.target.value))} />
      </label>
      <label>
        Type
        <select value={type} onChange={(e) => setType(e.target.value)}>
          {TYPES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <div className="actions">
        <button type="submit" className="primary">Save</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
