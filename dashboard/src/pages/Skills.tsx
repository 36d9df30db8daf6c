import { useMemo, useState } from "react";
import { api, unwrap, type Memory } from "../api/client";
import { MemoryLine, Page, Show } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

const SKILL = "skill";

/** A vote count an agent recorded in the memory's metadata (`helpful` / `harmful`). */
export function votes(memory: Memory, kind: "helpful" | "harmful"): number {
  const meta = memory.metadata as Record<string, unknown>;
  const value = meta[kind] ?? meta[`${kind}_count`];
  const n = typeof value === "number" ? value : Number(value ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** Knowledge skills: memories tagged `skill`, narrowed by their other tags. */
export function Skills() {
  const namespace = useNamespace();
  const state = useLoad(
    () =>
      unwrap(
        api.GET("/api/memories/recent", {
          params: { query: { namespace: namespace ?? null, tags: SKILL, limit: "100" } },
        }),
      ),
    [namespace],
  );
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const skills = useMemo(() => (state.data?.results ?? []).filter((m) => m.tags.includes(SKILL)), [state.data]);
  const otherTags = useMemo(() => {
    const counts = new Map<string, number>();
    for (const m of skills) for (const t of m.tags) if (t !== SKILL) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  }, [skills]);
  const shown = skills.filter((m) => [...picked].every((t) => m.tags.includes(t)));
  const toggle = (tag: string) => {
    const next = new Set(picked);
    if (next.has(tag)) next.delete(tag);
    else next.add(tag);
    setPicked(next);
  };

  return (
    <Page title="Skills">
      <p className="muted">
        Memories tagged <span className="tag">{SKILL}</span>: what the agents learned to do, with the votes they gave each.
      </p>
      <Show state={state}>
        {() => (
          <>
            {otherTags.length > 0 && (
              <div className="toolbar filters" role="group" aria-label="Filter skills by tag">
                {otherTags.map(([t, n]) => (
                  <button key={t} type="button" className="tag" aria-pressed={picked.has(t)} onClick={() => toggle(t)}>
                    {t} <span className="muted">{n}</span>
                  </button>
                ))}
              </div>
            )}
            <p className="muted">
              {shown.length} of {skills.length} skills
            </p>
            {shown.length === 0 && <p className="empty">No skills here yet: tag a memory “{SKILL}”.</p>}
            <ul className="memory-list">
              {shown.map((m) => (
                <li key={m.id}>
                  <MemoryLine memory={m}>
                    <p className="votes">
                      <span title="helpful votes">▲ {votes(m, "helpful")} helpful</span>{" "}
                      <span title="harmful votes">▼ {votes(m, "harmful")} harmful</span>
                    </p>
                  </MemoryLine>
                </li>
              ))}
            </ul>
          </>
        )}
      </Show>
    </Page>
  );
}
