import { lazy, Suspense, useMemo, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useAccess } from "../auth";
import { Page, Show } from "../components/ui";
import { useLoad } from "../hooks";

type Spec = Schemas["SettingSpec"];
// Embedding health, export and import: loaded with the page's data section, after the form.
const SettingsData = lazy(() => import("./SettingsData").then((m) => ({ default: m.SettingsData })));
const MASK = "••••";

export function Settings() {
  const { canWrite } = useAccess();
  const state = useLoad(async () => {
    const [values, schema] = await Promise.all([unwrap(api.GET("/api/settings")), unwrap(api.GET("/api/settings/schema"))]);
    return { values, schema };
  }, []);
  return (
    <Page title="Settings">
      <Show state={state}>
        {({ values, schema }) => <SettingsForm values={values} schema={schema} canWrite={canWrite} onSaved={state.reload} />}
      </Show>
      <Suspense fallback={<p className="muted">Loading…</p>}>
        <SettingsData />
      </Suspense>
    </Page>
  );
}

function SettingsForm({
  values,
  schema,
  canWrite,
  onSaved,
}: {
  values: Record<string, string>;
  schema: Record<string, Spec>;
  canWrite: boolean;
  onSaved: () => void;
}) {
  const [changed, setChanged] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const groups = useMemo(() => {
    const out = new Map<string, string[]>();
    for (const key of Object.keys(schema).sort()) {
      const group = key.split(".")[0] ?? key;
      out.set(group, [...(out.get(group) ?? []), key]);
    }
    return [...out.entries()];
  }, [schema]);
  const value = (key: string) => changed[key] ?? values[key] ?? schema[key]?.default ?? "";

  return (
    <form
      className="settings"
      aria-label="Settings"
      onSubmit={(e) => {
        e.preventDefault();
        unwrap(api.PATCH("/api/settings", { body: changed }))
          .then(() => {
            setMessage({ ok: true, text: `Saved ${Object.keys(changed).length} settings.` });
            setChanged({});
            onSaved();
          })
          .catch((err: unknown) => setMessage({ ok: false, text: err instanceof Error ? err.message : String(err) }));
      }}
    >
      {groups.map(([group, keys]) => (
        <fieldset key={group} disabled={!canWrite}>
          <legend>{group}</legend>
          {keys.map((key) => {
            const spec = schema[key];
            if (!spec) return null;
            return (
              <SettingField key={key} name={key} spec={spec} value={value(key)} dirty={key in changed} onChange={(v) => setChanged({ ...changed, [key]: v })} />
            );
          })}
        </fieldset>
      ))}
      {message && (
        <p className={message.ok ? "notice" : "error"} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
      {canWrite && (
        <div className="actions sticky">
          <button type="submit" className="primary" disabled={!Object.keys(changed).length}>
            Save {Object.keys(changed).length || ""} changes
          </button>
          <button type="button" onClick={() => setChanged({})} disabled={!Object.keys(changed).length}>
            Discard
          </button>
        </div>
      )}
    </form>
  );
}

function SettingField({ name, spec, value, dirty, onChange }: { name: string; spec: Spec; value: string; dirty: boolean; onChange: (v: string) => void }) {
  const id = `setting-${name}`;
  const helpId = `${id}-help`;
  const label = name.split(".").slice(1).join(".") || name;
  let input;
  if (spec.kind === "boolean") {
    input = <input id={id} aria-describedby={helpId} type="checkbox" checked={value === "true"} onChange={(e) => onChange(e.target.checked ? "true" : "false")} />;
  } else if (spec.kind === "choice") {
    input = (
      <select id={id} aria-describedby={helpId} value={value} onChange={(e) => onChange(e.target.value)}>
        {(spec.choices ?? []).map((c) => (
          <option key={c} value={c}>{c || "(none)"}</option>
        ))}
      </select>
    );
  } else if (spec.kind === "number" || spec.kind === "integer") {
    input = (
      <input
        id={id} aria-describedby={helpId}
        type="number"
        value={value}
        min={spec.low ?? undefined}
        max={spec.high ?? undefined}
        step={spec.kind === "integer" ? 1 : "any"}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else if (spec.secret) {
    // The gateway only ever sends a secret masked; an untouched field sends nothing back.
    input = (
      <input
        id={id} aria-describedby={helpId}
        type="password"
        autoComplete="off"
        placeholder={value.includes(MASK) ? value : "not set"}
        value={dirty ? value : ""}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else if (spec.kind.startsWith("json") || spec.max_chars > 300) {
    input = <textarea id={id} aria-describedby={helpId} rows={2} value={value} maxLength={spec.max_chars} onChange={(e) => onChange(e.target.value)} />;
  } else {
    input = <input id={id} aria-describedby={helpId} type={spec.kind === "url" ? "url" : "text"} value={value} maxLength={spec.max_chars} onChange={(e) => onChange(e.target.value)} />;
  }
  const range = spec.low != null || spec.high != null ? ` (${spec.low ?? "…"} to ${spec.high ?? "…"})` : "";
  return (
    <div className={dirty ? "field dirty" : "field"}>
      <label htmlFor={id}>{label}</label>
      {input}
      <p id={helpId} className="muted help">{spec.help}</p>
      <span className="muted hint">
        {spec.kind}
        {range}
        {spec.default != null && spec.default !== "" && !spec.secret ? ` · default ${spec.default}` : ""}
      </span>
    </div>
  );
}
