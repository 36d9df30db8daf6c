import { useNavigate } from "react-router-dom";

export interface Spoke {
  key: string;
  label: string;
  href: string;
  /** The kind of link or relationship, written on its edge. */
  edge: string;
  direction: "outgoing" | "incoming";
}

const W = 480;
const H = 320;
const R = 120;
const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One node and its neighbours on a circle around it, each a link to its page. Every label is
 *  SVG text (React escapes it); the same neighbours are listed beside the graph as well. */
export function RadialGraph({ center, spokes, label }: { center: string; spokes: readonly Spoke[]; label: string }) {
  const navigate = useNavigate();
  const shown = spokes.slice(0, 16);
  const cx = W / 2;
  const cy = H / 2;
  return (
    <figure className="radial">
      <svg viewBox={`0 0 ${W} ${H}`} role="group" aria-label={label}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="var(--muted)" />
          </marker>
        </defs>
        {shown.map((s, i) => {
          const angle = (2 * Math.PI * i) / shown.length - Math.PI / 2;
          const x = cx + R * Math.cos(angle);
          const y = cy + R * 0.9 * Math.sin(angle);
          const [x1, y1, x2, y2] = s.direction === "outgoing" ? [cx, cy, x, y] : [x, y, cx, cy];
          // The arrow ends at the target's rim, not its centre.
          const len = Math.hypot(x2 - x1, y2 - y1) || 1;
          const ex = x2 - ((x2 - x1) / len) * 14;
          const ey = y2 - ((y2 - y1) / len) * 14;
          return (
            <g key={s.key} className="spoke">
              <line x1={x1} y1={y1} x2={ex} y2={ey} stroke="var(--line)" strokeWidth={1.5} markerEnd="url(#arrow)" />
              <text x={(cx + x) / 2} y={(cy + y) / 2 - 4} className="edge-label" textAnchor="middle">
                {short(s.edge, 18)}
              </text>
              <a
                href={s.href}
                aria-label={`${s.edge}: ${s.label}`}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(s.href);
                }}
              >
                <circle cx={x} cy={y} r={12} className="node" />
                <text x={x} y={y + 26} textAnchor="middle" className="node-label">
                  {short(s.label, 26)}
                </text>
              </a>
            </g>
          );
        })}
        <circle cx={cx} cy={cy} r={16} className="node center" />
        <text x={cx} y={cy + 32} textAnchor="middle" className="node-label center">
          {short(center, 30)}
        </text>
      </svg>
      {spokes.length > shown.length && <figcaption className="muted">The first {shown.length} of {spokes.length}.</figcaption>}
    </figure>
  );
}
