// A task's sessions side by side: one column each (tabs on a narrow
// screen) with its status, harness, turns, time, cost, diffstat and last
// reply; the files that differ between them; and the patch between two.

import { accountPath, call, v1 } from "./api.js";
import { diffView } from "./diff.js";
import { diffstat, duration, h, totals } from "./dom.js";

/** Shows the comparison of task `taskId`'s sessions; returns what stops the page. */
export function showCompare(main, taskId) {
  let stopped = false;
  main.replaceChildren(h("p", { class: "muted", text: "Comparing the sessions…" }));
  const taskPath = accountPath(`/tasks/${encodeURIComponent(taskId)}`);
  Promise.all([v1(taskPath), v1(`${taskPath}/compare`)]).then(
    ([task, comparison]) => {
      if (!stopped) render(main, taskId, taskPath, task, comparison);
    },
    (error) => {
      if (!stopped) main.replaceChildren(h("p", { class: "problem", role: "alert", text: `Couldn't compare the sessions: ${error.message}` }));
    },
  );
  return () => { stopped = true; };
}

function render(main, taskId, taskPath, task, comparison) {
  document.title = `Compare · ${task.title || "Untitled task"} — cinch`;
  const sessions = comparison.sessions;
  const back = `#/tasks/${encodeURIComponent(taskId)}`;
  const columns = sessions.map((row, at) => column(taskId, sessions, row, at));
  // On a narrow screen one column shows at a time, picked by these tabs.
  const tabs = h("div", { class: "compare-tabs", role: "tablist", "aria-label": "Sessions" },
    sessions.map((row, at) => h("button", {
      type: "button",
      role: "tab",
      id: `compare-tab-${at}`,
      "aria-controls": `compare-column-${at}`,
      "aria-selected": String(at === 0),
      text: label(row, at),
      onclick: () => pick(at),
    })));
  const pick = (chosen) => {
    tabs.querySelectorAll("[role=tab]").forEach((tab, at) => tab.setAttribute("aria-selected", String(at === chosen)));
    columns.forEach((element, at) => element.classList.toggle("picked", at === chosen));
  };
  pick(0);
  const grid = h("div", { class: "compare-columns" }, columns);
  // Through the CSSOM: the page's policy refuses style attributes.
  grid.style.setProperty("--columns", String(Math.max(sessions.length, 1)));
  main.replaceChildren(
    h("p", {}, h("a", { href: back, text: "← Task" })),
    h("header", { class: "task-head" },
      h("h1", { text: `Compare: ${task.title || "Untitled task"}` }),
      h("p", { class: "muted", text: `${sessions.length} session${sessions.length === 1 ? "" : "s"}` })),
    tabs,
    grid,
    differing(comparison.differing_files),
    pairDiff(taskPath, sessions),
  );
}

function label(row, at) {
  return `${at + 1}. ${row.session.harness}`;
}

function column(taskId, sessions, row, at) {
  const session = row.session;
  const facts = [
    ["Status", h("span", { class: `chip status-${session.status}`, text: session.status })],
    ["Runs", [session.harness, session.harness_model, session.harness_effort].filter(Boolean).join(" · ")],
    ["Turns", String(row.turns)],
    ["Time", duration(row.duration_ms)],
    ["Cost", totals(session.usage) ?? "none yet"],
    ["Changes", changes(row.diffstat)],
  ];
  if (session.forked_from) facts.push(["Forked from", source(taskId, sessions, session.forked_from)]);
  return h("section", {
    class: "compare-column",
    id: `compare-column-${at}`,
    role: "tabpanel",
    "aria-labelledby": `compare-heading-${at}`,
    "data-session": session.id,
  },
  h("h2", { id: `compare-heading-${at}` }, sessionLink(taskId, session.id, label(row, at))),
  h("dl", { class: "metadata" }, facts.flatMap(([term, value]) => [h("dt", { text: term }), h("dd", {}, value)])),
  h("h3", { text: "Last reply" }),
  h("p", { class: "compare-reply", text: row.last_reply ?? "No reply yet." }));
}

function sessionLink(taskId, sessionId, text) {
  return h("a", { href: `#/tasks/${encodeURIComponent(taskId)}/sessions/${encodeURIComponent(sessionId)}`, text });
}

/** The session's diffstat, its changed files listed under it. */
function changes(stat) {
  if (!stat) return "no tree to compare yet";
  const files = stat.files_changed ?? [];
  return [
    diffstat(stat),
    files.length
      ? h("ul", { class: "files" }, files.map((file) =>
        h("li", {}, h("code", { text: file.path }), ` (+${file.insertions} −${file.deletions})`)))
      : null,
  ];
}

/** The session a fork came from: its column's name when it is compared here too. */
function source(taskId, sessions, forkedFrom) {
  const at = sessions.findIndex((row) => row.session.id === forkedFrom.session_id);
  return at < 0
    ? sessionLink(taskId, forkedFrom.session_id, "another session")
    : sessionLink(taskId, forkedFrom.session_id, label(sessions[at], at));
}

function differing(files) {
  return h("section", { class: "compare-differing", "aria-label": "Files that differ" },
    h("h2", { text: "Files that differ between the sessions" }),
    files.length
      ? h("ul", { class: "files" }, files.map((file) => h("li", {}, h("code", { text: file }))))
      : h("p", { class: "muted", text: "None: the sessions' trees are the same." }));
}

/** Two pickers and the patch from one session's tree to the other's. */
function pairDiff(taskPath, sessions) {
  const picker = (id, chosen) => h("select", { id, name: id },
    sessions.map((row, at) => h("option", { value: row.session.id, text: label(row, at), selected: at === chosen })));
  const from = picker("compare-a", 0);
  const to = picker("compare-b", Math.min(1, sessions.length - 1));
  const out = h("div", { class: "compare-patch", "aria-live": "polite" });
  const show = h("button", { type: "submit", class: "primary", text: "Show the diff" });
  return h("form", {
    class: "compare-pair",
    "aria-label": "Diff two sessions",
    onsubmit: (event) => {
      event.preventDefault();
      const query = `a=${encodeURIComponent(from.value)}&b=${encodeURIComponent(to.value)}`;
      const load = (context) => call(`/v1${taskPath}/compare/diff?${query}&context=${context}`, { text: true });
      out.replaceChildren(diffView(load, { empty: "No differences." }));
    },
  },
  h("h2", { text: "Diff two sessions" }),
  h("div", { class: "compare-pickers" },
    h("label", { for: from.id, text: "From" }), from,
    h("label", { for: to.id, text: "To" }), to,
    show),
  out);
}
