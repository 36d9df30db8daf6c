// Who the caller is: asks for an API key when the gateway wants one (kept in sessionStorage
// for this tab only), then learns from GET /api/whoami whether it may write and which
// namespaces it may see. Pages read this to hide what the key cannot use.
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { api, apiKey, ApiError, unwrap, type WhoAmI } from "./api/client";

export interface Access {
  who: WhoAmI;
  canWrite: boolean;
  /** Namespaces to offer: the key's own, or every one the store has. */
  namespaces: string[];
  signOut: () => void;
}

const AccessContext = createContext<Access | null>(null);

export function useAccess(): Access {
  const access = useContext(AccessContext);
  if (!access) throw new Error("useAccess outside <AccessGate>");
  return access;
}

async function loadAccess(): Promise<Omit<Access, "signOut">> {
  const who = await unwrap(api.GET("/api/whoami"));
  let namespaces = who.namespaces ?? [];
  if (who.namespaces == null) {
    namespaces = (await unwrap(api.GET("/api/memories/namespaces"))).namespaces;
  }
  return { who, canWrite: who.can_write, namespaces };
}

export function AccessGate({ children }: { children: ReactNode }) {
  const [access, setAccess] = useState<Omit<Access, "signOut"> | null>(null);
  const [needKey, setNeedKey] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [draft, setDraft] = useState("");

  const load = useCallback(() => {
    const triedKey = apiKey.get() !== null;
    loadAccess()
      .then((a) => {
        setAccess(a);
        setNeedKey(false);
        setError(null);
      })
      .catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 401) {
          setError(triedKey ? e.message : null);
          apiKey.clear();
          setNeedKey(true);
        } else {
          setError(e instanceof Error ? e.message : String(e));
        }
      });
  }, []);

  useEffect(() => {
    load();
    const expired = () => {
      apiKey.clear();
      setAccess(null);
      setNeedKey(true);
    };
    window.addEventListener("exocortex:unauthorized", expired);
    return () => window.removeEventListener("exocortex:unauthorized", expired);
  }, [load]);

  const signOut = useCallback(() => {
    apiKey.clear();
    setAccess(null);
    setNeedKey(true);
  }, []);

  if (needKey) {
    return (
      <main className="gate">
        <form
          className="card gate-form"
          onSubmit={(e) => {
            e.preventDefault();
            apiKey.set(draft.trim());
            setDraft("");
            load();
          }}
        >
          <h1>Exocortex</h1>
          <p>This gateway asks for an API key. It is kept for this browser tab only.</p>
          <label>
            API key
            <input
              type="password"
              autoComplete="off"
              autoFocus
              required
              minLength={16}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
            />
          </label>
          {error && <p className="error" role="alert">{error}</p>}
          <button type="submit" className="primary">Sign in</button>
        </form>
      </main>
    );
  }
  if (!access) {
    return <main className="gate">{error ? <p className="error" role="alert">{error}</p> : <p>Loading…</p>}</main>;
  }
  return <AccessContext.Provider value={{ ...access, signOut }}>{children}</AccessContext.Provider>;
}
