// The tasks list: newest first, all of them or those that need someone.

import { accountPath, call } from "./api.js";
import { ago, h, reconcile } from "./dom.js";
import { logo } from "./logos.js";
import { stateChip, taskState } from "./status.js";

/** The list refreshes this often while it is shown: there is no account-wide stream. */
const REFRESH_MS = 5000;

export function showTasks(main) {
  let filter = "all";
  let cursor = null;
  let extended = false; // pages past the first were loaded: a refresh would drop them
  const rows = new Map(); // task id → {key, element}
  const list = h("ul", { class: "task-list", "aria-label": "Tasks" });
  const more = h("button", { type: "button", text: "Load more", hidden: true, onclick: () => load({ append: true }) });
  const status = h("p", { class: "muted", role: "status" });
  const filters = ["all", "needs someone"].map((name) =>
    h("button", {
      type: "button",
      class: "toggle",
      "aria-pressed": String(name === filter),
      text: name === "all" ? "All" : "Needs someone",
      onclick: (event) => {
        filter = name;
        for (const button of filters) button.setAttribute("aria-pressed", String(button === event.currentTarget));
        load({ append: false });
      },
    }));

  /** The row of `task`, the one already shown when nothing in it changed. */
  const rowOf = (task) => {
    const key = JSON.stringify([task.title, task.status, task.last_message_preview, task.owner_name, task.harness, task.updated_at, task.binding_constraint, task.session_status, task.session_close_reason]);
    const known = rows.get(task.id);
    if (known?.key === key) return known.element;
    const element = row(task);
    rows.set(task.id, { key, element });
    return element;
  };

  let latest = 0; // the last load asked for: an older one answering late is dropped
  const load = async ({ append }) => {
    const query = new URLSearchParams();
    if (filter !== "all") query.set("owner", "none");
    if (append && cursor) query.set("cursor", cursor);
    const asked = ++latest;
    try {
      const page = await call(`/v1${accountPath("/tasks")}?${query}`);
      // A refresh or another filter was asked for meanwhile: this answer is stale.
      if (asked !== latest) return;
      cursor = page.meta?.next_cursor ?? null;
      extended = append;
      const elements = page.data.map(rowOf);
      reconcile(list, append ? [...list.children, ...elements] : elements);
      more.hidden = !cursor;
      status.textContent = list.children.length ? "" : "No tasks yet.";
    } catch (error) {
      if (asked === latest) status.textContent = `Couldn't load the tasks: ${error.message}`;
    }
  };

  document.title = "Tasks — cinch";
  main.replaceChildren(
    h("header", { class: "page-head" },
      h("h1", { text: "Tasks" }),
      h("a", { class: "button primary", href: "#/new", text: "New task" })),
    h("div", { class: "segmented", role: "group", "aria-label": "Show" }, filters),
    list,
    status,
    more,
  );
  load({ append: false });
  const timer = setInterval(() => {
    if (!extended) load({ append: false });
  }, REFRESH_MS);
  return () => clearInterval(timer);
}

function row(task) {
  return h("li", { class: "task-row", "data-task": task.id },
    h("a", { href: `#/tasks/${encodeURIComponent(task.id)}`, class: "task-link" },
      h("span", { class: "task-line" },
        task.harness ? logo(task.harness) : null,
        h("span", { class: "task-title", text: task.title || "Untitled task" }),
        stateChip(taskState(task))),
      // No preview yet: no second line, rather than a placeholder.
      task.last_message_preview ? h("span", { class: "task-preview", text: task.last_message_preview }) : null,
      h("span", { class: "task-meta muted" },
        h("span", { class: task.owner_name ? "owner" : "owner unowned", text: task.owner_name ?? "needs someone" }),
        task.harness ? ` · ${task.harness}` : "",
        ` · ${ago(task.updated_at)}`,
        retrying(task.binding_constraint))));
}

/** A task waiting for capacity: when it tries next. */
function retrying(constraint) {
  if (constraint?.kind !== "retrying") return null;
  return h("span", { class: "retrying", text: ` · waiting for capacity, next try in ${constraint.next_retry_seconds}s (${constraint.retries} so far)` });
}
