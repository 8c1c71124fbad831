/**
 * Following a live event stream (server-sent events) that outlives its
 * connections: when one drops or the server restarts, the stream opens
 * again with `Last-Event-ID` set to the last event received, so that no
 * event is lost and none comes twice.
 */

import type { components } from "./schema.js";
import { ProblemError, throwIfProblem } from "./problem.js";

type Session = components["schemas"]["Session"];
type Message = components["schemas"]["Message"];

/** A turn's progress lines, as they come. */
export interface ToolProgress {
  /** The session's id (its turns' run). */
  run_id: string;
  /** The turn's call. */
  tool_call_id: string;
  lines: string[];
  /** The harness's own session id, once it said. */
  session_id?: string | null;
}

/** A turn's end. */
export interface ToolEnded {
  run_id: string;
  tool_call_id: string;
  /** `completed`, `failed`, `cancelled`, `timed_out`, ... */
  status: string;
  session_id?: string | null;
}

/** One event of a session's stream; `id` numbers the session's events from 1. */
export type CinchEvent =
  | { id: number; event: "session.updated"; data: Session }
  | { id: number; event: "message.created" | "message.updated"; data: Message }
  | { id: number; event: "tool.progress"; data: ToolProgress }
  | { id: number; event: "tool.ended"; data: ToolEnded };

/** How to follow a stream. */
export interface FollowOptions {
  /** Start after this event (default: from the first). */
  lastEventId?: number;
  /** Stops following. */
  signal?: AbortSignal;
  /** The wait before opening the stream again (default 500 ms, or the server's `retry:`). */
  reconnectDelayMs?: number;
  /** Openings in a row that may fail before following gives up (default 10). */
  maxFailures?: number;
  /**
   * A connection silent this long is taken for dead and opened again
   * (default 45 s; cinch sends a comment every 15 s on a quiet stream).
   */
  idleTimeoutMs?: number;
  /** Called before each reopening, with the id it resumes after. */
  onReconnect?: (lastEventId: number | undefined) => void;
}

/** One event's fields, as the text of the stream spells them. */
interface Fields {
  id?: string;
  event?: string;
  data: string[];
}

/** Splits a stream's text into events, across chunks. */
class Parser {
  private buffer = "";
  private fields: Fields = { data: [] };
  /** The server's `retry:` advice, in ms. */
  retryMs: number | undefined;

  /** The events `chunk` completes. */
  feed(chunk: string): Fields[] {
    this.buffer += chunk;
    const done: Fields[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      // A lone CR at the end may be half of a CRLF still on its way.
      if (end < 0 || (end === this.buffer.length - 1 && this.buffer[end] === "\r")) {
        break;
      }
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(this.buffer.startsWith("\r\n", end) ? end + 2 : end + 1);
      if (line === "") {
        if (this.fields.data.length > 0) {
          done.push(this.fields);
        }
        this.fields = { data: [] };
        continue;
      }
      if (line.startsWith(":")) {
        continue;
      }
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) {
        value = value.slice(1);
      }
      if (name === "data") {
        this.fields.data.push(value);
      } else if (name === "event") {
        this.fields.event = value;
      } else if (name === "id") {
        this.fields.id = value;
      } else if (name === "retry" && /^\d+$/.test(value)) {
        this.retryMs = Number(value);
      }
    }
    return done;
  }
}

function toEvent(fields: Fields): CinchEvent {
  const text = fields.data.join("\n");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = text;
  }
  return { id: Number(fields.id), event: fields.event ?? "message", data } as CinchEvent;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/**
 * The events of the stream at `url`, reopened after every drop until the
 * caller stops iterating (or aborts `signal`). An error answer (a problem)
 * ends it with that error; so do `maxFailures` failed openings in a row.
 */
export async function* followEvents(
  url: string,
  headers: Record<string, string>,
  options: FollowOptions = {},
  fetchFn: (request: Request) => Promise<Response> = (request) => fetch(request),
): AsyncGenerator<CinchEvent, void, undefined> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let lastEventId = options.lastEventId;
  let failures = 0;
  let retryMs = options.reconnectDelayMs ?? 500;
  const maxFailures = options.maxFailures ?? 10;
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  try {
    for (let opening = 0; !stop.signal.aborted; opening++) {
      if (opening > 0) {
        await sleep(retryMs, stop.signal);
        if (stop.signal.aborted) {
          return;
        }
        options.onReconnect?.(lastEventId);
      }
      // Each connection can be given up on its own when it goes silent.
      const connection = new AbortController();
      let silence: ReturnType<typeof setTimeout> | undefined;
      const heard = () => {
        clearTimeout(silence);
        silence = setTimeout(() => connection.abort(new Error("the event stream went silent")), idleTimeoutMs);
      };
      const request = new Request(url, {
        headers: {
          ...headers,
          Accept: "text/event-stream",
          ...(lastEventId === undefined ? {} : { "Last-Event-ID": String(lastEventId) }),
        },
        signal: AbortSignal.any([stop.signal, connection.signal]),
      });
      const parser = new Parser();
      let connected = false;
      try {
        heard();
        const response = await fetchFn(request);
        await throwIfProblem(response);
        if (!response.ok || !response.body) {
          throw new Error(`the event stream answered ${response.status}`);
        }
        // A stream that opened counts as a success, however it ends.
        connected = true;
        failures = 0;
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) {
              break;
            }
            heard();
            for (const fields of parser.feed(value)) {
              const event = toEvent(fields);
              if (Number.isFinite(event.id)) {
                lastEventId = event.id;
              }
              // The caller's time with an event is not the stream's silence.
              clearTimeout(silence);
              yield event;
              heard();
            }
          }
        } finally {
          reader.cancel().catch(() => {});
        }
      } catch (error) {
        if (stop.signal.aborted) {
          return;
        }
        if (error instanceof ProblemError && error.status < 500) {
          throw error;
        }
        if (!connected) {
          failures += 1;
          if (failures >= maxFailures) {
            throw error;
          }
        }
      } finally {
        // Also when the caller stops iterating mid-stream.
        clearTimeout(silence);
      }
      retryMs = parser.retryMs ?? retryMs;
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
}
