import { useEffect, useState, type ReactNode } from "react";
import { NavLink, useLocation } from "react-router-dom";
import { useAccess } from "../auth";

export const NAV: ReadonlyArray<readonly [string, string]> = [
  ["/", "Memories"],
  ["/overview", "Overview"],
  ["/entities", "Entities"],
  ["/graph", "Graph"],
  ["/timeline", "Timeline"],
  ["/goals", "Goals"],
  ["/analytics", "Analytics"],
  ["/skills", "Skills"],
  ["/maintenance", "Maintenance"],
  ["/trash", "Trash"],
  ["/chat", "Chat"],
  ["/settings", "Settings"],
  ["/status", "Health"],
];

type Theme = "dark" | "light";
const THEME_STORAGE = "exocortex.theme";

function initialTheme(): Theme {
  const saved = localStorage.getItem(THEME_STORAGE);
  if (saved === "dark" || saved === "light") return saved;
  return window.matchMedia("(prefers-color-scheme: light)").matches ? "light" : "dark";
}

export function Layout({
  namespace,
  onNamespace,
  children,
}: {
  namespace: string | undefined;
  onNamespace: (ns: string | undefined) => void;
  children: ReactNode;
}) {
  const access = useAccess();
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem(THEME_STORAGE, theme);
  }, [theme]);
  useEffect(() => setMenuOpen(false), [location.pathname]);

  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="topbar">
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen((o) => !o)}
        >
          ☰<span className="sr-only"> Menu</span>
        </button>
        <span className="brand">Exocortex</span>
        <label className="ns-picker">
          <span className="sr-only">Namespace</span>
          <select
            value={namespace ?? ""}
            onChange={(e) => onNamespace(e.target.value || undefined)}
            aria-label="Namespace"
          >
            <option value="">{access.who.namespaces ? "all my namespaces" : "all namespaces"}</option>
            {access.namespaces.map((ns) => (
              <option key={ns} value={ns}>{ns}</option>
            ))}
          </select>
        </label>
        {!access.canWrite && <span className="badge" title="This key cannot change data">read-only</span>}
        <button
          type="button"
          onClick={() => setTheme(theme === "dark" ? "light" : "dark")}
          aria-label={`Switch to ${theme === "dark" ? "light" : "dark"} theme`}
        >
          {theme === "dark" ? "☀" : "☾"}
        </button>
        {access.who.keys_required && (
          <button type="button" onClick={access.signOut}>Sign out</button>
        )}
      </header>
      <nav id="nav" className={menuOpen ? "nav open" : "nav"} aria-label="Pages">
        <ul>
          {NAV.map(([to, label]) => (
            <li key={to}>
              <NavLink to={to} end={to === "/"}>{label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>{children}</main>
    </div>
  );
}
