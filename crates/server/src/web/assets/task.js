// A task: its sessions, the chosen session's conversation (live), each
// turn's reply under its block, a composer for follow-ups, Abort and Close,
// Revert on each turn's block, and what the task and the session cost so far.

import { accountPath, call, v1, v1All } from "./api.js";
import { CodeTaskBlock } from "./block.js";
import { announce, diffstat, duration, firstLine, h, reconcile, totals } from "./dom.js";
import { follow } from "./events.js";
import { newSession } from "./new-session.js";
import { ResultPanel } from "./result.js";
import { sessionFailure } from "./failure.js";
import { sessionState, stateChip, stateLabel, taskState } from "./status.js";
import { forkButton } from "./fork.js";
import { ApprovalCards } from "./approvals.js";

/** Internal message types, shown as one muted line each. */
const INTERNAL = { "queue-operation": "Queue", attachment: "Attachment", "ai-title": "Title", approval: "Approval" };
/** Session states with a turn to stop. */
const ABORTABLE = new Set(["booting", "running", "waiting"]);
/** Session states in which a revert is refused: a turn runs or the work tree is being made. */
const BUSY = new Set(["booting", "running"]);

/** Shows task `taskId`, on session `sessionId` or its latest; returns what stops the page. */
export function showTask(main, taskId, sessionId) {
  const page = new TaskPage(main, taskId, sessionId);
  page.start();
  return () => page.stop();
}

class TaskPage {
  constructor(main, taskId, sessionId) {
    this.main = main;
    this.taskId = taskId;
    this.sessionId = sessionId;
    this.messages = new Map(); // id → message
    this.nodes = new Map(); // id → {element, block}
    this.blocks = new Map(); // call id → block
    this.stopStream = null;
  }

  async start() {
    this.main.replaceChildren(h("p", { class: "muted", text: "Loading the task…" }));
    try {
      const taskPath = accountPath(`/tasks/${encodeURIComponent(this.taskId)}`);
      const [task, sessions] = await Promise.all([v1(taskPath), v1All(`${taskPath}/sessions`)]);
      // Left while it loaded: the page shown since is another's.
      if (this.stopped) return;
      this.task = task;
      this.sessions = sessions;
      this.session = sessions.find((session) => session.id === this.sessionId) ?? sessions.at(-1) ?? null;
      // The URL names the session shown, so a reload or a shared link shows it
      // again even once the task has a later one.
      if (this.session && this.session.id !== this.sessionId) history.replaceState(null, "", this.sessionHash(this.session));
      this.render();
      if (this.session) await this.follow();
    } catch (error) {
      if (!this.stopped) this.main.replaceChildren(h("p", { class: "problem", role: "alert", text: `Couldn't load the task: ${error.message}` }));
    }
  }

  sessionHash(session) {
    return `#/tasks/${encodeURIComponent(this.taskId)}/sessions/${encodeURIComponent(session.id)}`;
  }

  stop() {
    this.stopped = true;
    this.stopStream?.();
    this.approvals?.stop();
  }

  sessionPath(rest = "") {
    return accountPath(`/tasks/${encodeURIComponent(this.taskId)}/sessions/${encodeURIComponent(this.session.id)}${rest}`);
  }

  render() {
    const task = this.task;
    this.sessionList = h("ul", { class: "sessions" });
    this.conversation = h("ol", { class: "conversation", "aria-label": "Conversation" });
    this.connection = h("span", { class: "connection", role: "status" });
    this.alert = h("p", { class: "problem", role: "alert", hidden: true });
    this.abortButton = h("button", { type: "button", text: "Abort", onclick: () => this.abort() });
    this.closeButton = h("button", { type: "button", text: "Close session", onclick: () => this.close() });
    this.sessionHeading = h("h2", {});
    this.sessionFacts = h("p", { class: "muted session-facts" });
    this.approvals = this.session && new ApprovalCards(this.session.id);
    this.result = this.session && new ResultPanel({ path: (rest) => this.sessionPath(rest), messages: () => this.messages.values() });
    const taskPath = accountPath(`/tasks/${encodeURIComponent(this.taskId)}`);
    const opened = (session) => { location.hash = this.sessionHash(session); };
    this.taskChip = h("span", { class: "task-state" });
    this.failure = h("div", { class: "failure-slot" });

    document.title = `${task.title || "Untitled task"} — cinch`;
    const owner = task.owner_name ?? "needs someone";
    this.taskUsage = h("div", { class: "muted task-usage", hidden: true });
    this.main.replaceChildren(
      h("p", {}, h("a", { href: "#/tasks", text: "← Tasks" })),
      h("header", { class: "task-head" },
        h("h1", { text: task.title || "Untitled task" }),
        h("p", { class: "muted" },
          this.taskChip, ` · ${owner} · by ${task.created_by_name ?? "an agent"}`,
          this.sessions.length > 1 ? h("a", { class: "compare-link", href: `#/tasks/${encodeURIComponent(this.taskId)}/compare`, text: "Compare sessions" }) : null),
        this.taskUsage),
      h("div", { class: "task-body" },
        h("nav", { class: "session-nav", "aria-label": "Sessions" }, h("h2", { text: "Sessions" }), this.sessionList, newSession(taskPath, opened)),
        this.session
          ? h("section", { class: "session", "aria-labelledby": "session-heading" },
            h("header", { class: "session-head" },
              h("div", {}, this.sessionHeading, this.sessionFacts),
              h("div", { class: "actions" }, this.connection, this.abortButton, this.closeButton)),
            this.failure,
            this.alert,
            this.result.element,
            this.conversation,
            this.approvals.element,
            this.composer())
          : h("p", { class: "muted", text: "This task has no session yet." })),
    );
    this.sessionHeading.id = "session-heading";
    this.renderSessions();
  }

  renderSessions() {
    this.sessionList.replaceChildren(...this.sessions.map((session) => {
      const current = session.id === this.session?.id;
      return h("li", {},
        h("a", {
          href: this.sessionHash(session),
          "aria-current": current ? "page" : null,
        },
        h("span", { class: "session-title", text: session.title || "Session" }),
        stateChip(sessionState(session)),
        h("span", { class: "muted", text: engine(session) })));
    }));
    // The task's total is its sessions', which the live events keep current.
    const spent = totals(sumUsage(this.sessions.map((session) => session.usage)));
    this.taskUsage.textContent = spent ? `This task so far: ${spent}` : "";
    this.taskUsage.hidden = !spent;
    const newest = this.sessions.at(-1);
    this.taskChip.replaceChildren(stateChip(taskState({
      owner: this.task.owner, session_status: newest?.status, session_close_reason: newest?.close_reason,
    })));
    if (!this.session) return;
    const session = this.session;
    this.sessionHeading.textContent = session.title || "Session";
    this.renderFailure(session);
    const facts = [stateLabel(sessionState(session)), engine(session)];
    if (session.status === "waiting") {
      // Null is an unknown wait, not a short one.
      const since = Date.parse(session.waiting_since);
      facts.push(Number.isNaN(since) ? "waiting for capacity" : `waiting for capacity for ${duration(Date.now() - since)}`);
    }
    if (session.close_reason) facts.push(`closed: ${session.close_reason.replaceAll("_", " ")}`);
    // A failed session's message is its failure panel's.
    if (session.error_message && sessionState(session) !== "failed") facts.push(session.error_message);
    const sessionSpent = totals(session.usage);
    if (sessionSpent) facts.push(sessionSpent);
    this.sessionFacts.textContent = facts.join(" · ");
    for (const block of this.blocks.values()) block.setRevertable(!BUSY.has(session.status));
    this.abortButton.disabled = !ABORTABLE.has(session.status);
    this.closeButton.disabled = session.status === "closed";
    this.result.update(session);
  }

  /**
   * The failure panel of a failed session, made again only when its failure
   * changes. A failed turn's own headline (its block's) says more than the
   * session's message.
   */
  renderFailure(session) {
    const last = [...this.blocks.values()].at(-1)?.turn;
    const turnHeadline = last?.status !== "completed" ? last?.result?.headline : null;
    const key = JSON.stringify([session.id, session.close_reason, session.error_message, turnHeadline]);
    if (this.failure.dataset.key === key) return;
    this.failure.dataset.key = key;
    const setupLog = () => call(`/v1${this.sessionPath("/setup-log")}`, { text: true });
    const panel = sessionFailure(session, { turnHeadline, setupLog });
    this.failure.replaceChildren(...(panel ? [panel] : []));
  }

  composer() {
    const text = h("textarea", { id: "follow-up", name: "message", rows: 3, required: true, placeholder: "Ask for a change, answer a question…" });
    const send = h("button", { type: "submit", class: "primary", text: "Send" });
    const form = h("form", {
      class: "composer",
      onsubmit: async (event) => {
        event.preventDefault();
        const message = text.value.trim();
        if (!message) return;
        send.disabled = true;
        try {
          const sent = await v1(this.sessionPath("/messages"), { method: "POST", body: { message } });
          text.value = "";
          this.upsert(sent, { seed: false });
          announce("Message sent");
        } catch (error) {
          this.showProblem(`Couldn't send the message: ${error.message}`);
        } finally {
          send.disabled = false;
        }
      },
    },
    h("label", { for: "follow-up", text: "Follow-up" }),
    text,
    h("div", { class: "composer-actions" }, h("span", { class: "muted", text: "Ctrl+Enter sends" }), send));
    text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
    });
    return form;
  }

  /** Loads the conversation, then applies the live events that came meanwhile. */
  async follow() {
    const pending = [];
    let loaded = false;
    this.stopStream = follow(`/v1${this.sessionPath("/events")}`, {
      onEvent: (name, data) => (loaded ? this.onEvent(name, data) : pending.push([name, data])),
      onState: (state) => {
        this.connection.textContent = { live: "Live", reconnecting: "Reconnecting…", stopped: "" }[state];
        this.connection.dataset.state = state;
      },
    });
    const [messages] = await Promise.all([v1All(this.sessionPath("/messages")), this.approvals.load()]);
    if (this.stopped) return;
    for (const message of messages) this.upsert(message, { seed: true });
    loaded = true;
    for (const [name, data] of pending) this.onEvent(name, data);
  }

  onEvent(name, data) {
    if (this.stopped) return;
    if (name === "session.updated" && data.id === this.session.id) {
      this.session = data;
      this.sessions = this.sessions.map((session) => (session.id === data.id ? data : session));
      this.renderSessions();
    } else if (name === "message.created" || name === "message.updated") {
      this.upsert(data, { seed: false });
    } else if (name === "tool.progress") {
      this.blocks.get(data.tool_call_id)?.progress(data.lines);
    } else if (name.startsWith("approval.")) {
      this.approvals.onEvent(name, data);
    } else if (name === "tool.ended") {
      const block = this.blocks.get(data.tool_call_id);
      if (block) announce(`${block.name.textContent} coding task ended: ${data.status.replaceAll("_", " ")}`);
    }
  }

  /** Adds or updates a message and puts it in its place. */
  upsert(message, { seed }) {
    if (message.session_id && message.session_id !== this.session.id) return;
    this.messages.set(message.id, message);
    const node = this.nodes.get(message.id);
    if (node?.block && message.turn) {
      node.block.update(message);
      this.renderFailure(this.session);
    } else {
      const fresh = this.node(message, seed);
      // A fork's messages from its source show as inherited.
      fresh.element.classList.toggle("inherited", Boolean(message.forked_from));
      node?.element.replaceWith(fresh.element);
      this.nodes.set(message.id, fresh);
      if (fresh.block) this.renderFailure(this.session);
    }
    this.place();
    // A turn's final message drafts the commit message.
    this.result.update(this.session);
  }

  node(message, seed) {
    if (message.type === "assistant" && message.turn) {
      let block = this.blocks.get(message.turn.call_id);
      if (block) block.update(message);
      else {
        block = new CodeTaskBlock(message, {
          session: () => this.session,
          seed,
          revert: (turnId) => this.revert(turnId),
          fork: (turn) => forkButton({ taskId: this.taskId, session: () => this.session, turn }),
        });
        block.setRevertable(!BUSY.has(this.session.status));
        this.blocks.set(message.turn.call_id, block);
      }
      return { block, element: h("li", { class: "step step-turn" }, block.element, block.reply.element) };
    }
    if (message.type === "revert" && message.turn) return this.revertLine(message);
    if (message.type in INTERNAL) {
      // One line however narrow the window: cut short, the whole of it on hover.
      const text = `${INTERNAL[message.type]} · ${firstLine(message.content)}`;
      return {
        element: h("li", { class: "step step-internal" }, h("span", { class: "muted internal-text", text, title: text })),
      };
    }
    const who = message.type === "user" ? "You" : "Agent";
    return {
      element: h("li", { class: `step step-${message.type}` },
        h("div", { class: "bubble" }, h("span", { class: "who", text: who }), h("div", { class: "content", text: message.content }))),
    };
  }

  /** A revert: what it restored, and a button that undoes it (reverting the revert). */
  revertLine(message) {
    const result = message.turn.result;
    const parts = [`Reverted to the start of a turn · ${diffstat(result)}`];
    const undone = result.commits_undone?.length ?? 0;
    if (undone) parts.push(`the branch went back past ${undone} commit${undone === 1 ? "" : "s"}`);
    const undo = h("button", {
      type: "button",
      class: "link revert-undo",
      text: "Undo",
      title: "Revert this revert: bring the work tree back as it was",
      onclick: () => this.revert(message.turn.turn_id),
    });
    return {
      element: h("li", { class: "step step-revert" },
        h("span", { class: "muted revert-text", text: parts.join(" · "), title: firstLine(message.content) }), " ", undo),
    };
  }

  async revert(turnId) {
    this.alert.hidden = true;
    try {
      const message = await v1(this.sessionPath("/revert"), { method: "POST", body: { turn_id: turnId } });
      this.upsert(message, { seed: false });
      announce("The work tree was reverted");
    } catch (error) {
      this.showProblem(`Couldn't revert: ${error.message}`);
    }
  }

  /** Orders the conversation by sequence, then creation time. */
  place() {
    const ordered = [...this.messages.values()].sort((a, b) =>
      (a.sequence ?? Infinity) - (b.sequence ?? Infinity) || a.created_at.localeCompare(b.created_at));
    reconcile(this.conversation, ordered.map((message) => this.nodes.get(message.id).element));
  }

  async abort() {
    await this.act("Couldn't abort", () => v1(this.sessionPath("/abort"), { method: "POST" }));
  }

  async close() {
    await this.act("Couldn't close the session", () => v1(this.sessionPath(), { method: "PATCH", body: { status: "closed" } }));
  }

  async act(failure, request) {
    this.alert.hidden = true;
    try {
      this.session = await request();
      this.sessions = this.sessions.map((session) => (session.id === this.session.id ? this.session : session));
      this.renderSessions();
    } catch (error) {
      this.showProblem(`${failure}: ${error.message}`);
    }
  }

  showProblem(text) {
    this.alert.textContent = text;
    this.alert.hidden = false;
  }
}

/** The usage of several sessions together, as one total. */
function sumUsage(all) {
  const sum = { turns: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, turns_without_cost: 0 };
  for (const usage of all) {
    if (!usage) continue;
    for (const key of Object.keys(sum)) sum[key] += usage[key] ?? 0;
  }
  return sum;
}

/** "claude · claude-sonnet-4-5 · high": what a session runs. */
function engine(session) {
  return [session.harness, session.harness_model, session.harness_effort].filter(Boolean).join(" · ");
}
