import { useState } from "react";
import { api, unwrap } from "../api/client";
import { useAccess } from "../auth";
import { MemoryLine, Page, Show } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

export function Trash() {
  const namespace = useNamespace();
  const { canWrite } = useAccess();
  const state = useLoad(
    () => unwrap(api.GET("/api/memories/archived", { params: { query: { namespace: namespace ?? null, limit: 100 } } })),
    [namespace],
  );
  const [error, setError] = useState<string | null>(null);
  const act = (call: Promise<unknown>) =>
    call.then(() => state.reload()).catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));

  return (
    <Page title="Trash">
      <p className="muted">Archived memories leave search. What a person put in the trash is deleted for good after trash.auto_purge_days; what automation archived (stale, expired, consolidated) is kept until you delete it here.</p>
      {error && <p className="error" role="alert">{error}</p>}
      <Show state={state}>
        {(reply) =>
          reply.results.length ? (
            <ul className="memory-list">
              {reply.results.map((m) => (
                <li key={m.id}>
                  <MemoryLine memory={m}>
                    <p className="muted trash-origin" data-archived-by={m.archived_by ?? "unknown"}>
                      {m.archived_by === "automation"
                        ? "Archived by automation: kept until you delete it here."
                        : m.archived_by === "person"
                          ? "Put in the trash by a person: deleted for good after trash.auto_purge_days."
                          : "Archived before the trash kept who put it there."}
                    </p>
                    {canWrite && (
                      <div className="actions">
                        <button type="button" onClick={() => void act(unwrap(api.POST("/api/memories/{memory_id}/restore", { params: { path: { memory_id: m.id } } })))}>
                          Restore
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => {
                            if (window.confirm("Delete this memory for good? This cannot be undone."))
                              void act(unwrap(api.DELETE("/api/memories/{memory_id}", { params: { path: { memory_id: m.id } } })));
                          }}
                        >
                          Delete for good
                        </button>
                      </div>
                    )}
                  </MemoryLine>
                </li>
              ))}
            </ul>
          ) : (
            <p className="empty">The trash is empty.</p>
          )
        }
      </Show>
    </Page>
  );
}
