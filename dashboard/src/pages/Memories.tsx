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
const IMPORTANCE_STEPS = ["0.25", "0.5", "0.75", "0.9"] as const;
// j / k walk the list, x selects, Escape clears the selection: ignored while typing.
const SHORTCUTS: ReadonlyArray<readonly [string, string]> = [
  ["/", "search"],
  ["j / k", "next / previous memory"],
  ["x", "select the focused memory"],
  ["Escape", "clear the selection"],
  ["m", "load more"],
];

interface Undo {
  ids: string[];
  label: string;
}

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
  const minImportance = params.get("importance") ?? "";
  const [limit, setLimit] = useState(PAGE);
  const [draft, setDraft] = useState(query);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulkTag, setBulkTag] = useState("");
  const [bulkImportance, setBulkImportance] = useState("0.8");
  const [undo, setUndo] = useState<Undo | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const searchBox = useRef<HTMLInputElement>(null);

  const list = useRef<HTMLUListElement>(null);
  const loadMore = useRef<() => void>(() => undefined);

  // Shortcuts from anywhere on the page but a text field (see SHORTCUTS).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) && !(target as HTMLInputElement).classList.contains("select")) return;
      const links = [...(list.current?.querySelectorAll<HTMLAnchorElement>("a.memory-content") ?? [])];
      const row = target.closest<HTMLElement>("[data-memory-id]") ?? target.closest("li")?.querySelector<HTMLElement>("[data-memory-id]");
      const at = row ? links.findIndex((a) => a.closest("[data-memory-id]") === row) : -1;
      if (e.key === "/") {
        searchBox.current?.focus();
      } else if (e.key === "j" || e.key === "k") {
        const next = e.key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
        links[next]?.focus();
      } else if (e.key === "x" && row) {
        const id = row.dataset.memoryId;
        if (id) setSelected((s) => toggled(s, id));
      } else if (e.key === "Escape") {
        setSelected(new Set());
      } else if (e.key === "m") {
        loadMore.current();
      } else {
        return;
      }
      e.preventDefault();
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
            min_importance: minImportance ? Number(minImportance) : null,
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
            min_importance: minImportance ? Number(minImportance) : null,
            ...dates,
          },
        },
      }),
    );
    return { memories: reply.results, scored: new Map(), total: reply.total, mode: "recent" };
  }, [query, tag, type, after, before, minImportance, namespace, limit]);

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

  const toggle = (id: string) => setSelected((s) => toggled(s, id));

  const runBulk = async (what: "tag" | "importance" | "trash") => {
    const ids = [...selected];
    try {
      setUndo(null);
      if (what === "tag") {
        const reply = await unwrap(api.POST("/api/memories/bulk-tag", { body: { ids, add_tags: [bulkTag.trim()], remove_tags: [] } }));
        setNotice(`Tagged ${reply.affected} memories`);
      } else if (what === "importance") {
        const importance = Number(bulkImportance);
        const reply = await unwrap(api.POST("/api/memories/bulk-update", { body: { ids, importance } }));
        setNotice(`Set importance ${importance.toFixed(2)} on ${reply.affected} memories`);
      } else {
        if (!window.confirm(`Move ${ids.length} memories to the trash? You can undo this, or restore them from the trash.`)) return;
        const reply = await unwrap(api.POST("/api/memories/bulk-update", { body: { ids, is_active: false } }));
        setNotice(`Moved ${reply.affected} memories to the trash`);
        setUndo({ ids, label: "Undo" });
      }
      setSelected(new Set());
      setBulkTag("");
      state.reload();
    } catch (e) {
      setNotice(e instanceof Error ? e.message : String(e));
    }
  };

  const undoTrash = async (ids: string[]) => {
    try {
      const reply = await unwrap(api.POST("/api/memories/bulk-update", { body: { ids, is_active: true } }));
      setUndo(null);
      setNotice(`Restored ${reply.affected} memories`);
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
        <label>
          Importance
          <select value={minImportance} onChange={(e) => setFilter("importance", e.target.value)}>
            <option value="">any</option>
            {IMPORTANCE_STEPS.map((v) => (
              <option key={v} value={v}>≥ {v}</option>
            ))}
          </select>
        </label>
      </div>
      {canWrite && <NewMemory namespace={namespace} onStored={state.reload} />}
      {canWrite && selected.size > 0 && (
        <div className="bulkbar" role="region" aria-label="Bulk actions">
          <span>{selected.size} selected</span>
          <input value={bulkTag} onChange={(e) => setBulkTag(e.target.value)} placeholder="tag" aria-label="Tag to add" />
          <button type="button" disabled={!bulkTag.trim()} onClick={() => void runBulk("tag")}>Add tag</button>
          <label className="inline">
            <span className="sr-only">New importance</span>
            <input
              type="number"
              min={0}
              max={1}
              step={0.05}
              value={bulkImportance}
              onChange={(e) => setBulkImportance(e.target.value)}
              aria-label="New importance"
              size={4}
            />
          </label>
          <button
            type="button"
            disabled={bulkImportance === "" || !(Number(bulkImportance) >= 0 && Number(bulkImportance) <= 1)}
            onClick={() => void runBulk("importance")}
          >
            Set importance
          </button>
          <button type="button" className="danger" onClick={() => void runBulk("trash")}>Move to trash</button>
        </div>
      )}
      {notice && (
        <p className="notice" role="status">
          {notice}
          {undo && (
            <button type="button" className="undo" onClick={() => void undoTrash(undo.ids)}>
              {undo.label}
            </button>
          )}
        </p>
      )}
      <Show state={state}>
        {(found) => (
          <>
            <p className="muted">
              {found.mode === "recent"
                ? `${found.total ?? found.memories.length} memories, newest first`
                : `${found.memories.length} results (${found.mode})`}
            </p>
            {found.memories.length === 0 && <p className="empty">Nothing here yet.</p>}
            <ul className="memory-list" ref={list}>
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
              <MoreButton key={found.memories.length} onMore={() => setLimit(limit + PAGE)} register={loadMore} />
            )}
          </>
        )}
      </Show>
      <details className="shortcuts">
        <summary>Keyboard shortcuts</summary>
        <dl>
          {SHORTCUTS.map(([keys, what]) => (
            <div key={keys}>
              <dt><kbd>{keys}</kbd></dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
      </details>
    </Page>
  );
}

function toggled(set: Set<string>, id: string): Set<string> {
  const next = new Set(set);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  return next;
}

/** "Load more": pressed by scrolling it into view (the list goes on as you scroll), by the `m`
 *  shortcut, or as a button. */
function MoreButton({ onMore, register }: { onMore: () => void; register: { current: () => void } }) {
  const button = useRef<HTMLButtonElement>(null);
  const more = useRef(onMore);
  more.current = onMore;
  useEffect(() => {
    register.current = () => more.current();
    return () => {
      register.current = () => undefined;
    };
  }, [register]);
  useEffect(() => {
    const target = button.current;
    if (!target || typeof IntersectionObserver === "undefined") return;
    // Once per button: the list reloads with the next page and shows a new button if more remain.
    let fired = false;
    const observer = new IntersectionObserver((entries) => {
      if (!fired && entries.some((e) => e.isIntersecting)) {
        fired = true;
        more.current();
      }
    });
    observer.observe(target);
    return () => observer.disconnect();
  }, []);
  return (
    <button ref={button} type="button" aria-keyshortcuts="m" onClick={onMore}>Load more</button>
  );
}
