import { useState } from "react";
import { api, unwrap, type Memory, type SearchResult } from "../api/client";
import { useNamespace } from "../hooks";

const SHOWN = 8;
const preview = (text: string) => (text.length > 120 ? `${text.slice(0, 119)}…` : text);

/** Picks one memory by searching (the hybrid search of the memories page, in the picked
 *  namespace): the hits are offered as radio buttons. Not a form of its own, so it can sit
 *  inside one: Enter in the box searches instead of submitting the outer form. */
export function MemoryPicker({
  label,
  exclude,
  picked,
  onPick,
}: {
  label: string;
  /** Never offered (the memory being linked from). */
  exclude?: string;
  picked: Memory | null;
  onPick: (memory: Memory | null) => void;
}) {
  const namespace = useNamespace();
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<Memory[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const find = () => {
    const text = query.trim();
    if (!text) return;
    setBusy(true);
    setError(null);
    unwrap(api.POST("/api/memories/search", { body: { query: text, namespace: namespace ?? null, limit: SHOWN + 1 } }))
      .then((reply) => {
        const found = reply.results
          .filter((r): r is SearchResult => "memory" in r)
          .map((r) => r.memory)
          .filter((m) => m.id !== exclude)
          .slice(0, SHOWN);
        setHits(found);
        onPick(null);
      })
      .catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)))
      .finally(() => setBusy(false));
  };

  return (
    <div className="picker">
      <div className="toolbar" role="search">
        <label className="grow">
          {label}
          <input
            type="search"
            value={query}
            placeholder="Words of the memory to link to"
            onChange={(e) => setQuery(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                find();
              }
            }}
          />
        </label>
        <button type="button" onClick={find} disabled={busy || !query.trim()}>
          {busy ? "Finding…" : "Find"}
        </button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {hits !== null &&
        (hits.length ? (
          <fieldset className="picker-hits">
            <legend>Pick one</legend>
            {hits.map((m) => (
              <label key={m.id} className="picker-hit">
                <input type="radio" name="picked-memory" checked={picked?.id === m.id} onChange={() => onPick(m)} />
                <span>{preview(m.content)}</span>
              </label>
            ))}
          </fieldset>
        ) : (
          <p className="muted">No memory found.</p>
        ))}
    </div>
  );
}
