// Getting a session's result out: its branch, a Commit button with the
// message drafted from the last turn's final message, a Push button that
// sends the branch to the environment's repository, and, where that is on a
// known forge, a link to open a pull request; shown once the session has a
// work tree (one whose setup failed never has).

import { v1 } from "./api.js";
import { announce, h } from "./dom.js";

/** Session states in which the work tree is busy: a turn runs or it is being made. */
const BUSY = new Set(["booting", "running"]);
/** A commit subject's length, at most, as git's tools show it whole. */
const SUBJECT_CHARS = 72;

export class ResultPanel {
  /**
   * `path(rest)` is the session's API path with `rest` after it;
   * `messages()` the conversation's messages, to draft the message from.
   */
  constructor({ path, messages }) {
    this.path = path;
    this.messages = messages;
    this.branch = h("code", { class: "branch-name" });
    this.base = h("span", { class: "muted" });
    this.message = h("textarea", { id: "commit-message", name: "commit-message", rows: 3 });
    // The draft follows the last turn until the user writes their own.
    this.message.addEventListener("input", () => { this.edited = this.message.value.trim() !== ""; });
    this.commitButton = h("button", { type: "submit", text: "Commit" });
    this.target = h("input", { id: "push-branch", name: "push-branch", type: "text", autocomplete: "off", spellcheck: false });
    this.pushButton = h("button", { type: "button", text: "Push", onclick: () => this.push() });
    this.status = h("p", { class: "muted result-status", role: "status" });
    this.problem = h("p", { class: "problem", role: "alert", hidden: true });
    this.pullRequest = h("a", { class: "pull-request", target: "_blank", rel: "noopener noreferrer", text: "Open a pull request", hidden: true });
    // Hidden until the session shows it has a work tree (update).
    this.element = h("section", { class: "result", "aria-label": "Result", hidden: true },
      h("p", { class: "result-branch" }, "Branch ", this.branch, " ", this.base),
      h("form", { class: "commit-form", onsubmit: (event) => { event.preventDefault(); this.commit(); } },
        h("label", { for: "commit-message", text: "Commit message" }),
        this.message,
        h("div", { class: "result-actions" }, this.commitButton)),
      h("div", { class: "push-form" },
        h("label", { for: "push-branch", text: "Branch in the repository" }),
        h("div", { class: "result-actions" }, this.target, this.pushButton)),
      this.problem, this.status, this.pullRequest);
  }

  /** Shows `session`'s branch and what can be done now. */
  update(session) {
    if (!session) return;
    const branchChanged = this.session?.branch_name !== session.branch_name;
    this.session = session;
    this.branch.textContent = session.branch_name;
    this.base.textContent = session.base_branch ? `from ${session.base_branch}` : "";
    if (branchChanged || !this.target.value.trim()) this.target.value = session.branch_name;
    // Without a work tree (not made yet, or never: its setup failed) there
    // is nothing to commit or push; a failed session's panel says why.
    this.element.hidden = !session.workspace;
    const busy = BUSY.has(session.status);
    this.commitButton.disabled = busy || this.working;
    this.pushButton.disabled = busy || this.working;
    this.element.classList.toggle("busy", busy);
    // A draft already committed is not offered again; the next turn's is.
    const drafted = draft(this.messages());
    if (!this.edited && drafted !== this.committedDraft) this.message.value = drafted;
  }

  async commit() {
    await this.act("Couldn't commit", async () => {
      const committed = await v1(this.path("/commit"), { method: "POST", body: { message: this.message.value } });
      this.committedDraft = draft(this.messages());
      this.edited = false;
      this.message.value = "";
      return `Committed ${committed.commit.slice(0, 12)} on ${committed.branch}.`;
    });
  }

  async push() {
    await this.act("Couldn't push", async () => {
      const body = {};
      const target = this.target.value.trim();
      if (target && target !== this.session.branch_name) body.branch = target;
      const pushed = await v1(this.path("/push"), { method: "POST", body });
      if (pushed.pull_request_url) this.pullRequest.href = pushed.pull_request_url;
      this.pullRequest.hidden = !pushed.pull_request_url;
      const left = pushed.uncommitted_changes ? " Uncommitted changes stayed behind: commit them, then push again." : "";
      return `Pushed ${pushed.branch} to ${pushed.repository} as ${pushed.pushed_as}.${left}`;
    });
  }

  /** Runs `request` with the buttons off; shows what it says, or why it failed. */
  async act(failure, request) {
    this.problem.hidden = true;
    this.working = true;
    this.update(this.session);
    try {
      const said = await request();
      this.status.textContent = said;
      announce(said);
    } catch (error) {
      this.problem.textContent = `${failure}: ${error.message}`;
      this.problem.hidden = false;
    } finally {
      this.working = false;
      this.update(this.session);
    }
  }
}

/**
 * A commit message from the last turn's final message: its first line
 * (markdown marks dropped, cut to a subject's length), a blank line, the rest.
 */
export function draft(messages) {
  const turns = [...messages]
    .filter((message) => message.type === "assistant" && message.turn?.result?.final_message)
    .sort((a, b) => (a.sequence ?? Infinity) - (b.sequence ?? Infinity));
  const text = turns.at(-1)?.turn.result.final_message.trim();
  if (!text) return "";
  const lines = text.split("\n");
  const first = lines.findIndex((line) => line.trim());
  let subject = lines[first].replace(/^\s*(#+|[-*>]|\d+[.)])\s+/, "").replaceAll(/[*`_]{1,2}/g, "").trim();
  if (subject.length > SUBJECT_CHARS) subject = `${subject.slice(0, SUBJECT_CHARS - 1).trimEnd()}…`;
  const body = lines.slice(first + 1).join("\n").trim();
  return body ? `${subject}\n\n${body}` : subject;
}
