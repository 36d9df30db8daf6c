/** A word-level diff of two texts (longest common subsequence of their words): what the newer
 *  text dropped and what it added, shown as text in <del> and <ins>. */
export type Piece = { kind: "same" | "added" | "removed"; text: string };

// Beyond this many words on a side the table (n × m cells) grows too large for a browser tab.
export const MAX_WORDS = 1500;

export function wordDiff(before: string, after: string): Piece[] | null {
  const a = before.split(/(\s+)/).filter((w) => w !== "");
  const b = after.split(/(\s+)/).filter((w) => w !== "");
  if (a.length > MAX_WORDS * 2 || b.length > MAX_WORDS * 2) return null;
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the longest common run of a[i..] and b[j..], in one flat array.
  const lcs = new Uint16Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] =
        a[i] === b[j] ? (lcs[(i + 1) * (m + 1) + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * (m + 1) + j] ?? 0, lcs[i * (m + 1) + j + 1] ?? 0);
    }
  }
  const out: Piece[] = [];
  const push = (kind: Piece["kind"], text: string) => {
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += text;
    else out.push({ kind, text });
  };
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      push("same", a[i] ?? "");
      i++;
      j++;
    } else if ((lcs[(i + 1) * (m + 1) + j] ?? 0) >= (lcs[i * (m + 1) + j + 1] ?? 0)) {
      push("removed", a[i++] ?? "");
    } else {
      push("added", b[j++] ?? "");
    }
  }
  while (i < n) push("removed", a[i++] ?? "");
  while (j < m) push("added", b[j++] ?? "");
  return out;
}

export function WordDiff({ before, after }: { before: string; after: string }) {
  const pieces = wordDiff(before, after);
  if (pieces === null) return <p className="muted">Too long to compare word by word.</p>;
  return (
    <p className="diff content" aria-label="Word changes">
      {pieces.map((p, i) =>
        p.kind === "same" ? (
          <span key={i}>{p.text}</span>
        ) : p.kind === "added" ? (
          <ins key={i}>{p.text}</ins>
        ) : (
          <del key={i}>{p.text}</del>
        ),
      )}
    </p>
  );
}
