// What the app shows of a session's or a task's state, at a glance:
// running, waiting (for a message), needs someone, failed or done. The API
// keeps the spec's statuses (a session is booting, running, waiting for a
// turn slot, idle or closed, with a close reason); this is the one place
// that reads them into what a person wants to know.

import { h } from "./dom.js";

/** Close reasons that mean something went wrong: the session failed. */
const FAILURES = new Set([
  "setup_failure",
  "vm_failure",
  "snapshot_failure",
  "turn_failure",
  "resource_exhausted",
  "waiting_timeout",
]);

/** Session statuses in which work is under way (a turn, its workspace, its queue). */
const BUSY = new Set(["booting", "running", "waiting"]);

/** Each shown state's words. */
const LABELS = {
  running: "running",
  waiting: "waiting",
  needs_someone: "needs someone",
  failed: "failed",
  done: "done",
};

/** Each shown state's longer explanation, for a title or a screen reader. */
const MEANINGS = {
  running: "A turn runs, or is about to",
  waiting: "Waiting for your message",
  needs_someone: "Nobody owns it yet: take it",
  failed: "It failed: the reason is on the task",
  done: "Done: the session is closed",
};

/** A session's shown state: from its `status` and `close_reason`. */
export function sessionState({ status, close_reason: reason }) {
  if (BUSY.has(status)) return "running";
  if (FAILURES.has(reason)) return "failed";
  if (status === "closed") return "done";
  return "waiting";
}

/**
 * A task's shown state: its newest session's, and "needs someone" when it
 * waits for a message and nobody owns it.
 */
export function taskState(task) {
  const state = task.session_status
    ? sessionState({ status: task.session_status, close_reason: task.session_close_reason })
    : "waiting";
  return state === "waiting" && !task.owner ? "needs_someone" : state;
}

/** The chip that shows `state`, as the list, the task and its sessions show it. */
export function stateChip(state) {
  return h("span", { class: `chip state state-${state}`, "data-state": state, title: MEANINGS[state], text: LABELS[state] });
}

/** A state's words. */
export function stateLabel(state) {
  return LABELS[state];
}
