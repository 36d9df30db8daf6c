import type { SearchResult } from "../api/client";

const SIGNALS = [
  "fused",
  "recency",
  "frequency",
  "tag",
  "graph",
  "neighbour",
  "usefulness",
  "valence",
  "quality",
  "goal_relevance",
  "boost",
  "metadata_penalty",
] as const;

/** Why a memory ranked where it did: its ranks in each retriever and each signal's share. */
export function ScoreBreakdown({ hit }: { hit: SearchResult }) {
  const b = hit.score_breakdown;
  const ranks = [
    ["vector", b.vector_rank],
    ["keyword", b.keyword_rank],
    ["graph", b.graph_rank],
  ] as const;
  return (
    <details className="score">
      <summary>
        score <strong>{hit.score.toFixed(3)}</strong>
        {ranks.map(([name, rank]) => rank != null && <span key={name} className="muted"> · {name} #{rank}</span>)}
      </summary>
      <table>
        <tbody>
          {SIGNALS.map((s) => (
            <tr key={s}>
              <th scope="row">{s.replace("_", " ")}</th>
              <td>{b[s].toFixed(4)}</td>
              <td className="bar-cell">
                <span className="bar" style={{ width: `${Math.min(100, Math.abs(b[s]) * 100)}%` }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
