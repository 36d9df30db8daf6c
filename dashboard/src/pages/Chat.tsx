import { useState } from "react";
import { Link } from "react-router-dom";
import { api, unwrap, type Schemas } from "../api/client";
import { Page, Show } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

type Turn = { role: "user" | "assistant"; content: string; sources?: Schemas["ChatSource"][] };

export function Chat() {
  const namespace = useNamespace();
  const settings = useLoad(() => unwrap(api.GET("/api/settings")), []);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [conversation, setConversation] = useState<string | null>(null);

  const send = async () => {
    const message = draft.trim();
    if (!message) return;
    setBusy(true);
    setError(null);
    setDraft("");
    const history = turns.map(({ role, content }) => ({ role, content }));
    setTurns((t) => [...t, { role: "user", content: message }]);
    try {
      const reply = await unwrap(
        api.POST("/api/chat", { body: { message, history, namespace: namespace ?? null, conversation_id: conversation } }),
      );
      setConversation(reply.conversation_id);
      setTurns((t) => [...t, { role: "assistant", content: reply.response, sources: reply.sources }]);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="Chat">
      <Show state={settings}>
        {(values) =>
          !values["ai.provider"] ? (
            <p className="notice">
              No language model is configured. Set <code>ai.provider</code> and <code>ai.api_key</code> in{" "}
              <Link to="/settings">Settings</Link> to chat with your memories.
            </p>
          ) : (
            <>
              <ol className="chat" aria-live="polite">
                {turns.map((t, i) => (
                  <li key={i} className={`turn ${t.role}`}>
                    <p>{t.content}</p>
                    {t.sources && t.sources.length > 0 && (
                      <p className="muted">
                        Sources:{" "}
                        {t.sources.map((s) => (
                          <Link key={s.id} to={`/memory/${s.id}`} title={s.preview}>
                            [{s.id.slice(-6)}]{" "}
                          </Link>
                        ))}
                      </p>
                    )}
                  </li>
                ))}
              </ol>
              {error && <p className="error" role="alert">{error}</p>}
              <form
                className="toolbar"
                onSubmit={(e) => {
                  e.preventDefault();
                  void send();
                }}
              >
                <label className="grow">
                  <span className="sr-only">Message</span>
                  <input value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="Ask about what you remember…" disabled={busy} />
                </label>
                <button type="submit" className="primary" disabled={busy}>
                  {busy ? "Thinking…" : "Send"}
                </button>
              </form>
            </>
          )
        }
      </Show>
    </Page>
  );
}
