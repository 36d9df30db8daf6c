import { useEffect, useMemo, useRef, useState } from "react";
import ForceGraph2D from "react-force-graph-2d";
import { Link, useNavigate } from "react-router-dom";
import { api, unwrap } from "../api/client";
import { list, record, type Entity, type GraphAnalysis, type Relationship } from "../api/shapes";
import { Page, Show, Stat } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";
import { textLabel } from "../text";

// Distinct in both themes; community n gets PALETTE[n % length], entities in no community grey.
const PALETTE = ["#6d5dfc", "#16a34a", "#ea580c", "#0891b2", "#db2777", "#ca8a04", "#7c3aed", "#059669"];
const LONE = "#8a8f98";

interface Node {
  id: string;
  name: string;
  type: string;
  community: number | null;
  bridge: boolean;
  degree: number;
  x?: number;
  y?: number;
}

export function Graph() {
  const namespace = useNamespace();
  const navigate = useNavigate();
  const query = { params: { query: { namespace: namespace ?? null } } };
  const state = useLoad(async () => {
    const [graph, analysis] = await Promise.all([
      unwrap(api.GET("/api/entities/graph", query)),
      unwrap(api.GET("/api/entities/graph/analysis", { params: { query: { namespace: namespace ?? null, limit: 100 } } })),
    ]);
    return {
      entities: list<Entity>(record(graph).entities),
      relationships: list<Relationship>(record(graph).relationships),
      analysis: analysis as GraphAnalysis,
    };
  }, [namespace]);

  return (
    <Page title="Knowledge graph">
      <Show state={state}>
        {({ entities, relationships, analysis }) => (
          <GraphView entities={entities} relationships={relationships} analysis={analysis} onOpen={(id) => navigate(`/entities/${id}`)} />
        )}
      </Show>
    </Page>
  );
}

function GraphView({
  entities,
  relationships,
  analysis,
  onOpen,
}: {
  entities: Entity[];
  relationships: Relationship[];
  analysis: GraphAnalysis;
  onOpen: (id: string) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    setWidth(el.clientWidth);
    return () => observer.disconnect();
  }, []);

  const data = useMemo(() => {
    const community = new Map<string, number>();
    for (const c of analysis.communities ?? []) for (const m of c.members) community.set(m.id, c.id);
    const bridges = new Set((analysis.bridges ?? []).map((b) => b.id));
    const degree = new Map<string, number>();
    for (const r of relationships) {
      degree.set(r.source_id, (degree.get(r.source_id) ?? 0) + 1);
      degree.set(r.target_id, (degree.get(r.target_id) ?? 0) + 1);
    }
    const ids = new Set(entities.map((e) => e.id));
    const nodes: Node[] = entities.map((e) => ({
      id: e.id,
      name: e.name,
      type: e.type,
      community: community.get(e.id) ?? null,
      bridge: bridges.has(e.id),
      degree: degree.get(e.id) ?? 0,
    }));
    const links = relationships
      .filter((r) => ids.has(r.source_id) && ids.has(r.target_id))
      .map((r) => ({ source: r.source_id, target: r.target_id, label: r.relationship }));
    return { nodes, links };
  }, [entities, relationships, analysis]);

  const colour = (n: Node) => (n.community == null ? LONE : PALETTE[n.community % PALETTE.length] ?? LONE);
  const stats = analysis.stats;
  return (
    <>
      <div className="stats">
        <Stat label="entities" value={stats?.nodes ?? entities.length} />
        <Stat label="relationships" value={stats?.edges ?? relationships.length} />
        <Stat label="components" value={stats?.components ?? "—"} />
        <Stat label="communities" value={analysis.communities?.length ?? 0} />
        <Stat label="bridges" value={analysis.bridges?.length ?? 0} />
      </div>
      <p className="muted">
        Colour = community; a ringed node is a bridge (it joins parts of the graph). Drag to move, scroll to zoom, click to open.
      </p>
      <div className="graph-box" ref={box} aria-label="Entity graph" role="img">
        {data.nodes.length === 0 ? (
          <p className="empty">No entities yet.</p>
        ) : (
          <ForceGraph2D
            graphData={data}
            width={width}
            height={Math.max(320, Math.min(640, width * 0.7))}
            // The tooltip writes its label as HTML: names and kinds are the writer's text.
            nodeLabel={(n) => textLabel(`${(n as Node).name} (${(n as Node).type})`)}
            nodeVal={(n) => 1 + (n as Node).degree}
            nodeColor={(n) => colour(n as Node)}
            linkLabel={(l) => textLabel(String((l as { label: string }).label))}
            linkDirectionalArrowLength={3}
            onNodeClick={(n) => onOpen(String((n as Node).id))}
            nodeCanvasObjectMode={() => "after"}
            nodeCanvasObject={(raw, ctx, scale) => {
              const n = raw as Node;
              if (n.x == null || n.y == null) return;
              const r = 2 + Math.sqrt(1 + n.degree) * 2;
              if (n.bridge) {
                ctx.beginPath();
                ctx.arc(n.x, n.y, r + 2, 0, 2 * Math.PI);
                ctx.strokeStyle = "#f59e0b";
                ctx.lineWidth = 2 / scale;
                ctx.stroke();
              }
              if (scale > 1.2) {
                ctx.font = `${11 / scale}px sans-serif`;
                ctx.fillStyle = getComputedStyle(document.documentElement).getPropertyValue("--fg") || "#ddd";
                ctx.fillText(n.name, n.x + r + 1, n.y + 3 / scale);
              }
            }}
          />
        )}
      </div>
      {/* The same graph as lists: reachable by keyboard and screen readers. */}
      <div className="columns">
        <section>
          <h2>Communities</h2>
          {(analysis.communities ?? []).length === 0 && <p className="muted">None yet.</p>}
          <ul>
            {(analysis.communities ?? []).map((c) => (
              <li key={c.id}>
                <span className="swatch" style={{ background: PALETTE[c.id % PALETTE.length] }} /> {c.size} entities:{" "}
                {c.members.slice(0, 8).map((m, i) => (
                  <span key={m.id}>
                    {i > 0 && ", "}
                    <Link to={`/entities/${m.id}`}>{m.name}</Link>
                  </span>
                ))}
              </li>
            ))}
          </ul>
        </section>
        <section>
          <h2>Most connected</h2>
          {(analysis.centrality ?? []).length === 0 && <p className="muted">None yet.</p>}
          <ul className="centrality">
            {(analysis.centrality ?? []).slice(0, 15).map((c) => (
              <li key={c.id}>
                <Link to={`/entities/${c.id}`}>{c.name}</Link> <span className="muted">{c.type}, degree {c.degree}</span>
              </li>
            ))}
          </ul>
        </section>
        <section>
          <h2>Bridges</h2>
          {(analysis.bridges ?? []).length === 0 && <p className="muted">None yet.</p>}
          <ul>
            {(analysis.bridges ?? []).map((b) => (
              <li key={b.id}>
                <Link to={`/entities/${b.id}`}>{b.name}</Link> <span className="muted">betweenness {b.betweenness.toFixed(3)}, degree {b.degree}</span>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </>
  );
}
