import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useAccess } from "../auth";
import { JobRun, runIdOf } from "../components/JobRun";
import { RestoreTable } from "../components/RestoreTable";
import { Show, Stat } from "../components/ui";
import { Backups } from "./SettingsBackups";
import { useLoad, useNamespace } from "../hooks";

type ImportItem = Schemas["ImportItem"];
type ExportDocument = Schemas["ExportDocument"];
type RestoreReport = Schemas["RestoreReport"];
type ImportResponse = Schemas["ImportResponse"];

const fail = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The data tools under the settings: embedding health and re-embedding, export, import, backups. */
export function SettingsData() {
  return (
    <>
      <EmbeddingHealth />
      <Export />
      <Import />
      <Backups />
    </>
  );
}

function EmbeddingHealth() {
  const namespace = useNamespace();
  const { canWrite } = useAccess();
  const health = useLoad(
    () => unwrap(api.GET("/api/analytics/embedding-health", { params: { query: { namespace: namespace ?? null } } })),
    [namespace],
  );
  const [runId, setRunId] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const start = () => {
    setError(null);
    unwrap(api.POST("/api/reembed", { body: { stale_model: true, dry_run: false, wait_seconds: 0 } }))
      .then((started) => setRunId(runIdOf(started)))
      .catch((e: unknown) => setError(fail(e)));
  };
  return (
    <section aria-labelledby="embedding-health">
      <h2 id="embedding-health">Embedding health</h2>
      <Show state={health}>
        {(h) => (
          <>
            <div className="stats">
              <Stat label="embedded" value={h.totalEmbedded} />
              <Stat label="by another model" value={h.mismatchedModel} />
              <Stat label="missing a vector" value={h.missingEmbedding} />
              <Stat label="dimensions" value={h.dimensions ?? "—"} />
            </div>
            <p className="muted">
              Current model: {h.currentModel ?? "—"}
              {Object.keys(h.models).length > 0 &&
                ` · stored: ${Object.entries(h.models)
                  .map(([model, count]) => `${model} (${String(count)})`)
                  .join(", ")}`}
            </p>
          </>
        )}
      </Show>
      {canWrite && (
        <p>
          <button type="button" onClick={start}>Re-embed</button>{" "}
          <span className="muted">Embeds every active memory missing a vector or embedded by another model (all namespaces).</span>
        </p>
      )}
      {error && <p className="error" role="alert">{error}</p>}
      {runId !== null && <JobRun key={runId} runId={runId} label="Re-embed" onDone={health.reload} />}
    </section>
  );
}

function Export() {
  const namespace = useNamespace();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const download = () => {
    setBusy(true);
    setMessage(null);
    // Fetched with the key (a plain link could not send it), then handed to the browser as a file.
    unwrap(api.GET("/api/export", { params: { query: { namespace: namespace ?? null } } }))
      .then((doc) => {
        const blob = new Blob([JSON.stringify(doc, null, 2)], { type: "application/json" });
        const url = URL.createObjectURL(blob);
        const a = document.createElement("a");
        a.href = url;
        a.download = `exocortex-export-${namespace ?? "all"}-${new Date().toISOString().slice(0, 10)}.json`;
        document.body.append(a);
        a.click();
        a.remove();
        window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
        setMessage({ ok: true, text: `Exported ${doc.memories.length} memories.` });
      })
      .catch((e: unknown) => setMessage({ ok: false, text: fail(e) }))
      .finally(() => setBusy(false));
  };
  return (
    <section aria-labelledby="export">
      <h2 id="export">Export</h2>
      <p className="muted">
        Every memory{namespace ? ` of ${namespace}` : ""} with its links, entities, goals and settings, as JSON (secrets masked).
      </p>
      <button type="button" onClick={download} disabled={busy}>{busy ? "Exporting…" : "Download JSON export"}</button>
      {message && (
        <p className={message.ok ? "notice" : "error"} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
    </section>
  );
}

type Parsed =
  | { kind: "export"; doc: ExportDocument; preview: RestoreReport }
  | { kind: "list"; memories: ImportItem[] };

/** An export document (`version` and `memories`) or a list of new memories (`{memories: […]}` or `[…]`). */
function parse(text: string): { kind: "export"; doc: ExportDocument } | { kind: "list"; memories: ImportItem[] } {
  const value: unknown = JSON.parse(text);
  if (value && typeof value === "object" && !Array.isArray(value) && "version" in value) {
    return { kind: "export", doc: value as ExportDocument };
  }
  const items: unknown = Array.isArray(value) ? value : (value as { memories?: unknown } | null)?.memories;
  if (!Array.isArray(items) || items.length === 0) throw new Error("expected a list of memories, or an export document");
  items.forEach((item, i) => {
    if (!item || typeof item !== "object" || typeof (item as { content?: unknown }).content !== "string")
      throw new Error(`memories.${i}: each memory needs a "content" string`);
  });
  return { kind: "list", memories: items as ImportItem[] };
}

function Import() {
  const { canWrite } = useAccess();
  const [text, setText] = useState("");
  const [parsed, setParsed] = useState<Parsed | null>(null);
  const [result, setResult] = useState<ImportResponse | RestoreReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!canWrite) return null;

  const reset = (next: string) => {
    setText(next);
    setParsed(null);
    setResult(null);
    setError(null);
  };
  const preview = async () => {
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      const found = parse(text);
      if (found.kind === "export") {
        // The gateway restores an export document in a dry run: nothing changes.
        const report = await unwrap(api.POST("/api/memories/import", { params: { query: { dry_run: true } }, body: found.doc }));
        setParsed({ kind: "export", doc: found.doc, preview: report as RestoreReport });
      } else {
        setParsed(found);
      }
    } catch (e) {
      setParsed(null);
      setError(fail(e));
    } finally {
      setBusy(false);
    }
  };
  const apply = async () => {
    if (!parsed) return;
    setBusy(true);
    try {
      const params = { query: { dry_run: false } };
      setResult(
        parsed.kind === "export"
          ? await unwrap(api.POST("/api/memories/import", { params, body: parsed.doc }))
          : // The items were checked only for their content: the gateway validates the rest.
            await unwrap(api.POST("/api/memories/import", { params, body: { memories: parsed.memories } as never })),
      );
      setParsed(null);
    } catch (e) {
      setError(fail(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="import">
      <h2 id="import">Import</h2>
      <p className="muted">
        A JSON export (restored exactly; rows already present are skipped) or a list of new memories (<code>{"{\"memories\": [{\"content\": …}]}"}</code>).
        Preview first: nothing changes until you apply.
      </p>
      <div className="toolbar">
        <label>
          JSON file
          <input
            type="file"
            accept="application/json,.json"
            onChange={(e) => {
              const file = e.target.files?.[0];
              if (file) void file.text().then(reset);
            }}
          />
        </label>
      </div>
      <label className="block">
        JSON to import
        <textarea rows={5} value={text} onChange={(e) => reset(e.target.value)} spellCheck={false} />
      </label>
      <div className="actions">
        <button type="button" onClick={() => void preview()} disabled={busy || !text.trim()}>Preview import</button>
        <button type="button" className="primary" onClick={() => void apply()} disabled={busy || !parsed}>Apply import</button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {parsed?.kind === "export" && <RestoreTable title="Preview (dry run): nothing changed yet" report={parsed.preview} />}
      {parsed?.kind === "list" && (
        <div className="card" aria-label="Import preview">
          <p>
            Preview: {parsed.memories.length} new memories
            {(() => {
              const namespaces = [...new Set(parsed.memories.map((m) => m.namespace ?? "default"))];
              return ` into ${namespaces.join(", ")}`;
            })()}
            . Duplicates of stored memories are skipped when applied.
          </p>
          <ul>
            {parsed.memories.slice(0, 5).map((m, i) => (
              <li key={i}>{m.content.length > 140 ? `${m.content.slice(0, 140)}…` : m.content}</li>
            ))}
          </ul>
        </div>
      )}
      {result && "sections" in result && <RestoreTable title="Imported" report={result} />}
      {result && "imported" in result && (
        <p className={result.failed ? "error" : "notice"} role="status">
          Imported {result.imported} memories{result.failed ? `, ${result.failed} failed: ${result.errors.join("; ")}` : ""}.
        </p>
      )}
    </section>
  );
}
