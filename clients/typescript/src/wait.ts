/**
 * Waiting for a session to be idle: its turn ended and no message waits for
 * the next one (a message just sent to an idle session leaves it `idle` for a
 * moment before its turn starts, so the status alone would answer too soon).
 */

import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Session = components["schemas"]["Session"];
type Message = components["schemas"]["Message"];

/** How long and how often to look. */
export interface WaitOptions {
  /** Give up after this long (default 30 minutes). */
  timeoutMs?: number;
  /** The pause between two looks (default 500 ms). */
  intervalMs?: number;
  /** Stops waiting. */
  signal?: AbortSignal;
}

/** The session did not become idle in time. */
export class WaitTimeoutError extends Error {
  /** The session as last seen. */
  readonly session: Session;

  constructor(session: Session, timeoutMs: number) {
    super(`session ${session.id} is still ${session.status} after ${timeoutMs} ms`);
    this.name = "WaitTimeoutError";
    this.session = session;
  }
}

/** The session's newest message, queued ones first. */
async function newestMessage(api: Client<paths>, path: { account: string; task: string; session: string }) {
  const { data } = await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages", {
    params: { path, query: { direction: "desc", limit: 1 } },
  });
  return data?.data[0];
}

/**
 * Whether a turn is about to start in a session that reads idle: a message
 * waits for it (queued ones have no sequence yet), or was just handed to it
 * (a user message with no answer, while no failure to start is recorded).
 */
function turnComing(newest: Message | undefined, session: Session) {
  if (newest === undefined) {
    return false;
  }
  if (newest.sequence === null || newest.sequence === undefined) {
    return true;
  }
  return newest.type === "user" && (session.close_reason === null || session.close_reason === undefined);
}

/**
 * The session once nothing runs in it or waits to: `idle` with no message
 * queued, or `closed` (read its `close_reason`; a message reopens it).
 */
export async function waitForIdle(
  api: Client<paths>,
  path: { account: string; task: string; session: string },
  options: WaitOptions = {},
): Promise<Session> {
  const timeoutMs = options.timeoutMs ?? 30 * 60 * 1000;
  const intervalMs = options.intervalMs ?? 500;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    // The messages before the session: cinch marks a session running before
    // its turn's message exists and idle after the turn's end is in it, so a
    // session read after the messages is never older than them. Read the
    // other way round, a turn starting between the two reads looked like
    // one that had ended: idle, its new message answered.
    const newest = await newestMessage(api, path);
    const { data } = await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}", {
      params: { path },
      signal: options.signal,
    });
    const session = data!.data;
    if (session.status === "closed" || (session.status === "idle" && !turnComing(newest, session))) {
      return session;
    }
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(session, timeoutMs);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
