import { useState } from "react";
import { api, unwrap } from "../api/client";

export function NewMemory({ namespace, onStored }: { namespace: string | undefined; onStored: () => void }) {
  const [open, setOpen] = useState(false);
  const [content, setContent] = useState("");
  const [tags, setTags] = useState("");
  const [error, setError] = useState<string | null>(null);
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>New memory</button>
    );
  }
  return (
    <form
      className="card form"
      aria-label="New memory"
      onSubmit={(e) => {
        e.preventDefault();
        unwrap(
          api.POST("/api/memories", {
            body: {
              content,
              tags: tags.split(",").map((t) => t.trim()).filter(Boolean),
              ...(namespace ? { namespace } : {}),
            },
          }),
        )
          .then(() => {
            setContent("");
            setTags("");
            setOpen(false);
            setError(null);
            onStored();
          })
          .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)));
      }}
    >
      <label>
        Content
        <textarea required rows={4} value={content} onChange={(e) => setContent(e.target.value)} autoFocus />
      </label>
      <label>
        Tags (comma-separated)
        <input value={tags} onChange={(e) => setTags(e.target.value)} />
      </label>
      {error && <p className="error" role="alert">{error}</p>}
      <div className="actions">
        <button type="submit" className="primary">Store</button>
        <button type="button" onClick={() => setOpen(false)}>Cancel</button>
      </div>
    </form>
  );
}
