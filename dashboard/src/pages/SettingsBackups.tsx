import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useAccess } from "../auth";
import { RestoreTable } from "../components/RestoreTable";
import { Show, when } from "../components/ui";
import { useLoad } from "../hooks";

type BackupFile = Schemas["BackupFile"];
type VerifyReport = Schemas["VerifyReport"];
type RestoreReport = Schemas["RestoreReport"];

/** What the last action on a backup answered (one action at a time). */
type Outcome =
  | { kind: "created"; backup: BackupFile }
  | { kind: "verified"; report: VerifyReport }
  | { kind: "restored"; name: string; report: RestoreReport };

type Action = "create" | "verify" | "preview" | "restore";

const fail = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const counted = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([section, n]) => `${n} ${section}`)
    .join(", ") || "nothing";

/** The encrypted backups in the server's data folder: list, create, verify, restore. A backup
 *  holds every namespace, so the gateway serves these only to a key for all namespaces; making,
 *  verifying and restoring one also need a key that may write. */
export function Backups() {
  const { who, canWrite } = useAccess();
  const everyNamespace = who.namespaces == null;
  return (
    <section className="backups" aria-labelledby="backups">
      <h2 id="backups">Backups</h2>
      {everyNamespace ? (
        <BackupTools canAct={canWrite} />
      ) : (
        <p className="muted">A backup holds every namespace: only a key for all namespaces can see them.</p>
      )}
    </section>
  );
}

function BackupTools({ canAct }: { canAct: boolean }) {
  const backups = useLoad(() => unwrap(api.GET("/api/backups")), []);
  const [passphrase, setPassphrase] = useState("");
  const [withEmbeddings, setWithEmbeddings] = useState(false);
  const [working, setWorking] = useState<{ action: Action; name: string | null } | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<string | null>(null);

  // Left empty, the server uses its own EXO_BACKUP_PASSPHRASE.
  const secret = passphrase ? passphrase : null;

  const run = <T,>(action: Action, name: string | null, call: () => Promise<T>, done: (answer: T) => Outcome) => {
    setWorking({ action, name });
    setOutcome(null);
    setError(null);
    call()
      .then((answer) => {
        setOutcome(done(answer));
        if (action === "create") backups.reload();
      })
      .catch((e: unknown) => setError(fail(e)))
      .finally(() => setWorking(null));
  };

  const create = () =>
    run(
      "create",
      null,
      () => unwrap(api.POST("/api/backups", { body: { passphrase: secret, include_embeddings: withEmbeddings } })),
      (backup) => ({ kind: "created", backup }),
    );
  const verify = (name: string) =>
    run(
      "verify",
      name,
      () => unwrap(api.POST("/api/backups/{name}/verify", { params: { path: { name } }, body: { passphrase: secret } })),
      (report) => ({ kind: "verified", report }),
    );
  const restore = (name: string, dryRun: boolean) => {
    if (
      !dryRun &&
      !window.confirm(
        `Restore ${name} into this store? Every memory, link, entity, goal and setting it holds that is missing here is written back (all namespaces); rows already here are kept as they are, and settings take the backup's values. This cannot be undone.`,
      )
    )
      return;
    run(
      dryRun ? "preview" : "restore",
      name,
      () =>
        unwrap(api.POST("/api/backups/{name}/restore", { params: { path: { name } }, body: { passphrase: secret, dry_run: dryRun } })),
      (report) => ({ kind: "restored", name, report }),
    );
  };

  const busy = working !== null;
  return (
    <>
      <p className="muted">
        Encrypted backups of every namespace in the server's data folder (<code>backups/</code>), newest first. Keep the
        passphrase elsewhere: without it a backup cannot be read.
      </p>
      {canAct && (
        <div className="toolbar">
          <label>
            Passphrase
            <input
              type="password"
              autoComplete="new-password"
              minLength={8}
              value={passphrase}
              placeholder="empty: the server's own"
              onChange={(e) => setPassphrase(e.target.value)}
            />
          </label>
          <label className="inline check">
            <input type="checkbox" checked={withEmbeddings} onChange={(e) => setWithEmbeddings(e.target.checked)} />
            with embeddings
          </label>
          <button type="button" className="primary" onClick={create} disabled={busy}>
            Create backup
          </button>
        </div>
      )}
      {working && <Working action={working.action} name={working.name} />}
      {error && <p className="error" role="alert">{error}</p>}
      {outcome && <OutcomeView outcome={outcome} />}
      <Show state={backups}>
        {(reply) =>
          reply.backups.length ? (
            <div className="scroll">
              <table className="grid" aria-label="Backups">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Created</th>
                    <th>Size</th>
                    <th>Made</th>
                    {canAct && <th>Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {reply.backups.map((b) => (
                    <tr key={b.name} data-backup={b.name}>
                      <td className="wrap">{b.name}</td>
                      <td className="nowrap">{when(b.created_at)}</td>
                      <td className="nowrap">{size(b.size_bytes)}</td>
                      <td>{b.scheduled ? "on schedule" : "on request"}</td>
                      {canAct && (
                        <td>
                          <div className="actions">
                            <button type="button" onClick={() => verify(b.name)} disabled={busy}>Verify</button>
                            <button type="button" onClick={() => restore(b.name, true)} disabled={busy}>Preview restore</button>
                            <button type="button" className="danger" onClick={() => restore(b.name, false)} disabled={busy}>
                              Restore
                            </button>
                          </div>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="muted">No backups yet.</p>
          )
        }
      </Show>
    </>
  );
}

const DOING: Record<Action, string> = {
  create: "Creating a backup of every namespace (read, then encrypted and written)…",
  verify: "Verifying: decrypting every chunk and recounting every section…",
  preview: "Previewing the restore (a dry run: nothing is written)…",
  restore: "Restoring…",
};

/** The gateway answers once the work is done: until then, say what is going on. */
function Working({ action, name }: { action: Action; name: string | null }) {
  return (
    <div className="card" role="status" aria-busy="true" data-working={action}>
      <p>
        {DOING[action]}
        {name && <span className="muted"> {name}</span>}
      </p>
      <progress aria-label="Backup work in progress" />
    </div>
  );
}

function OutcomeView({ outcome }: { outcome: Outcome }) {
  if (outcome.kind === "created") {
    const b = outcome.backup;
    return (
      <p className="notice" role="status">
        Created {b.name} ({size(b.size_bytes)}): {counted(b.counts)}.
      </p>
    );
  }
  if (outcome.kind === "verified") {
    const r = outcome.report;
    return r.ok ? (
      <div className="notice" role="status" aria-label={`Verification of ${r.name}`}>
        <p>
          {r.name} verified: format {r.format_version}, exported {when(r.exported_at)}, {counted(r.counts)}.
        </p>
      </div>
    ) : (
      <div className="error" role="alert" aria-label={`Verification of ${r.name}`}>
        <p>{r.name} did not verify:</p>
        <ul>
          {r.problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      </div>
    );
  }
  return (
    <RestoreTable
      title={outcome.report.dry_run ? `Preview of restoring ${outcome.name} (dry run): nothing changed` : `Restored ${outcome.name}`}
      report={outcome.report}
    />
  );
}
