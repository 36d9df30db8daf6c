import { useCallback, useEffect, useState } from "react";
import { createContext, useContext } from "react";

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change; a newer run's answer always wins over an older one's. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error: string | null; loading: boolean }>({
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load()
      .then((data) => current && setState({ data, error: null, loading: false }))
      .catch((e: unknown) =>
        current && setState({ error: e instanceof Error ? e.message : String(e), loading: false }),
      );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** The namespace picked in the header; undefined means every namespace the key may see. */
export const NamespaceContext = createContext<string | undefined>(undefined);
export const useNamespace = (): string | undefined => useContext(NamespaceContext);
