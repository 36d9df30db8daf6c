import { lazy, StrictMode, Suspense, useState } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter, Route, Routes } from "react-router-dom";
import { AccessGate } from "./auth";
import { Layout } from "./components/Layout";
import { NamespaceContext } from "./hooks";
import { Entities } from "./pages/Entities";
import { Goals } from "./pages/Goals";
import { Memories } from "./pages/Memories";
import { Timeline } from "./pages/Timeline";
import { Trash } from "./pages/Trash";
import { Page } from "./components/ui";
import "./styles.css";

// The chart and graph libraries are most of the bundle: loaded with the pages that use them;
// so are the pages opened less often, to keep the first load small.
const Analytics = lazy(() => import("./pages/Analytics").then((m) => ({ default: m.Analytics })));
const Graph = lazy(() => import("./pages/Graph").then((m) => ({ default: m.Graph })));
const Maintenance = lazy(() => import("./pages/Maintenance").then((m) => ({ default: m.Maintenance })));
const MemoryDetail = lazy(() => import("./pages/MemoryDetail").then((m) => ({ default: m.MemoryDetail })));
const EntityDetail = lazy(() => import("./pages/EntityDetail").then((m) => ({ default: m.EntityDetail })));
const Settings = lazy(() => import("./pages/Settings").then((m) => ({ default: m.Settings })));
const Chat = lazy(() => import("./pages/Chat").then((m) => ({ default: m.Chat })));
const HealthPage = lazy(() => import("./pages/Health").then((m) => ({ default: m.HealthPage })));
const Skills = lazy(() => import("./pages/Skills").then((m) => ({ default: m.Skills })));
const Overview = lazy(() => import("./pages/Overview").then((m) => ({ default: m.Overview })));

const NS_STORAGE = "exocortex.namespace";

function App() {
  const [namespace, setNamespace] = useState<string | undefined>(() => sessionStorage.getItem(NS_STORAGE) ?? undefined);
  const pick = (ns: string | undefined) => {
    if (ns) sessionStorage.setItem(NS_STORAGE, ns);
    else sessionStorage.removeItem(NS_STORAGE);
    setNamespace(ns);
  };
  return (
    <AccessGate>
      <NamespaceContext.Provider value={namespace}>
        <Layout namespace={namespace} onNamespace={pick}>
          <Suspense fallback={<p className="muted">Loading…</p>}>
          <Routes>
            <Route path="/" element={<Memories />} />
            <Route path="/memory/:id" element={<MemoryDetail />} />
            <Route path="/overview" element={<Overview />} />
            <Route path="/entities" element={<Entities />} />
            <Route path="/entities/:id" element={<EntityDetail />} />
            <Route path="/graph" element={<Graph />} />
            <Route path="/timeline" element={<Timeline />} />
            <Route path="/goals" element={<Goals />} />
            <Route path="/skills" element={<Skills />} />
            <Route path="/analytics" element={<Analytics />} />
            <Route path="/maintenance" element={<Maintenance />} />
            <Route path="/trash" element={<Trash />} />
            <Route path="/chat" element={<Chat />} />
            <Route path="/settings" element={<Settings />} />
            <Route path="/status" element={<HealthPage />} />
            <Route path="*" element={<Page title="Not found"><p>No page here.</p></Page>} />
          </Routes>
          </Suspense>
        </Layout>
      </NamespaceContext.Provider>
    </AccessGate>
  );
}

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </StrictMode>,
  );
}
