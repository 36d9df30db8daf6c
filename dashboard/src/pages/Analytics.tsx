import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { api, unwrap } from "../api/client";
import { Page, Show, Stat, when } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";
import { Chart } from "./Overview";
import { ConsolidationNow, ProducerQuality, RetrievalRegression } from "./AnalyticsPanels";

export function Analytics() {
  const namespace = useNamespace();
  const q = { params: { query: { namespace: namespace ?? null } } };
  const state = useLoad(async () => {
    const [summary, quality, access, tags, tagHealth, trend, misses, gaps] = await Promise.all([
      unwrap(api.GET("/api/analytics/summary", q)),
      unwrap(api.GET("/api/analytics/quality-distribution", q)),
      unwrap(api.GET("/api/analytics/access-distribution", q)),
      unwrap(api.GET("/api/analytics/tag-effectiveness", q)),
      unwrap(api.GET("/api/analytics/tag-health", q)),
      unwrap(api.GET("/api/analytics/quality-trend", q)),
      unwrap(api.GET("/api/analytics/search-misses", q)),
      unwrap(api.GET("/api/analytics/knowledge-gaps", { params: { query: { namespace: namespace ?? null, days: 14 } } })),
    ]);
    return { summary, quality, access, tags, tagHealth, trend, misses, gaps };
  }, [namespace]);

  return (
    <Page title="Analytics">
      <Show state={state}>
        {(a) => (
          <>
            <div className="stats">
              <Stat label="active memories" value={a.summary.totalActive} />
              <Stat label="never accessed" value={`${a.summary.neverAccessedPct.toFixed(0)}%`} />
              <Stat label="found useful" value={`${a.summary.usefulPct.toFixed(0)}%`} />
              <Stat label="median accesses" value={a.summary.medianAccessCount} />
              <Stat label="high quality" value={a.quality.highQuality} />
              <Stat label="low quality" value={a.quality.lowQuality} />
            </div>
            <div className="columns">
              <Chart title="Access distribution" data={a.access} x="label" y="count" />
              <Chart title="Tag effectiveness (memories per tag)" data={a.tags.slice(0, 12)} x="tag" y="memoryCount" />
            </div>
            <figure className="chart">
              <figcaption>Quality trend</figcaption>
              {a.trend.length === 0 ? (
                <p className="muted">No data yet.</p>
              ) : (
                <ResponsiveContainer width="100%" height={220}>
                  <LineChart data={[...a.trend].reverse()}>
                    <CartesianGrid strokeDasharray="3 3" stroke="var(--line)" />
                    <XAxis dataKey="period" stroke="var(--muted)" fontSize={12} />
                    <YAxis stroke="var(--muted)" fontSize={12} />
                    <Tooltip contentStyle={{ background: "var(--card)", border: "1px solid var(--line)" }} />
                    <Line dataKey="created" stroke="var(--accent)" isAnimationActive={false} />
                    <Line dataKey="neverAccessedPct" stroke="#f59e0b" isAnimationActive={false} />
                  </LineChart>
                </ResponsiveContainer>
              )}
            </figure>
            <h2>Tag health</h2>
            <p className="muted">
              {a.tagHealth.totalTags} tags, {a.tagHealth.mergeCount} merge suggestions.
            </p>
            {a.tagHealth.suggestions.length > 0 && (
              <table className="grid">
                <thead>
                  <tr>
                    <th>Merge</th>
                    <th>into</th>
                    <th>similarity</th>
                  </tr>
                </thead>
                <tbody>
                  {a.tagHealth.suggestions.map((s) => (
                    <tr key={`${s.fromTag}-${s.toTag}`}>
                      <td>{s.fromTag} ({s.fromCount})</td>
                      <td>{s.toTag} ({s.toCount})</td>
                      <td>{s.similarity.toFixed(2)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <div className="columns">
              <section>
                <h2>Search misses</h2>
                {a.misses.length === 0 ? (
                  <p className="muted">No searches came back empty-handed.</p>
                ) : (
                  <ul>
                    {a.misses.map((m) => (
                      <li key={m.query}>
                        “{m.query}” <span className="muted">×{m.count}, best score {m.avg_max_score.toFixed(2)}, last {when(m.last_seen)}</span>
                      </li>
                    ))}
                  </ul>
                )}
              </section>
              <section>
                <h2>Knowledge gaps (14 days)</h2>
                {a.gaps.length === 0 ? (
                  <p className="muted">No gaps found.</p>
                ) : (
                  <ul>
                    {a.gaps.map((g) => (
                      <li key={g.topic}>
                        <span className={`tag severity-${g.severity}`}>{g.severity}</span> {g.topic} <span className="muted">×{g.count}</span>
                      </li>
                    ))}
                  </ul>
                )}
              </section>
            </div>
          </>
        )}
      </Show>
      <ProducerQuality />
      <RetrievalRegression />
      <ConsolidationNow />
    </Page>
  );
}
