import { useEffect, useRef, useState, type FormEvent } from "react";
import { useSearchParams } from "react-router-dom";
import { api, unwrap, type Memory, type SearchResult } from "../api/client";
import { useAccess } from "../auth";
import { MemoryLine, Page, Show } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";
import { ScoreBreakdown } from "../components/ScoreBreakdown";
import { NewMemory } from "../components/NewMemory";

const TYPES = ["text", "note", "decision", "conversation", "summary"] as const;
type ContentType = (typeof TYPES)[number];
const PAGE = 25;

interface Found {
  memories: Memory[];
  scored: Map<string, SearchResult>;
  total: number | null;
  mode: string;
}

export function Memories() {
  const { canWrite } = useAccess();
  const namespace = useNamespace();
  const [params, setParams] = useSearchParams();
  const query = params.get("q") ?? "";
  const tag = params.get("tag") ?? "";
  const type = (params.get("type") ?? "") as ContentType | "";
  const after = params.get("after") ?? "";
  const before = params.get("before") ?? "";
  const [limit, setLimit] = useState(PAGE);
  const [draft, setDraft] = useState(query);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulkTag, setBulkTag] = useState("");
  const [notice, setNotice] = useState<string | null>(null);
  const searchBox = useRef<HTMLInputElement>(null);

  // "/" jumps to the search box from anywhere on the page but a text field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      if (e.key !== "/" || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
      e.preventDefault();
      searchBox.current?.focus();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const state = useLoad<Found>(async () => {
    const dates = { after: after || null, before: before || null };
    if (query) {
      const reply = await unwrap(
        api.POST("/api/memories/search", {
          body: {
            query,
            namespace: namespace ?? null,
            tags: tag ? [tag] : [],
            content_type: type || null,
            limit,
            ...dates,
          },
        }),
      );
      const scored = reply.results.filter((r): r is SearchResult => "memory" in r);
      return {
        memories: scored.map((r) => r.memory),
        scored: new Map(scored.map((r) => [r.memory.id, r])),
        total: null,
        mode: reply.mode,
      };
    }
    const reply = await unwrap(
      api.GET("/api/memories/recent", {
        params: {
          query: {
            namespace: namespace ?? null,
            limit: String(limit),
            tags: tag || null,
            content_type: type || null,
            ...dates,
          },
        },
      }),
    );
    return { memories: reply.results, scored: new Map(), total: reply.total, mode: "recent" };
  }, [query, tag, type, after, before, namespace, limit]);

  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next);
    setLimit(PAGE);
    setSelected(new Set());
  };

  const search = (e: FormEvent) => {
    e.preventDefault();
    setFilter("q", draft.trim());
  };

  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };

  const runBulk = async (what: "tag" | "archive") => {
    const ids = [...selected];
    try {
      const reply =
        what === "tag"
          ? await unwrap(api.POST("/api/memories/bulk-tag", { body: { ids, add_tags: [bulkTag.trim()], remove_tags: [] } }))
          : await unwrap(api.POST("/api/memories/bulk-update", { body: { ids, is_active: false } }));
      setNotice(`${what === "tag" ? "Tagged" : "Archived"} ${reply.affected} memories`);
      setSelected(new Set());
      setBulkTag("");
      state.reload();
    } catch (e) {
      setNotice(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <Page title="Memories">
      <form className="toolbar" role="search" onSubmit={search}>
        <label className="grow">
          <span className="sr-only">Search memories</span>
          <input
            ref={searchBox}
            type="search"
            name="q"
            aria-keyshortcuts="/"
            placeholder="Search memories (hybrid: meaning + keywords)…"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
          />
        </label>
        <button type="submit" className="primary">Search</button>
      </form>
      <div className="toolbar filters">
        <label>
          Tag
          <input value={tag} onChange={(e) => setFilter("tag", e.target.value.trim())} placeholder="any" size={10} />
        </label>
        <label>
          Type
          <select value={type} onChange={(e) => setFilter("type", e.target.value)}>
            <option value="">any</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={after} onChange={(e) => setFilter("after", e.target.value)} />
        </label>
        <label>
          To
          <input type="date" value={before} onChange={(e) => setFilter("before", e.target.value)} />
        </label>
      </div>
      {canWrite && <NewMemory namespace={namespace} onStored={state.reload} />}
      {canWrite && selected.size > 0 && (
        <div className="bulkbar" role="region" aria-label="Bulk actions">
          <span>{selected.size} selected</span>
          <input value={bulkTag} onChange={(e) => setBulkTag(e.target.value)} placeholder="tag" aria-label="Tag to add" />
          <button type="button" disabled={!bulkTag.trim()} onClick={() => void runBulk("tag")}>Add tag</button>
          <button type="button" className="danger" onClick={() => void runBulk("archive")}>Archive</button>
        </div>
      )}
      {notice && <p className="notice" role="status">{notice}</p>}
      <Show state={state}>
        {(found) => (
          <>
            <p className="muted">
              {found.mode === "recent"
                ? `${found.total ?? found.memories.length} memories, newest first`
                : `${found.memories.length} results (${found.mode})`}
            </p>
            {found.memories.length === 0 && <p className="empty">Nothing here yet.</p>}
            <ul className="memory-list">
              {found.memories.map((m) => {
                const hit = found.scored.get(m.id);
                return (
                  <li key={m.id}>
                    {canWrite && (
                      <input
                        type="checkbox"
                        className="select"
                        aria-label={`Select memory ${m.id}`}
                        checked={selected.has(m.id)}
                        onChange={() => toggle(m.id)}
                      />
                    )}
                    <MemoryLine memory={m}>{hit && <ScoreBreakdown hit={hit} />}</MemoryLine>
                  </li>
                );
              })}
            </ul>
            {(found.total === null ? found.memories.length >= limit : found.memories.length < found.total) && (
              <button type="button" onClick={() => setLimit(limit + PAGE)}>Load more</button>
            )}
          </>
        )}
      </Show>
    </Page>
  );
}
