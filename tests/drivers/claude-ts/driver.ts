// Claude Code's stream JSON (`claude -p --output-format stream-json
// --verbose`; Amp and Qwen Code print the same), ported line for line from
// the Rust driver (drivers/claude) to measure a TypeScript driver against it.
// It replaces src/driver.ts of a `cinch driver new --lang ts claude-ts`
// scaffold; see host/tests/it/scaffold.rs.

import {
  type Command, type Event, type Fed, type Info, type Outcome, type Turn, type Usage,
  parseLine, skipped,
} from "./contract.js";

const MODELS = [
  "opus", "sonnet", "haiku", "fable", "claude-fable-5", "claude-opus-4-8", "claude-opus-4-7",
  "claude-opus-4-6", "claude-opus-4-5", "claude-opus-4-1", "claude-sonnet-5", "claude-sonnet-4-6",
  "claude-sonnet-4-5", "claude-haiku-4-5",
];
const EFFORTS = ["low", "medium", "high", "xhigh", "max"];
const NO_RESULT = "the output ended before Claude Code reported a result";
const OTHER_KINDS = new Set([
  "stream_event", "rate_limit_event", "tool_progress", "tool_use_summary", "auth_status",
  "prompt_suggestion", "keep_alive", "control_request", "control_response", "control_cancel_request",
]);
const OTHER_SYSTEM = new Set([
  "init", "status", "thinking_tokens", "compact_boundary", "files_persisted", "informational",
  "local_command_output",
]);
const DETAIL_KEYS = [
  "command", "cmd", "file_path", "filePath", "absolute_path", "path", "dir_path", "notebook_path",
  "pattern", "globPattern", "url", "description", "query", "prompt",
];

type Json = Record<string, any>;

interface TurnResult {
  failed: boolean;
  finalMessage?: string;
  error?: string;
  usage?: Usage;
}

class Parser {
  private started = false;
  private session?: string;
  private tools = new Map<string, { name: string; detail?: string }>();
  private lastText?: string;
  private reportedError?: string;
  private result?: TurnResult;

  constructor(_turn: Turn) {}

  opening(): string[] {
    return [];
  }

  stop(): string[] {
    return [];
  }

  feed(lines: string[]): Fed {
    const out: Event[] = [];
    for (const line of lines) {
      if (line.trim() === "") continue;
      const value = parseLine(line, out);
      if (value !== undefined) this.line(value, out);
    }
    return { events: out, replies: [], done: false };
  }

  private line(value: Json, out: Event[]): void {
    const kind = str(value.type);
    switch (kind) {
      case "system":
        return this.system(value, out);
      case "assistant":
        this.noteSession(value, out);
        return this.assistant(value, out);
      case "user":
        this.noteSession(value, out);
        return this.user(value, out);
      case "result":
        this.noteSession(value, out);
        return this.resultLine(value, out);
    }
    if (kind !== undefined && OTHER_KINDS.has(kind)) {
      this.noteSession(value, out);
      out.push({ tag: "other", val: kind });
    } else {
      out.push(skipped(kind));
    }
  }

  finish(exitCode: number | undefined, stderrTail: string): Outcome {
    const result = this.result;
    const turnFailed = result ? result.failed : true;
    const turnError = result ? result.error : this.reportedError;
    const finalMessage = result ? result.finalMessage : this.lastText;
    const isError = turnFailed || exitCode !== 0;
    let error: string | undefined;
    if (isError) {
      error = turnError ?? stderrError(stderrTail) ??
        (result === undefined && exitCode === 0 ? NO_RESULT : exitText(exitCode));
    }
    return { finalMessage, sessionId: this.session, isError, error, usage: result?.usage };
  }

  private noteSession(value: Json, out: Event[]): void {
    const id = str(value.session_id);
    if (id === undefined || id === "" || id === this.session) return;
    this.session = id;
    out.push({ tag: "session", val: id });
  }

  private system(value: Json, out: Event[]): void {
    const subtype = str(value.subtype) ?? "";
    if (subtype === "init" && !this.started) {
      this.started = true;
      const sessionId = nonblank(value.session_id);
      this.session = sessionId;
      out.push({ tag: "started", val: { model: nonblank(value.model), sessionId } });
      return;
    }
    this.noteSession(value, out);
    if (subtype === "api_retry") {
      out.push({ tag: "warning", val: retryNotice(value) });
    } else if (OTHER_SYSTEM.has(subtype) || subtype.startsWith("hook_") || subtype.startsWith("task_")) {
      out.push({ tag: "other", val: `system/${subtype}` });
    } else {
      out.push(skipped(`system/${subtype}`));
    }
  }

  private assistant(value: Json, out: Event[]): void {
    const message = object(value.message);
    if ("error" in value && value.error !== null) {
      // A synthetic message standing for a failed API call: its text is the error.
      const text = messageText(message) ?? str(value.error) ?? "API error";
      this.reportedError = text;
      out.push({ tag: "error", val: text });
      return;
    }
    const subagent = value.parent_tool_use_id !== undefined && value.parent_tool_use_id !== null;
    const before = out.length;
    for (const block of content(message)) {
      const kind = str(block.type);
      if (kind === "text") {
        const text = nonblank(block.text);
        if (text === undefined) continue;
        if (subagent) {
          out.push({ tag: "other", val: "subagent-message" });
        } else {
          this.lastText = text;
          out.push({ tag: "assistant-message", val: text });
        }
      } else if (kind === "thinking" && !subagent) {
        const thinking = nonblank(block.thinking);
        if (thinking !== undefined) out.push({ tag: "thinking", val: thinking });
      } else if (kind === "tool_use" || kind === "server_tool_use" || kind === "mcp_tool_use") {
        this.toolStarted(block, out);
      } else if (kind !== undefined && kind.endsWith("_tool_result")) {
        const resultKind = str(object(block.content)?.type);
        this.toolFinished(block, resultKind !== undefined && resultKind.endsWith("_error"), out);
      }
    }
    if (out.length === before) out.push({ tag: "other", val: "assistant" });
  }

  private user(value: Json, out: Event[]): void {
    const before = out.length;
    for (const block of content(object(value.message))) {
      if (str(block.type) === "tool_result") this.toolFinished(block, block.is_error === true, out);
    }
    if (out.length === before) out.push({ tag: "other", val: "user" });
  }

  private toolStarted(block: Json, out: Event[]): void {
    const id = nonblank(block.id);
    const name = str(block.name) ?? "tool";
    const detail = "input" in block ? toolDetail(block.input) : undefined;
    if (id !== undefined) this.tools.set(id, { name, detail });
    out.push({ tag: "tool-use", val: { id, name, detail, phase: "started" } });
  }

  private toolFinished(block: Json, failed: boolean, out: Event[]): void {
    const id = nonblank(block.tool_use_id);
    const pending = id !== undefined ? this.tools.get(id) : undefined;
    if (id !== undefined) this.tools.delete(id);
    out.push({
      tag: "tool-use",
      val: { id, name: pending?.name ?? "tool", detail: pending?.detail, phase: failed ? "failed" : "completed" },
    });
  }

  private resultLine(value: Json, out: Event[]): void {
    const subtype = str(value.subtype);
    const failed = value.is_error === true || (subtype !== undefined && subtype !== "success");
    let stated = nonblank(value.result);
    let statedIsError = false;
    let error: string | undefined;
    if (failed) {
      error = errorsText(value);
      if (error === undefined) {
        statedIsError = stated !== undefined;
        error = stated;
        stated = undefined;
      }
      error ??= this.reportedError;
      const status = u64(value.api_error_status);
      if (error === undefined && status !== undefined) error = `API error (HTTP ${status})`;
      error ??= subtypeText(subtype ?? "");
    }
    if (error !== undefined && this.reportedError !== error) out.push({ tag: "error", val: error });
    if (stated !== undefined) out.push({ tag: "final-message", val: stated });
    const usage = usageOf(value);
    if (usage !== undefined) out.push({ tag: "usage", val: usage });
    const finalMessage = statedIsError ? undefined : stated ?? this.lastText;
    this.result = { failed, finalMessage, error, usage };
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function nonblank(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function object(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function u64(value: unknown): bigint | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? BigInt(value) : undefined;
}

function content(message: Json | undefined): Json[] {
  const blocks = message?.content;
  return Array.isArray(blocks) ? blocks.map(object).filter((block) => block !== undefined) : [];
}

function messageText(message: Json | undefined): string | undefined {
  const text = content(message)
    .filter((block) => str(block.type) === "text")
    .map((block) => str(block.text))
    .filter((text) => text !== undefined)
    .join("\n");
  return text.trim() === "" ? undefined : text;
}

function toolDetail(input: unknown): string | undefined {
  const args = object(input);
  if (args === undefined) return undefined;
  for (const key of DETAIL_KEYS) {
    const value = args[key];
    if (typeof value === "string" && value.trim() !== "") return value;
    if (Array.isArray(value) && value.length > 0) {
      const words = value.filter((word) => typeof word === "string");
      if (words.length > 0) return words.join(" ");
    }
  }
  return undefined;
}

function errorsText(value: Json): string | undefined {
  if (!Array.isArray(value.errors)) return undefined;
  const errors = value.errors
    .map((error: unknown) => str(error) ?? str(object(error)?.message))
    .filter((error: string | undefined) => error !== undefined && error.trim() !== "");
  return errors.length > 0 ? errors.join("; ") : undefined;
}

function subtypeText(subtype: string): string {
  switch (subtype) {
    case "error_max_turns": return "reached the maximum number of turns";
    case "error_max_budget_usd": return "reached the maximum budget";
    case "error_during_execution": return "error during execution";
    case "":
    case "success": return "the turn ended in error";
    default: return subtype.replaceAll("_", " ");
  }
}

function retryNotice(value: Json): string {
  let notice = "API retry";
  const attempt = u64(value.attempt);
  const max = u64(value.max_retries);
  if (attempt !== undefined) notice += max !== undefined ? ` ${attempt}/${max}` : ` ${attempt}`;
  const error = str(value.error);
  if (error) notice += `: ${error}`;
  const status = u64(value.error_status);
  if (status !== undefined) notice += ` (HTTP ${status})`;
  return notice;
}

function usageOf(value: Json): Usage | undefined {
  const usage = object(value.usage);
  const costUsd = typeof value.total_cost_usd === "number" ? value.total_cost_usd : undefined;
  if (usage === undefined && costUsd === undefined) return undefined;
  const count = (field: string) => (usage === undefined ? undefined : u64(usage[field]));
  const input = [count("input_tokens"), count("cache_creation_input_tokens"), count("cache_read_input_tokens")];
  const known = input.filter((n) => n !== undefined);
  return {
    inputTokens: known.length > 0 ? known.reduce((a, b) => a + b, 0n) : undefined,
    outputTokens: count("output_tokens"),
    cachedInputTokens: count("cache_read_input_tokens"),
    costUsd,
  };
}

function stripAnsi(text: string): string {
  return text.replace(/\u001b(\[[\x20-\x3f]*[\x40-\x7e]|.)/gs, "");
}

function stderrError(stderr: string): string | undefined {
  const lines = stripAnsi(stderr).split("\n").filter((line) => line.trim() !== "");
  const text = lines.slice(-5).join("\n");
  return text === "" ? undefined : text;
}

function exitText(exitCode: number | undefined): string {
  if (exitCode === 0) return "the turn failed";
  return exitCode === undefined ? "killed by a signal" : `exited with code ${exitCode}`;
}

export const driver = {
  describe(): Info {
    return {
      name: "claude-ts",
      displayName: "Claude Code (TypeScript)",
      program: "claude",
      versionArgs: ["--version"],
      stateDir: ".claude",
      managedConfig: [".claude/settings.local.json"],
      secretEnv: ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
      loginFiles: [
        { path: ".claude/.credentials.json" },
        { path: ".claude.json", accountPointer: "/oauthAccount/emailAddress" },
      ],
      models: MODELS,
      defaultModel: "opus",
      efforts: EFFORTS,
      defaultEffort: "high",
      brief: "stdin",
      resume: "same-directory",
      harnesses: [],
    };
  },

  parseVersion(output: string): string | undefined {
    return output.match(/\d+(\.\d+)+\S*/)?.[0];
  },

  startCommand(turn: Turn): Command {
    const args = ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"];
    if (turn.model !== undefined) args.push("--model", turn.model);
    if (turn.effort !== undefined) args.push("--effort", turn.effort);
    if (turn.sessionId !== undefined) args.push("--resume", turn.sessionId);
    return {
      args,
      setEnv: [{ name: "IS_SANDBOX", value: "1" }],
      removeEnv: ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"],
      brief: "stdin",
    };
  },

  Parser,
};
