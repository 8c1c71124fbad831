// A new session on a task: another attempt, on a branch of its own, with a
// first message. Its harness, model and effort are its agent's (another
// harness is a fork of a session, not a new one).

import { v1 } from "./api.js";
import { h } from "./dom.js";

/**
 * A "New session" button that opens a small form; `taskPath` is the task's
 * API path, `opened(session)` shows the session made.
 */
export function newSession(taskPath, opened) {
  const prompt = h("textarea", { id: "session-prompt", name: "session-prompt", rows: 3, required: true });
  const start = h("button", { type: "submit", class: "primary", text: "Start session" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const form = h("form", {
    class: "new-session",
    hidden: true,
    onsubmit: async (event) => {
      event.preventDefault();
      problem.hidden = true;
      start.disabled = true;
      try {
        const session = await v1(`${taskPath}/sessions`, { method: "POST", body: { prompt: prompt.value } });
        prompt.value = "";
        form.hidden = true;
        opened(session);
      } catch (error) {
        const fields = error.errors.map((fault) => `${fault.field}: ${fault.message}`);
        problem.textContent = `Couldn't start the session: ${fields.length ? fields.join("; ") : error.message}`;
        problem.hidden = false;
      } finally {
        start.disabled = false;
      }
    },
  },
  h("label", { for: "session-prompt", text: "First message" }),
  prompt,
  problem,
  h("div", { class: "form-actions" }, start,
    h("button", { type: "button", class: "link", text: "Cancel", onclick: () => { form.hidden = true; } })));
  const open = h("button", {
    type: "button",
    text: "New session",
    onclick: () => {
      form.hidden = false;
      prompt.focus();
    },
  });
  return h("div", { class: "new-session-box" }, open, form);
}
