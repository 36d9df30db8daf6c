import { Link, useSearchParams } from "react-router-dom";
import { api, unwrap } from "../api/client";
import { list, record, type Entity } from "../api/shapes";
import { Page, Show, Tags } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

const TYPES = ["person", "project", "technology", "organization", "concept"];

export function Entities() {
  const namespace = useNamespace();
  const [params, setParams] = useSearchParams();
  const query = params.get("query") ?? "";
  const type = params.get("type") ?? "";
  const tag = params.get("tag") ?? "";
  const state = useLoad(
    async () =>
      list<Entity>(
        record(
          await unwrap(
            api.GET("/api/entities", {
              params: { query: { namespace: namespace ?? null, query: query || null, type: type || null, tags: tag || null } },
            }),
          ),
        ).results,
      ),
    [namespace, query, type, tag],
  );
  const set = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next);
  };
  return (
    <Page title="Entities">
      <div className="toolbar filters">
        <label className="grow">
          Name
          <input type="search" value={query} onChange={(e) => set("query", e.target.value)} placeholder="name or alias" />
        </label>
        <label>
          Type
          <select value={type} onChange={(e) => set("type", e.target.value)}>
            <option value="">any</option>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <input value={tag} onChange={(e) => set("tag", e.target.value)} size={10} />
        </label>
      </div>
      <Show state={state}>
        {(entities) =>
          entities.length ? (
            <table className="grid">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Type</th>
                  <th>Memories</th>
                  <th>Tags</th>
                </tr>
              </thead>
              <tbody>
                {entities.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <Link to={`/entities/${e.id}`}>{e.name}</Link>
                      {e.aliases.length > 0 && <span className="muted"> ({e.aliases.join(", ")})</span>}
                    </td>
                    <td>{e.type}</td>
                    <td>{e.memory_count ?? "—"}</td>
                    <td>
                      <Tags tags={e.tags} onPick={(t) => set("tag", t)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="empty">No entities yet: they are found in memories as enrichment reads them.</p>
          )
        }
      </Show>
    </Page>
  );
}
