import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { api, unwrap } from "../api/client";
import { record } from "../api/shapes";
import { Page, Show, Stat } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

const bars = (counts: unknown) =>
  Object.entries(record(counts))
    .map(([name, value]) => ({ name, value: Number(value) }))
    .sort((a, b) => b.value - a.value);

export function Overview() {
  const namespace = useNamespace();
  const q = { params: { query: { namespace: namespace ?? null } } };
  const state = useLoad(async () => {
    const [stats, temporal] = await Promise.all([
      unwrap(api.GET("/api/stats", q)),
      unwrap(api.GET("/api/temporal-stats", { params: { query: { namespace: namespace ?? null, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone } } })),
    ]);
    return { stats: record(stats), temporal: record(temporal) };
  }, [namespace]);
  return (
    <Page title="Overview">
      <Show state={state}>
        {({ stats, temporal }) => (
          <>
            <div className="stats">
              <Stat label="memories" value={String(stats.total_memories ?? 0)} />
              <Stat label="active" value={String(stats.active_memories ?? 0)} />
              <Stat label="archived" value={String(stats.archived_memories ?? 0)} />
              <Stat label="entities" value={String(stats.total_entities ?? 0)} />
              <Stat label="tags" value={String(stats.total_tags ?? 0)} />
              <Stat label="days active" value={String(temporal.total_days ?? 0)} />
              <Stat label="per day" value={String(temporal.avg_per_day ?? 0)} />
              <Stat label="streak (longest)" value={`${String(temporal.streak_current ?? 0)} (${String(temporal.streak_longest ?? 0)})`} />
            </div>
            <div className="columns">
              <Chart title="By content type" data={bars(stats.by_content_type)} />
              <Chart title="By source" data={bars(stats.by_source)} />
            </div>
          </>
        )}
      </Show>
    </Page>
  );
}

export function Chart({ title, data, x = "name", y = "value" }: { title: string; data: object[]; x?: string; y?: string }) {
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {data.length === 0 ? (
        <p className="muted">No data yet.</p>
      ) : (
        <ResponsiveContainer width="100%" height={220}>
          <BarChart data={data}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--line)" />
            <XAxis dataKey={x} stroke="var(--muted)" fontSize={12} />
            <YAxis stroke="var(--muted)" fontSize={12} allowDecimals={false} />
            <Tooltip contentStyle={{ background: "var(--card)", border: "1px solid var(--line)" }} />
            <Bar dataKey={y} fill="var(--accent)" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      )}
    </figure>
  );
}
