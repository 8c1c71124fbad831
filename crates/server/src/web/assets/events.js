// A live event stream read with fetch: EventSource cannot send the
// Authorization header, so this parses Server-Sent Events itself. A dropped
// connection is retried with backoff and resumed with Last-Event-ID, so no
// event is lost or seen twice.

import { UNAUTHORIZED, authHeaders } from "./api.js";

/** The server sends a comment every 15 s; this long without a byte means the connection is dead. */
const SILENCE_MS = 45_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 15_000;

/**
 * Follows the stream at `path`, calling `onEvent(name, data, id)` for each
 * event and `onState("live" | "reconnecting" | "stopped")` as the
 * connection changes. Returns a function that stops following.
 */
export function follow(path, { onEvent, onState = () => {} }) {
  let lastId = null;
  let stopped = false;
  let controller = null;
  let failures = 0;

  const dispatch = (event) => {
    if (event.id !== null) lastId = event.id;
    if (event.data === null) return;
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      data = event.data;
    }
    try {
      onEvent(event.name || "message", data, event.id);
    } catch (error) {
      // One event the page cannot show must not end the stream.
      console.error("event handler failed", event, error);
    }
  };

  const connect = async () => {
    while (!stopped) {
      controller = new AbortController();
      let watchdog = null;
      const feed = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => controller.abort(), SILENCE_MS);
      };
      try {
        const headers = { ...authHeaders(), Accept: "text/event-stream" };
        if (lastId !== null) headers["Last-Event-ID"] = lastId;
        feed();
        const response = await fetch(path, { headers, signal: controller.signal, cache: "no-store" });
        if (response.status === 401) {
          window.dispatchEvent(new Event(UNAUTHORIZED));
          break;
        }
        if (!response.ok) throw new Error(`the event stream answered ${response.status}`);
        failures = 0;
        onState("live");
        await read(response.body, feed, dispatch);
      } catch (error) {
        if (stopped) break;
        console.warn("event stream dropped", error);
      } finally {
        clearTimeout(watchdog);
      }
      if (stopped) break;
      onState("reconnecting");
      const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** failures);
      failures += 1;
      // Jitter keeps many pages from reconnecting to a restarted server in step.
      await new Promise((resolve) => setTimeout(resolve, delay * (0.75 + Math.random() / 2)));
    }
    onState("stopped");
  };

  connect();
  return () => {
    stopped = true;
    controller?.abort();
  };
}

/** Reads an event stream body to its end, calling `feed` on every chunk and `dispatch` on every event. */
async function read(body, feed, dispatch) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new Parser(dispatch);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    feed();
    parser.push(value);
  }
}

/** The Server-Sent Events line format: fields until a blank line ends an event. */
class Parser {
  constructor(dispatch) {
    this.dispatch = dispatch;
    this.buffer = "";
    this.reset();
  }

  reset() {
    this.event = { id: null, name: "", data: null };
  }

  push(text) {
    this.buffer += text;
    // A line ends at \r\n, \n or \r; a \r at the very end may be half of a \r\n.
    const lines = this.buffer.split(/\r\n|\n|\r(?!$)/);
    this.buffer = lines.pop();
    for (const line of lines) this.line(line);
  }

  line(line) {
    if (line === "") {
      if (this.event.data !== null || this.event.id !== null) this.dispatch(this.event);
      this.reset();
      return;
    }
    if (line.startsWith(":")) return; // a keep-alive comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.event.data = this.event.data === null ? value : `${this.event.data}\n${value}`;
    else if (field === "event") this.event.name = value;
    else if (field === "id" && !value.includes("\0")) this.event.id = value;
  }
}
