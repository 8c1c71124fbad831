// The code-task block: one harness turn in the conversation. It reads the
// harness, "coding task", the status, a wrote tag and the run time; the
// brief clamped to two lines; while running, the latest six progress
// lines; the repository, diffstat and cost; the first line of an error; a
// Revert button once it has ended. Opening it shows Result, Diff, Log and
// Metadata (which also names the event types the driver did not know). Its
// final message, the assistant's reply, shows right under it
// (`reply.element`, which the conversation places after the block).

import { call } from "./api.js";
import { ago, cost, diffstat, duration, h, shortSha, tokens } from "./dom.js";
import { diffView } from "./diff.js";
import { logo } from "./logos.js";
import { Reply } from "./reply.js";
import { tabs } from "./tabs.js";

const STATUS_TEXT = {
  running: "Running…",
  completed: "Done",
  failed: "Failed",
  timed_out: "Timed out",
  cancelled: "Cancelled",
  interrupted: "Interrupted",
};

/** Progress lines shown under the brief while the turn runs. */
const SHOWN_LINES = 6;
/** Progress lines kept for the Result view until the result lands. */
const KEPT_LINES = 200;

/** Running blocks, whose run time ticks once a second; a page left behind takes its blocks out. */
const running = new Set();
setInterval(() => {
  for (const block of running) {
    if (block.element.isConnected) block.renderTime();
    else running.delete(block);
  }
}, 1000);

let nextId = 0;

export class CodeTaskBlock {
  /**
   * The block of `message`, an assistant message with a turn. `session()`
   * gives the session it belongs to (for the harness session id). `seed`
   * asks for the latest progress lines from the harness log: the page was
   * (re)loaded while the turn ran, and live lines only stream from now on.
   */
  constructor(message, { session, seed, revert, fork }) {
    this.id = `block-${nextId++}`;
    this.session = session;
    this.revert = revert; // restores the work tree to this turn's start
    this.fork = fork; // makes the Fork button of this turn, when given
    this.lines = [];
    this.turn = null;
    this.log = null; // the harness log's promise, once asked for
    this.diff = null; // the Diff view, once opened
    this.seeded = null; // the log's first line, while the shown lines came from the log
    this.build();
    this.update(message);
    if (seed && this.turn.status === "running") this.seed();
  }

  build() {
    this.logo = h("span", { class: "block-logo" });
    this.name = h("span", { class: "block-harness" });
    this.status = h("span", { class: "block-status" });
    this.wrote = h("span", { class: "tag", text: "wrote", hidden: true });
    this.time = h("span", { class: "block-time" });
    this.toggle = h(
      "button",
      {
        type: "button",
        class: "block-toggle",
        "aria-expanded": "false",
        "aria-controls": `${this.id}-detail`,
        onclick: () => this.setOpen(!this.isOpen()),
      },
      this.logo,
      h("span", { class: "block-title" }, this.name, h("span", { class: "block-kind", text: " coding task" })),
      this.status,
      this.wrote,
      this.time,
    );
    this.brief = h("p", { class: "block-brief" });
    this.progressList = h("ol", { class: "block-progress", "aria-label": "Latest progress" });
    this.where = h("p", { class: "block-where" });
    this.error = h("p", { class: "block-error" });
    this.revertButton = h("button", {
      type: "button",
      class: "block-revert",
      text: "Revert",
      title: "Restore the work tree to how it was when this turn started",
      onclick: () => this.revert(this.turn.turn_id),
    });
    this.actions = h("p", { class: "block-actions", hidden: true }, this.revertButton, this.fork?.(() => this.turn));
    this.detail = h("div", { class: "block-detail", id: `${this.id}-detail`, hidden: true });
    this.reply = new Reply();
    this.element = h(
      "article",
      { class: "block", "aria-label": "Coding task" },
      h("header", {}, this.toggle),
      this.brief,
      this.progressList,
      this.where,
      this.error,
      this.actions,
      this.detail,
    );
  }

  /** Shows the turn as `message` has it now. */
  update(message) {
    const before = this.turn?.status;
    const turn = message.turn;
    // A turn never runs again once it has ended: an older copy of the
    // message (an event replayed after a fresh load) must not undo that.
    if (before && before !== "running" && turn.status === "running") return;
    this.turn = turn;
    const result = turn.result;
    const ended = turn.status !== "running";

    this.element.dataset.call = turn.call_id;
    this.element.dataset.status = turn.status;
    this.element.classList.toggle("running", !ended);
    this.logo.replaceChildren(logo(turn.harness));
    this.name.textContent = turn.harness_display_name || turn.harness;
    this.status.textContent = STATUS_TEXT[turn.status] ?? turn.status.replaceAll("_", " ");
    this.wrote.hidden = !(result?.total_files > 0);
    this.brief.textContent = turn.brief;

    const where = [h("span", { class: "block-repo", text: turn.repository })];
    if (result) where.push(" · ", h("span", { class: "block-diffstat", text: diffstat(result) }));
    const spent = cost(result?.usage);
    if (spent) where.push(" · ", h("span", { class: "block-cost", text: spent.text, title: spent.title }));
    this.where.replaceChildren(...where);
    this.actions.hidden = !(ended && result?.start_checkpoint);

    const problem = ended && turn.status !== "completed" ? errorLine(turn) : "";
    this.error.textContent = problem;
    this.error.hidden = !problem;
    this.error.classList.toggle("failed", turn.status === "failed");
    this.reply.show(result?.final_message ?? null);

    if (ended) {
      running.delete(this);
      // Progress is live only: once the result lands, the result replaces it.
      this.lines = [];
    } else {
      running.add(this);
    }
    this.renderProgress();
    this.renderTime();
    // A log or diff read while the turn ran (the seed reads the log) is
    // partial: the ended turn's are read afresh, opened or not.
    if (ended && before === "running") this.diff = this.log = null;
    if (before !== turn.status && this.tabs) this.tabs.select(this.tabs.selected());
  }

  /** Live progress lines of this turn. */
  progress(lines) {
    if (this.turn.status !== "running") return;
    if (this.seeded) {
      // The stream may replay the turn from its start, which the seed
      // already holds: then the stream's lines replace the seed.
      if (lines[0] === this.seeded) this.lines = [];
      this.seeded = null;
    }
    this.lines.push(...lines);
    this.lines.splice(0, Math.max(0, this.lines.length - KEPT_LINES));
    this.renderProgress();
    if (this.tabs?.selected() === "Result") this.renderResult(this.resultPanel);
  }

  /** The latest lines from the harness log, for a turn that ran before the page loaded. */
  async seed() {
    try {
      const log = await this.loadLog();
      if (this.lines.length || this.turn.status !== "running") return;
      this.seeded = log.lines[0];
      this.lines = log.lines.slice(-SHOWN_LINES);
      this.renderProgress();
    } catch {
      // No log yet: the lines come with the stream.
    }
  }

  renderProgress() {
    const shown = this.turn.status === "running" ? this.lines.slice(-SHOWN_LINES) : [];
    this.progressList.replaceChildren(...shown.map((line) => h("li", { text: line })));
    this.progressList.hidden = shown.length === 0;
  }

  renderTime() {
    const result = this.turn.result;
    const ms = result ? result.duration_ms : Date.now() - Date.parse(this.turn.started_at);
    this.time.textContent = Number.isNaN(ms) ? "" : duration(ms);
  }

  isOpen() {
    return this.toggle.getAttribute("aria-expanded") === "true";
  }

  setOpen(open) {
    this.toggle.setAttribute("aria-expanded", String(open));
    this.element.classList.toggle("open", open);
    this.detail.hidden = !open;
    if (open && !this.tabs) {
      this.tabs = tabs(["Result", "Diff", "Log", "Metadata"], {
        label: "Coding task views",
        onSelect: (name, panel) => this.renderView(name, panel),
      });
      this.detail.append(this.tabs.element);
      this.tabs.select("Result");
    }
  }

  renderView(name, panel) {
    if (name === "Result") {
      this.resultPanel = panel;
      this.renderResult(panel);
    } else if (name === "Diff") this.renderDiff(panel);
    else if (name === "Log") this.renderLog(panel);
    else this.renderMetadata(panel);
  }

  renderResult(panel) {
    const result = this.turn.result;
    if (result) {
      panel.replaceChildren(h("pre", { class: "result-text", text: withoutLogLine(result.result_text) }));
    } else if (this.lines.length) {
      panel.replaceChildren(h("ol", { class: "steps" }, this.lines.map((line) => h("li", { text: line }))));
    } else {
      panel.replaceChildren(muted(this.turn.status === "running" ? "Waiting for the harness's first step…" : "This turn has no result."));
    }
  }

  renderDiff(panel) {
    const result = this.turn.result;
    if (!result) return panel.replaceChildren(muted("The diff shows once the turn has ended."));
    if (!result.end_checkpoint) return panel.replaceChildren(muted("This turn has no end checkpoint, so no diff."));
    // One view per ended turn: it keeps its layout and what it loaded.
    this.diff ??= diffView((context) => call(`${this.taskPath()}/diff?context=${context}`, { text: true }));
    panel.replaceChildren(this.diff);
  }

  renderLog(panel) {
    if (!this.turn.result) return panel.replaceChildren(muted("The harness log shows once the turn has ended."));
    panel.replaceChildren(muted("Loading the log…"));
    this.loadLog().then(
      (log) => panel.replaceChildren(logView(log)),
      (error) => panel.replaceChildren(
        h("p", { class: "problem" }, h("strong", { text: "Couldn't load the harness log" }), h("br"), error.message),
      ),
    );
  }

  loadLog() {
    this.log ??= call(`${this.taskPath()}/log`).catch((error) => {
      this.log = null; // ask again next time
      throw error;
    });
    return this.log;
  }

  renderMetadata(panel) {
    const turn = this.turn;
    const result = turn.result;
    const rows = [
      ["Status", STATUS_TEXT[turn.status] ?? turn.status],
      ["Harness", turn.harness_display_name || turn.harness],
      ["Model", result?.model ?? "—"],
      ["Tokens", tokens(result?.usage) ?? "—"],
      ["Cost", cost(result?.usage)?.title ?? "—"],
      ["CLI version", result?.cli_version ?? "—"],
      ["Unknown events", result ? unknownEvents(result.unknown_events) : "—"],
      ["Lines not JSON", result ? String(result.not_json_lines ?? 0) : "—"],
      ["Repository", turn.repository],
      ["Session", turn.session_id ?? this.session()?.harness_session_id ?? "none"],
      ["Changes", result ? changes(result) : "—"],
      ["Checkpoints", result ? `${shortSha(result.start_checkpoint)} → ${shortSha(result.end_checkpoint)}` : "—"],
      ["Harness log", result?.log_path
        ? h("button", { type: "button", class: "link", text: result.log_path, onclick: () => this.tabs.select("Log", { focus: true }) })
        : "none"],
      ["Started", h("time", { datetime: turn.started_at, title: turn.started_at, text: ago(turn.started_at) })],
    ];
    panel.replaceChildren(
      h("dl", { class: "metadata" }, rows.flatMap(([term, value]) => [h("dt", { text: term }), h("dd", {}, value)])),
    );
  }

  /** Whether Revert may be used now: not while a turn runs in the session. */
  setRevertable(revertable) {
    this.revertButton.disabled = !revertable;
  }

  taskPath() {
    return `/api/runs/${encodeURIComponent(this.turn.run_id)}/tasks/${encodeURIComponent(this.turn.call_id)}`;
  }
}

function muted(text) {
  return h("p", { class: "muted", text });
}

/**
 * What cut the turn short: the line of its detail that explains (the
 * server's `headline`), else the detail's first line, else its exit code.
 */
function errorLine(turn) {
  const result = turn.result;
  if (!result) return "";
  if (result.headline) return result.headline;
  if (result.detail?.trim()) return result.detail.trim().split("\n")[0];
  return result.exit_code != null ? `The harness exited with code ${result.exit_code}.` : "";
}

/** The result text without its closing `log: <path>` line, which Metadata and Log show. */
function withoutLogLine(text) {
  const lines = text.trimEnd().split("\n");
  if (lines.at(-1).startsWith("log:")) lines.pop();
  return lines.join("\n").trimEnd();
}

/**
 * The event types the driver did not know, with their counts ("brand_new ×2"):
 * a sign that the harness's CLI changed its output. "none" when there were none.
 */
function unknownEvents(counts) {
  const entries = Object.entries(counts ?? {});
  if (!entries.length) return "none";
  return h("ul", { class: "unknown-events" }, entries.map(([type, count]) =>
    h("li", {}, h("code", { text: type }), ` ×${count}`)));
}

function changes(result) {
  return h(
    "div",
    {},
    diffstat(result),
    result.files_changed.length
      ? h("ul", { class: "files" }, result.files_changed.map((file) =>
        h("li", {}, h("code", { text: file.path }), " ", file.binary ? "(binary)" : `(+${file.insertions} −${file.deletions})`)))
      : null,
    result.total_files > result.files_changed.length
      ? muted(`… ${result.total_files - result.files_changed.length} more files`)
      : null,
  );
}

/** The harness log: its steps as progress lines, or its raw events as JSON. */
function logView(log) {
  const body = h("div", { class: "log-body" });
  const buttons = {};
  const show = (which) => {
    for (const [name, button] of Object.entries(buttons)) button.setAttribute("aria-pressed", String(name === which));
    body.replaceChildren(...(which === "Steps" ? steps(log) : rawEvents(log)));
  };
  for (const name of ["Steps", "JSON"]) {
    buttons[name] = h("button", { type: "button", class: "toggle", "aria-pressed": "false", text: name, onclick: () => show(name) });
  }
  show("Steps");
  return h("div", { class: "log" }, h("div", { class: "segmented", role: "group", "aria-label": "Log format" }, Object.values(buttons)), body);
}

function steps(log) {
  return [
    log.lines.length
      ? h("ol", { class: "steps" }, log.lines.map((line) => h("li", { text: line })))
      : muted("The log has no events."),
    log.lines_truncated ? muted(`Only the first ${log.lines.length} steps are shown.`) : null,
    muted(`${log.events} events, ${log.unparsed} lines that were not JSON, ${log.bytes} bytes.`),
  ].filter(Boolean);
}

function rawEvents(log) {
  const pretty = log.raw.split("\n").filter((line) => line.trim()).map((line) => {
    try {
      return JSON.stringify(JSON.parse(line), null, 2);
    } catch {
      return line;
    }
  });
  return [
    h("pre", { class: "raw-json" }, pretty.join("\n\n")),
    log.raw_truncated ? muted(`The log is ${log.bytes} bytes; only its start is shown.`) : null,
  ].filter(Boolean);
}
