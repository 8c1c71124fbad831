// The types of the cinch driver contract (cinch:driver, see wit/), as
// componentize-js hands them across: records are objects with camelCase
// fields, enums are their kebab-case names, variants are { tag, val },
// option<T> is T or undefined, u64 is a bigint.

export type BriefDelivery = "stdin" | "prompt-file" | "conversation";
export type ResumeScope = "same-directory" | "anywhere";
export type ToolPhase = "started" | "completed" | "failed";

export interface EnvVar { name: string; value: string }
export interface LoginProbe { path: string; accountPointer?: string }
export interface HomeFile { path: string; contents: string }

export interface HarnessProfile {
  name: string;
  displayName: string;
  program: string;
  args: string[];
  versionArgs: string[];
  secretEnv: string[];
  loginFiles: LoginProbe[];
  setEnv: EnvVar[];
  homeFiles: HomeFile[];
  models: string[];
  defaultModel?: string;
}

export interface Info {
  name: string;
  displayName: string;
  program: string;
  versionArgs: string[];
  stateDir?: string;
  managedConfig: string[];
  secretEnv: string[];
  loginFiles: LoginProbe[];
  models: string[];
  defaultModel?: string;
  efforts: string[];
  defaultEffort?: string;
  brief: BriefDelivery;
  resume: ResumeScope;
  harnesses: HarnessProfile[];
}

export interface PermissionPolicy { defaultAllow: boolean; denyTools: string[] }

export interface Turn {
  promptFile: string;
  workdir: string;
  model?: string;
  effort?: string;
  sessionId?: string;
  brief: string;
  harness: string;
  permissions: PermissionPolicy;
}

export interface Command {
  args: string[];
  setEnv: EnvVar[];
  removeEnv: string[];
  brief: BriefDelivery;
}

export interface Usage {
  inputTokens?: bigint;
  outputTokens?: bigint;
  cachedInputTokens?: bigint;
  costUsd?: number;
}

export interface ToolUse { id?: string; name: string; detail?: string; phase: ToolPhase }

export type Event =
  | { tag: "started"; val: { model?: string; sessionId?: string } }
  | { tag: "session"; val: string }
  | { tag: "assistant-message"; val: string }
  | { tag: "assistant-delta"; val: string }
  | { tag: "thinking"; val: string }
  | { tag: "tool-use"; val: ToolUse }
  | { tag: "file-change"; val: { path: string; kind: string } }
  | { tag: "usage"; val: Usage }
  | { tag: "warning"; val: string }
  | { tag: "error"; val: string }
  | { tag: "final-message"; val: string }
  | { tag: "other"; val: string }
  | { tag: "skipped"; val: { reason: "not-json" | "unknown"; kind?: string } }
  | { tag: "permission"; val: { tool: string; allowed: boolean } }
  | { tag: "plan"; val: { content: string; status: string }[] };

export interface Outcome {
  finalMessage?: string;
  sessionId?: string;
  isError: boolean;
  error?: string;
  usage?: Usage;
}

export interface Fed { events: Event[]; replies: string[]; done: boolean }

/** A line that is not JSON, or JSON the driver does not know. */
export function skipped(kind: string | undefined, notJson = false): Event {
  return { tag: "skipped", val: { reason: notJson ? "not-json" : "unknown", kind } };
}

/** Parses one line; undefined (and a `skipped` event) when it is not a JSON object. */
export function parseLine(line: string, events: Event[]): Record<string, any> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    events.push(skipped(undefined, true));
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    events.push(skipped(undefined));
    return undefined;
  }
  return value as Record<string, any>;
}

/** The last `count` non-blank lines of a CLI's stderr. */
export function lastLines(text: string, count: number): string {
  const lines = text.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim() !== "");
  return lines.slice(-count).join("\n");
}
