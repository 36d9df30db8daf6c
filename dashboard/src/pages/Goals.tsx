import { useState } from "react";
import { api, unwrap, type Goal } from "../api/client";
import { useAccess } from "../auth";
import { Page, Show, when } from "../components/ui";
import { useLoad, useNamespace } from "../hooks";

const STATUSES = ["active", "completed", "stalled", "abandoned"] as const;
const PRIORITIES = ["low", "medium", "high", "critical"] as const;

export function Goals() {
  const namespace = useNamespace();
  const { canWrite } = useAccess();
  const goals = useLoad(
    () => unwrap(api.GET("/api/goals", { params: { query: namespace ? { namespace } : {} } })),
    [namespace],
  );
  const [open, setOpen] = useState<string | null>(null);
  const [title, setTitle] = useState("");
  const [error, setError] = useState<string | null>(null);
  const fail = (e: unknown) => setError(e instanceof Error ? e.message : String(e));

  return (
    <Page title="Goals">
      {canWrite && (
        <form
          className="toolbar"
          aria-label="New goal"
          onSubmit={(e) => {
            e.preventDefault();
            unwrap(api.POST("/api/goals", { body: { title, ...(namespace ? { namespace } : {}) } }))
              .then(() => {
                setTitle("");
                goals.reload();
              })
              .catch(fail);
          }}
        >
          <label className="grow">
            <span className="sr-only">New goal title</span>
            <input required placeholder="A new goal…" value={title} onChange={(e) => setTitle(e.target.value)} />
          </label>
          <button type="submit" className="primary">Add goal</button>
        </form>
      )}
      {error && <p className="error" role="alert">{error}</p>}
      <Show state={goals}>
        {(reply) =>
          reply.results.length ? (
            <ul className="goal-list">
              {reply.results.map((g) => (
                <li key={g.id} className="card">
                  <button type="button" className="link" aria-expanded={open === g.id} onClick={() => setOpen(open === g.id ? null : g.id)}>
                    {g.title}
                  </button>{" "}
                  <span className={`tag status-${g.status}`}>{g.status}</span> <span className="tag">{g.priority}</span>
                  <Progress goal={g} />
                  {open === g.id && <GoalDetail id={g.id} canWrite={canWrite} onChanged={goals.reload} onError={fail} />}
                </li>
              ))}
            </ul>
          ) : (
            <p className="empty">No goals yet.</p>
          )
        }
      </Show>
    </Page>
  );
}

function Progress({ goal }: { goal: Goal }) {
  const total = goal.milestones.length;
  const done = goal.milestones.filter((m) => m.status === "completed").length;
  const share = total ? done / total : goal.status === "completed" ? 1 : 0;
  return (
    <div className="progress" aria-label={`${done} of ${total} milestones done`}>
      <progress max={1} value={share} /> <span className="muted">{done}/{total} milestones · {goal.progress_count} progress notes</span>
    </div>
  );
}

function GoalDetail({ id, canWrite, onChanged, onError }: { id: string; canWrite: boolean; onChanged: () => void; onError: (e: unknown) => void }) {
  const path = { params: { path: { goal_id: id } } };
  const goal = useLoad(() => unwrap(api.GET("/api/goals/{goal_id}", path)), [id]);
  const [milestone, setMilestone] = useState("");
  const [editing, setEditing] = useState(false);
  const [note, setNote] = useState("");
  const changed = () => {
    goal.reload();
    onChanged();
  };
  return (
    <Show state={goal}>
      {(g) => (
        <div className="goal-detail">
          {editing ? (
            <GoalForm
              description={g.description ?? ""}
              deadline={g.deadline ?? null}
              onCancel={() => setEditing(false)}
              onSave={(body) =>
                unwrap(api.PATCH("/api/goals/{goal_id}", { ...path, body }))
                  .then(() => {
                    setEditing(false);
                    changed();
                  })
                  .catch(onError)
              }
            />
          ) : (
            <>
              {g.description && <p className="goal-description">{g.description}</p>}
              <p className="muted">Created {when(g.created_at)}{g.deadline ? ` · due ${day(g.deadline)}` : ""}</p>
            </>
          )}
          {canWrite && !editing && (
            <div className="toolbar">
              <label>
                Status
                <select
                  value={g.status}
                  onChange={(e) =>
                    unwrap(api.PATCH("/api/goals/{goal_id}", { ...path, body: { status: e.target.value as (typeof STATUSES)[number] } })).then(changed).catch(onError)
                  }
                >
                  {STATUSES.map((s) => (
                    <option key={s}>{s}</option>
                  ))}
                </select>
              </label>
              <label>
                Priority
                <select
                  value={g.priority}
                  onChange={(e) =>
                    unwrap(api.PATCH("/api/goals/{goal_id}", { ...path, body: { priority: e.target.value as (typeof PRIORITIES)[number] } })).then(changed).catch(onError)
                  }
                >
                  {PRIORITIES.map((s) => (
                    <option key={s}>{s}</option>
                  ))}
                </select>
              </label>
              <button type="button" onClick={() => setEditing(true)}>Edit goal</button>
              <button
                type="button"
                className="danger"
                onClick={() => {
                  if (!window.confirm(`Delete the goal “${g.title}” with its milestones and progress notes? This cannot be undone.`)) return;
                  unwrap(api.DELETE("/api/goals/{goal_id}", path)).then(onChanged).catch(onError);
                }}
              >
                Delete goal
              </button>
            </div>
          )}
          <h3>Milestones</h3>
          <ul className="milestones">
            {g.milestones.map((m) => (
              <li key={m.id}>
                <label>
                  <input
                    type="checkbox"
                    checked={m.status === "completed"}
                    disabled={!canWrite}
                    onChange={(e) =>
                      unwrap(
                        api.PATCH("/api/goals/{goal_id}/milestones/{milestone_id}", {
                          params: { path: { goal_id: id, milestone_id: m.id } },
                          body: { status: e.target.checked ? "completed" : "pending" },
                        }),
                      )
                        .then(changed)
                        .catch(onError)
                    }
                  />{" "}
                  {m.title}
                </label>
              </li>
            ))}
          </ul>
          {canWrite && (
            <form
              className="toolbar"
              aria-label="Add milestone"
              onSubmit={(e) => {
                e.preventDefault();
                unwrap(api.POST("/api/goals/{goal_id}/milestones", { ...path, body: { title: milestone } }))
                  .then(() => {
                    setMilestone("");
                    changed();
                  })
                  .catch(onError);
              }}
            >
              <input required placeholder="New milestone" aria-label="New milestone" value={milestone} onChange={(e) => setMilestone(e.target.value)} />
              <button type="submit">Add milestone</button>
            </form>
          )}
          <h3>Progress</h3>
          <ul>
            {(g.progress ?? []).map((p) => (
              <li key={p.id}>
                <span className="muted">{when(p.created_at)}</span> {p.content}
              </li>
            ))}
          </ul>
          {canWrite && (
            <form
              className="toolbar"
              aria-label="Log progress"
              onSubmit={(e) => {
                e.preventDefault();
                unwrap(api.POST("/api/goals/{goal_id}/progress", { ...path, body: { content: note } }))
                  .then(() => {
                    setNote("");
                    changed();
                  })
                  .catch(onError);
              }}
            >
              <input required placeholder="What moved forward?" aria-label="Progress note" value={note} onChange={(e) => setNote(e.target.value)} />
              <button type="submit">Log progress</button>
            </form>
          )}
        </div>
      )}
    </Show>
  );
}

/** The date part of an ISO date-time, as a date field shows it. */
const isoDay = (iso: string | null): string => (iso ? iso.slice(0, 10) : "");
const day = (iso: string): string => new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium", timeZone: "UTC" });

function GoalForm({
  description,
  deadline,
  onSave,
  onCancel,
}: {
  description: string;
  deadline: string | null;
  onSave: (body: { description: string; deadline: string | null }) => void;
  onCancel: () => void;
}) {
  const [text, setText] = useState(description);
  const [due, setDue] = useState(isoDay(deadline));
  return (
    <form
      className="card form"
      aria-label="Edit goal"
      onSubmit={(e) => {
        e.preventDefault();
        // A deadline is a day; stored as that day's midnight UTC. Empty clears it.
        onSave({ description: text, deadline: due ? `${due}T00:00:00Z` : null });
      }}
    >
      <label>
        Description
        <textarea rows={3} maxLength={20000} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <label>
        Deadline
        <input type="date" value={due} onChange={(e) => setDue(e.target.value)} />
      </label>
      <div className="actions">
        <button type="submit" className="primary">Save goal</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
