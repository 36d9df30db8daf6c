// Text for the places React's escaping does not reach: a third-party widget that writes what
// it is given as HTML (force-graph's hover tooltip does, through float-tooltip). Every
// character that means markup is escaped, so a name such as `<img src=x onerror=…>` shows as
// those characters and never becomes an element. Anything a writer controls (entity names,
// relationship kinds, memory text, tags, titles, metadata) goes through here before such a
// widget sees it; the page's Content-Security-Policy is the second line, not the first.

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** `text` as HTML that displays exactly `text`. */
export function textLabel(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}
