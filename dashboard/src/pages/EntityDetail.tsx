import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { api, unwrap } from "../api/client";
import { useAccess } from "../auth";
import { list, record, type Entity, type EntityMemory } from "../api/shapes";
import { MemoryLine, Page, Show, Tags } from "../components/ui";
import { useLoad } from "../hooks";
import { RadialGraph } from "../components/RadialGraph";

interface Related {
  entity: Entity;
  relationship: string;
  direction: string;
  context: string;
  confidence: number;
  memory_id: string | null;
}

export function EntityDetail() {
  const { id = "" } = useParams();
  const { canWrite } = useAccess();
  const navigate = useNavigate();
  const path = { params: { path: { entity_id: id } } };
  const detail = useLoad(async () => {
    const reply = record(await unwrap(api.GET("/api/entities/{entity_id}/memories", path)));
    return { entity: reply.entity as Entity, memories: list<EntityMemory>(reply.memories) };
  }, [id]);
  const relations = useLoad(async () => record(await unwrap(api.GET("/api/entities/{entity_id}/relationships", path))), [id]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);

  return (
    <Page title="Entity">
      <Show state={detail}>
        {({ entity, memories }) => (
          <>
            {editing ? (
              <EntityForm
                entity={entity}
                onSave={(patch) =>
                  unwrap(api.PATCH("/api/entities/{entity_id}", { ...path, body: patch }))
                    .then(() => {
                      setEditing(false);
                      detail.reload();
                    })
                    .catch((e: unknown) => setError(String(e instanceof Error ? e.message : e)))
                }
                onCancel={() => setEditing(false)}
              />
            ) : (
              <div className="card">
                <h2 className="entity-name">{entity.name}</h2>
                <p>
                  <span className="tag">{entity.type}</span> <span className="muted">{entity.namespace}</span>
                </p>
                {entity.aliases.length > 0 && <p>Also known as {entity.aliases.join(", ")}</p>}
                <Tags tags={entity.tags} />
              </div>
            )}
            {error && <p className="error" role="alert">{error}</p>}
            {canWrite && !editing && (
              <div className="actions">
                <button type="button" onClick={() => setEditing(true)}>Edit</button>
                <button
                  type="button"
                  className="danger"
                  onClick={() => {
                    if (!window.confirm(`Delete the entity ${entity.name}? Its memories stay.`)) return;
                    unwrap(api.DELETE("/api/entities/{entity_id}", path))
                      .then(() => navigate("/entities"))
                      .catch((e: unknown) => setError(String(e instanceof Error ? e.message : e)));
                  }}
                >
                  Delete
                </button>
              </div>
            )}
            <h2>Memories</h2>
            {memories.length ? (
              <ul className="memory-list">
                {memories.map((m) => (
                  <li key={m.id}>
                    <MemoryLine memory={m} />
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">No active memories mention it.</p>
            )}
          </>
        )}
      </Show>
      <h2>Relationships</h2>
      <Show state={relations}>
        {(reply) => {
          const rows = list<Related>(reply.results);
          return rows.length ? (
            <>
            <RadialGraph
              label="Neighbourhood of this entity"
              center={detail.data?.entity.name ?? ""}
              spokes={rows.map((r, i) => ({
                key: `${i}-${r.entity.id}`,
                label: r.entity.name,
                href: `/entities/${r.entity.id}`,
                edge: r.relationship,
                direction: r.direction === "incoming" ? "incoming" : "outgoing",
              }))}
            />
            <ul className="links">
              {rows.map((r, i) => (
                <li key={i}>
                  {r.direction === "incoming" ? "←" : "→"} <span className="tag">{r.relationship}</span>{" "}
                  <Link to={`/entities/${r.entity.id}`}>{r.entity.name}</Link>
                  <span className="muted"> ({r.confidence.toFixed(2)})</span>
                  {r.memory_id && (
                    <>
                      {" "}
                      <Link to={`/memory/${r.memory_id}`}>source memory</Link>
                    </>
                  )}
                </li>
              ))}
            </ul>
            </>
          ) : (
            <p className="muted">No relationships.</p>
          );
        }}
      </Show>
    </Page>
  );
}

const ENTITY_TYPES = ["person", "project", "technology", "organization", "concept"] as const;
type EntityType = (typeof ENTITY_TYPES)[number];
type EntityPatch = { name?: string; aliases?: string[]; tags?: string[]; type?: EntityType };

function EntityForm({ entity, onSave, onCancel }: { entity: Entity; onSave: (p: EntityPatch) => void; onCancel: () => void }) {
  const [name, setName] = useState(entity.name);
  const [aliases, setAliases] = useState(entity.aliases.join(", "));
  const [tags, setTags] = useState(entity.tags.join(", "));
  const [type, setType] = useState(entity.type);
  const split = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
  return (
    <form
      className="card form"
      aria-label="Edit entity"
      onSubmit={(e) => {
        e.preventDefault();
        const patch: EntityPatch = { name, aliases: split(aliases), tags: split(tags) };
        // Only a type the gateway knows is sent; an unchanged one is left alone.
        if (type !== entity.type && (ENTITY_TYPES as readonly string[]).includes(type)) patch.type = type as EntityType;
        onSave(patch);
      }}
    >
      <label>
        Name
        <input required value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Type
        <select value={type} onChange={(e) => setType(e.target.value)}>
          {!(ENTITY_TYPES as readonly string[]).includes(entity.type) && <option value={entity.type}>{entity.type}</option>}
          {ENTITY_TYPES.map((t) => (
            <option key={t} value={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        Aliases
        <input value={aliases} onChange={(e) => setAliases(e.target.value)} />
      </label>
      <label>
        Tags
        <input value={tags} onChange={(e) => setTags(e.target.value)} />
      </label>
      <div className="actions">
        <button type="submit" className="primary">Save</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
