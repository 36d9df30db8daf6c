import { useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { api, unwrap, type Memory, type Schemas } from "../api/client";
import { useAccess } from "../auth";
import { useLoad } from "../hooks";
import { MemoryPicker } from "./MemoryPicker";
import { RadialGraph } from "./RadialGraph";
import { Show } from "./ui";

type LinkType = NonNullable<Schemas["LinkCreate"]["link_type"]>;
type LinkRow = Schemas["Links"]["links"][number];

// Keyed by the API's own vocabulary: a link type the gateway adds or drops fails the build here.
const LINK_TYPE_HELP: Record<LinkType, string> = {
  related: "related: about the same thing",
  elaborates: "elaborates: adds detail to it",
  contradicts: "contradicts: says otherwise",
  supersedes: "supersedes: replaces it",
  supports: "supports: gives evidence for it",
  derived_from: "derived_from: was drawn from it",
};
const LINK_TYPES = Object.keys(LINK_TYPE_HELP) as LinkType[];

const short = (text: string, n = 40) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
const fail = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A memory's links in and out, as a small graph and as a list; a writer can add a link to
 *  another memory and remove one. */
export function MemoryLinks({ memoryId, center }: { memoryId: string; center: string }) {
  const { canWrite } = useAccess();
  const links = useLoad(
    () => unwrap(api.GET("/api/memories/{memory_id}/links", { params: { path: { memory_id: memoryId } } })),
    [memoryId],
  );
  const [error, setError] = useState<string | null>(null);

  const remove = (link: LinkRow) => {
    const arrow = link.direction === "outgoing" ? "to" : "from";
    const asked = `Remove the "${link.link_type}" link ${arrow} "${short(link.preview.content, 80)}"? Both memories stay; only the link goes.`;
    if (!window.confirm(asked)) return;
    setError(null);
    unwrap(
      api.DELETE("/api/memories/{memory_id}/links/{target_id}", {
        params: { path: { memory_id: memoryId, target_id: link.memory_id } },
      }),
    )
      .then(links.reload)
      .catch((e: unknown) => setError(fail(e)));
  };

  return (
    <section aria-labelledby="links-title">
      <h2 id="links-title">Links</h2>
      <Show state={links}>
        {(reply) =>
          reply.links.length ? (
            <>
              <RadialGraph
                label="Links of this memory"
                center={short(center)}
                spokes={reply.links.map((l) => ({
                  key: `${l.direction}-${l.memory_id}-${l.link_type}`,
                  label: short(l.preview.content),
                  href: `/memory/${l.memory_id}`,
                  edge: l.link_type,
                  direction: l.direction === "outgoing" ? "outgoing" : "incoming",
                }))}
              />
              <ul className="links">
                {reply.links.map((l) => (
                  <li key={`${l.direction}-${l.memory_id}-${l.link_type}`} data-linked-id={l.memory_id}>
                    <span className="tag">{l.link_type}</span> {l.direction === "outgoing" ? "→" : "←"}{" "}
                    <Link to={`/memory/${l.memory_id}`}>{l.preview.content.slice(0, 140)}</Link>
                    <span className="muted"> ({l.strength.toFixed(2)})</span>
                    {canWrite && (
                      <>
                        {" "}
                        <button
                          type="button"
                          className="danger small"
                          aria-label={`Remove link to ${short(l.preview.content, 60)}`}
                          onClick={() => remove(l)}
                        >
                          Remove
                        </button>
                      </>
                    )}
                  </li>
                ))}
              </ul>
            </>
          ) : (
            <p className="muted">No links.</p>
          )
        }
      </Show>
      {error && <p className="error" role="alert">{error}</p>}
      {canWrite && <NewLink memoryId={memoryId} onLinked={links.reload} />}
    </section>
  );
}

function NewLink({ memoryId, onLinked }: { memoryId: string; onLinked: () => void }) {
  const [target, setTarget] = useState<Memory | null>(null);
  const [linkType, setLinkType] = useState<LinkType>("related");
  const [strength, setStrength] = useState(0.5);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  // A new picker (empty search) after each link made.
  const [round, setRound] = useState(0);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!target) return;
    setBusy(true);
    setMessage(null);
    unwrap(
      api.POST("/api/memories/{memory_id}/links", {
        params: { path: { memory_id: memoryId } },
        body: { target_id: target.id, link_type: linkType, strength },
      }),
    )
      .then(() => {
        setMessage({ ok: true, text: `Linked (${linkType}) to "${short(target.content, 80)}".` });
        setTarget(null);
        setRound((r) => r + 1);
        onLinked();
      })
      .catch((e: unknown) => setMessage({ ok: false, text: fail(e) }))
      .finally(() => setBusy(false));
  };

  return (
    <form className="card form" aria-label="Link to another memory" onSubmit={submit}>
      <MemoryPicker key={round} label="Find the memory to link to" exclude={memoryId} picked={target} onPick={setTarget} />
      <div className="toolbar">
        <label>
          Link type
          <select value={linkType} onChange={(e) => setLinkType(e.target.value as LinkType)}>
            {LINK_TYPES.map((t) => (
              <option key={t} value={t}>{LINK_TYPE_HELP[t]}</option>
            ))}
          </select>
        </label>
        <label>
          Strength
          <input type="number" min={0} max={1} step={0.05} required value={strength} onChange={(e) => setStrength(Number(e.target.value))} />
        </label>
        <button type="submit" className="primary" disabled={busy || !target}>
          {busy ? "Linking…" : "Add link"}
        </button>
      </div>
      {message && (
        <p className={message.ok ? "notice" : "error"} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
    </form>
  );
}
