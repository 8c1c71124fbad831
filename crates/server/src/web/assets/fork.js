// Fork on a turn's block: a small form under the block (another harness,
// a first message) that makes a new session of the task from the turn's end
// and opens it.

import { accountPath, v1 } from "./api.js";
import { announce, h } from "./dom.js";

/**
 * The Fork button of a turn's block. `turn()` gives the block's turn now;
 * `taskId` and `session()` name where it is.
 */
export function forkButton({ taskId, session, turn }) {
  const button = h("button", {
    type: "button",
    class: "block-fork",
    text: "Fork",
    title: "Start a new session from the end of this turn: its files and the conversation up to here",
    "aria-expanded": "false",
    onclick: () => {
      const open = button.nextElementSibling?.classList.contains("fork-form");
      if (open) return closeForm(button);
      button.after(forkForm({ taskId, session: session(), turnId: turn().turn_id, button }));
      button.setAttribute("aria-expanded", "true");
      button.nextElementSibling.querySelector("textarea").focus();
    },
  });
  return button;
}

function closeForm(button) {
  button.nextElementSibling?.remove();
  button.setAttribute("aria-expanded", "false");
  button.focus();
}

let nextId = 0;

function forkForm({ taskId, session, turnId, button }) {
  const id = `fork-${nextId++}`;
  const harness = h("input", { id: `${id}-harness`, name: "harness", value: session.harness, spellcheck: false });
  const message = h("textarea", { id: `${id}-message`, name: "message", rows: 2, placeholder: "Try it another way…" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary", text: "Fork here" });
  return h("form", {
    class: "fork-form",
    "aria-label": "Fork from this turn",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      problem.hidden = true;
      const body = { turn_id: turnId };
      if (harness.value.trim() && harness.value.trim() !== session.harness) body.harness = harness.value.trim();
      if (message.value.trim()) body.message = message.value.trim();
      try {
        const path = accountPath(`/tasks/${encodeURIComponent(taskId)}/sessions/${encodeURIComponent(session.id)}/fork`);
        const fork = await v1(path, { method: "POST", body });
        announce("Forked: the new session opens");
        location.hash = `#/tasks/${encodeURIComponent(taskId)}/sessions/${encodeURIComponent(fork.id)}`;
      } catch (error) {
        problem.textContent = `Couldn't fork: ${error.message}`;
        problem.hidden = false;
        submit.disabled = false;
      }
    },
  },
  h("label", { for: harness.id, text: "Harness" }),
  harness,
  h("label", { for: message.id, text: "First message (optional)" }),
  message,
  problem,
  h("div", { class: "fork-actions" },
    h("button", { type: "button", text: "Cancel", onclick: () => closeForm(button) }),
    submit));
}
