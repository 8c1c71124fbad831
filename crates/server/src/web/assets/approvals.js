// Approvals in a session's conversation: a card for each request of the
// agent (a tool it wants to run, or a question it asks), kept live from the
// session's `approval.requested` and `approval.resolved` events. A card
// offers Allow once, Allow for this session and Deny with a note, or, for a
// question, its options and a text answer; once decided it says who decided
// what. The page title counts the requests that wait.

import { accountPath, v1, v1All } from "./api.js";
import { announce, h } from "./dom.js";

/** What each resolved status reads as. */
const OUTCOME = {
  allowed: "Allowed",
  denied: "Denied",
  answered: "Answered",
  cancelled: "Cancelled: the turn ended first",
};

/** A title with the count of waiting requests in front: `(2) Fix it — cinch`. */
function countedTitle(title, count) {
  const bare = title.replace(/^\(\d+\) /, "");
  return count ? `(${count}) ${bare}` : bare;
}

/**
 * Whether the card shows the request's input: not when the title says it
 * all, nor for a single question, whose options are the card's buttons.
 */
function shownInput(approval) {
  if (!approval.input || approval.input === approval.title) return false;
  if (approval.kind !== "question") return true;
  return approval.input.split("\n").filter((line) => !line.startsWith("- ")).length > 1;
}

/** The names of each account's members and agents, by id, once loaded. */
const names = new Map(); // account path → Promise<Map<id, name>>

/** Who decided, as people read it: a member's or agent's name, the policy, the deadline. */
async function nameOf(id) {
  if (id === "policy") return "a rule of the policy";
  if (id === "timeout") return "the deadline";
  const account = accountPath();
  if (!names.has(account)) {
    names.set(account, Promise.all([v1All(accountPath("/members")), v1All(accountPath("/agents"))])
      .then((lists) => new Map(lists.flat().map((who) => [who.id, who.name])))
      .catch(() => new Map()));
  }
  return (await names.get(account)).get(id) ?? id;
}

/**
 * The approval cards of one session. `element` goes below the
 * conversation; `onEvent` takes the session's live events.
 */
export class ApprovalCards {
  constructor(sessionId) {
    this.sessionId = sessionId;
    this.cards = new Map(); // approval id → {approval, element}
    this.element = h("ol", { class: "approvals", "aria-label": "Approvals" });
  }

  /** Shows the requests that wait now (those decided before the page opened are in the conversation). */
  async load() {
    const query = new URLSearchParams({ status: "pending", session_id: this.sessionId });
    const waiting = await v1All(accountPath(`/approvals?${query}`));
    // Oldest first, as the agent asked them.
    for (const approval of waiting.reverse()) this.show(approval);
  }

  onEvent(name, approval) {
    if (approval.session_id !== this.sessionId) return;
    if (name === "approval.requested") {
      this.show(approval);
      announce(`The agent asks: ${approval.title}`);
    } else if (name === "approval.resolved") {
      this.show(approval);
    }
  }

  /** Adds or updates the card of `approval`. */
  show(approval) {
    if (this.stopped) return;
    const known = this.cards.get(approval.id);
    // An older copy (an event replayed after a reconnect) never undoes a decision.
    if (known && known.approval.status !== "pending" && approval.status === "pending") return;
    const element = this.card(approval);
    if (known) known.element.replaceWith(element);
    else this.element.append(element);
    this.cards.set(approval.id, { approval, element });
    this.updateTitle();
  }

  get waiting() {
    return [...this.cards.values()].filter(({ approval }) => approval.status === "pending").length;
  }

  updateTitle() {
    document.title = countedTitle(document.title, this.waiting);
  }

  /** Clears the count from the title once the page is left. */
  stop() {
    this.stopped = true;
    this.cards.clear();
    document.title = countedTitle(document.title, 0);
  }

  card(approval) {
    const question = approval.kind === "question";
    const pending = approval.status === "pending";
    const problem = h("p", { class: "problem", role: "alert", hidden: true });
    const heading = question ? "The agent asks" : pending ? "Approval needed" : "Approval";
    return h("li", {
      class: `approval-card${pending ? " pending" : ""}`,
      "data-approval": approval.id,
      "data-status": approval.status,
      "aria-label": `${heading}: ${approval.title}`,
    },
    h("header", { class: "approval-head" },
      h("strong", { text: heading }),
      h("span", { class: "muted", text: question ? approval.tool : `${approval.tool} · ${approval.kind}` })),
    h("p", { class: "approval-title", text: approval.title }),
    shownInput(approval) ? h("pre", { class: "approval-input", text: approval.input }) : null,
    pending
      ? (question ? this.answerForm(approval, problem) : this.decisionForm(approval, problem))
      : this.outcome(approval),
    problem);
  }

  /** Allow once, Allow for this session, Deny with an optional note. */
  decisionForm(approval, problem) {
    const note = h("textarea", { class: "approval-note", rows: 2, "aria-label": "Note for the agent (optional)", placeholder: "Note for the agent (optional)" });
    const decide = (decision, scope) => this.post(approval, { decision, scope, message: note.value.trim() || undefined }, problem);
    const deadline = Date.parse(approval.deadline);
    return h("div", { class: "approval-actions" },
      note,
      h("div", { class: "approval-buttons" },
        h("button", { type: "button", class: "primary", text: "Allow once", onclick: () => decide("allow", "once") }),
        h("button", { type: "button", text: "Allow for this session", onclick: () => decide("allow", "session") }),
        h("button", { type: "button", class: "danger", text: "Deny", onclick: () => decide("deny", "once") }),
        Number.isNaN(deadline) ? null : h("span", { class: "muted", text: `decided at ${new Date(deadline).toLocaleTimeString()} if nobody does` })));
  }

  /** A question: its options as buttons, and a text answer. */
  answerForm(approval, problem) {
    const answer = (text) => this.post(approval, { answer: text }, problem);
    const text = h("input", { type: "text", class: "approval-answer", "aria-label": "Your answer", placeholder: "Your answer" });
    return h("form", {
      class: "approval-actions",
      onsubmit: (event) => {
        event.preventDefault();
        if (text.value.trim()) answer(text.value.trim());
      },
    },
    approval.options.length
      ? h("div", { class: "approval-buttons" }, approval.options.map((option) =>
        h("button", { type: "button", text: option.name, onclick: () => answer(option.name) })))
      : null,
    h("div", { class: "approval-buttons" }, text, h("button", { type: "submit", class: "primary", text: "Answer" })));
  }

  /** Who decided what, once decided. */
  outcome(approval) {
    const line = h("p", { class: "approval-outcome" });
    let what = OUTCOME[approval.status];
    if (approval.status === "expired") what = approval.decision === "allow" ? "Allowed at its deadline" : "Denied at its deadline";
    line.textContent = what;
    if (approval.decided_by && approval.status !== "cancelled" && approval.status !== "expired") {
      nameOf(approval.decided_by).then((name) => {
        line.textContent = `${what} by ${name}${approval.answer ? `: ${approval.answer}` : ""}${approval.message && !approval.answer ? ` — ${approval.message}` : ""}`;
      });
    }
    return line;
  }

  async post(approval, body, problem) {
    problem.hidden = true;
    const card = this.cards.get(approval.id)?.element;
    for (const button of card?.querySelectorAll("button") ?? []) button.disabled = true;
    try {
      const decided = await v1(accountPath(`/approvals/${encodeURIComponent(approval.id)}/decision`), { method: "POST", body });
      this.show(decided);
      announce(`${OUTCOME[decided.status] ?? "Decided"}: ${decided.title}`);
    } catch (error) {
      problem.textContent = `Couldn't decide: ${error.message}`;
      problem.hidden = false;
      for (const button of card?.querySelectorAll("button") ?? []) button.disabled = false;
    }
  }
}
