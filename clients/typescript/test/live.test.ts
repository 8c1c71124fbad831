/**
 * The TypeScript SDK against a live `cinch serve` whose claude is the fake
 * CLI (clients/test starts it and names it in CINCH_TEST_*): an environment
 * and a task made through a relay that loses an answer, the session's events
 * followed to the turn's end across a cut connection, its messages, an
 * aborted turn, and problems as typed errors.
 */

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { Cinch, ConflictError, NotFoundError, ValidationError, type CinchEvent } from "../src/index.js";
import { Proxy } from "./proxy.js";

const env = (name: string): string => {
  const value = process.env[name];
  assert.ok(value, `${name} is set by clients/test`);
  return value;
};

const server = new URL(env("CINCH_TEST_URL"));
const token = env("CINCH_TEST_TOKEN");
const repository = env("CINCH_TEST_REPO");
const script = env("CINCH_TEST_SCRIPT");

/** The lines claude prints for a turn that uses `tools` tools and answers `text`. */
function claudeTurn(session: string, text: string, tools: number): unknown[] {
  const toolUses = Array.from({ length: tools }, (_, n) => ({
    type: "assistant",
    session_id: session,
    message: { content: [{ type: "tool_use", id: `t${n}`, name: "Bash", input: { command: `echo ${n}` } }] },
  }));
  return [
    { type: "system", subtype: "init", session_id: session, model: "m" },
    ...toolUses,
    { type: "assistant", session_id: session, message: { content: [{ type: "text", text }] } },
    { type: "result", subtype: "success", is_error: false, result: text, session_id: session },
  ];
}

/** The status of an assistant message's turn. */
function turnStatus(message: { turn?: unknown }): unknown {
  return (message.turn as { status?: unknown } | null | undefined)?.status;
}

/** What the fake claude does on its next turn. */
function nextTurn(fields: Record<string, unknown>): void {
  writeFileSync(script, JSON.stringify(fields));
}

let proxy: Proxy;
let cinch: Cinch;
let account: string;

before(async () => {
  proxy = await Proxy.start(Number(server.port));
  cinch = new Cinch({ baseUrl: proxy.url, token, retry: { baseDelayMs: 50 } });
  account = await cinch.accountId();
});

after(async () => {
  await proxy.close();
});

test("a task's events, followed across a cut connection, its messages and an aborted turn", async () => {
  const api = cinch.api;

  // An environment on the test's repository.
  const environmentsBefore = (await api.GET("/v1/accounts/{account}/environments", { params: { path: { account } } })).data!.data;
  const created = await api.POST("/v1/accounts/{account}/environments", {
    params: { path: { account } },
    body: { name: "sdk-typescript", repository },
  });
  const environment = created.data!.data;
  const environmentsAfter = (await api.GET("/v1/accounts/{account}/environments", { params: { path: { account } } })).data!.data;
  assert.equal(environmentsAfter.length, environmentsBefore.length + 1);
  assert.ok(environmentsAfter.some((e) => e.id === environment.id && e.name === "sdk-typescript"));

  // A task whose answer is lost on the way: the retry carries the same key,
  // so cinch replays the first answer instead of making a second task.
  nextTurn({ lines: claudeTurn("sdk-ts", "Done: the flag is in.", 30), line_delay_ms: 40 });
  const tasksBefore = (await api.GET("/v1/accounts/{account}/tasks", { params: { path: { account } } })).data!.data;
  const keysBefore = proxy.postKeys.length;
  proxy.swallowNextPostAnswer();
  const started = await cinch.startTask(account, {
    title: "Add a flag",
    prompt: "Add a --verbose flag.",
    environment_id: environment.id,
  });
  const task = started.task;
  const keys = proxy.postKeys.slice(keysBefore);
  assert.equal(keys.length, 2, `one POST and its retry: ${keys}`);
  assert.match(keys[0], /^[0-9a-f-]{36}$/);
  assert.equal(keys[1], keys[0]);
  const tasksAfter = (await api.GET("/v1/accounts/{account}/tasks", { params: { path: { account } } })).data!.data;
  assert.equal(tasksAfter.length, tasksBefore.length + 1);
  assert.deepEqual(tasksAfter.filter((t) => t.id === task.id).map((t) => t.title), ["Add a flag"]);
  const sessions = (await api.GET("/v1/accounts/{account}/tasks/{task}/sessions", {
    params: { path: { account, task: task.id } },
  })).data!.data;
  assert.deepEqual(sessions.map((s) => s.id), [started.session!.id]);
  const session = started.session!.id;

  // Its events to the turn's end; the stream is cut once, mid-turn.
  const events: CinchEvent[] = [];
  const resumedAfter: (number | undefined)[] = [];
  let cut = 0;
  let ended = false;
  for await (const event of cinch.events(account, task.id, session, {
    reconnectDelayMs: 100,
    onReconnect: (id) => resumedAfter.push(id),
  })) {
    events.push(event);
    if (event.event === "tool.progress" && cut === 0 && events.filter((e) => e.event === "tool.progress").length === 5) {
      cut = proxy.cutEventStreams();
    }
    ended ||= event.event === "tool.ended";
    if (ended && event.event === "session.updated" && event.data.status === "idle") {
      break;
    }
  }
  assert.equal(cut, 1, "the stream was cut mid-turn");
  assert.equal(resumedAfter.length, 1);
  assert.ok(resumedAfter[0]! > 0);
  assert.ok(events.some((e) => e.id > resumedAfter[0]!), "events came after the cut");
  assert.equal(proxy.eventStreams, 2);
  // Numbered from 1 with no gap and no repeat, across the cut.
  assert.deepEqual(events.map((e) => e.id), events.map((_, i) => i + 1));
  // The same events as one uncut reading of the stream.
  const whole: CinchEvent[] = [];
  for await (const event of cinch.events(account, task.id, session)) {
    whole.push(event);
    if (event.id === events.at(-1)!.id) {
      break;
    }
  }
  assert.deepEqual(whole, events);
  const turnEnd = events.find((e) => e.event === "tool.ended");
  assert.equal(turnEnd?.event === "tool.ended" && turnEnd.data.status, "completed");
  assert.equal(turnEnd?.event === "tool.ended" && turnEnd.data.run_id, session);
  const progress = events.filter((e) => e.event === "tool.progress").length;
  assert.ok(progress >= 30, `every tool's progress came: ${progress}`);

  // The conversation: the prompt and the answer.
  const messages = (await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages", {
    params: { path: { account, task: task.id, session } },
  })).data!.data;
  assert.deepEqual(messages.map((m) => m.type), ["user", "assistant"]);
  assert.equal(messages[0].content, "Add a --verbose flag.");
  assert.equal(messages[1].content, "Done: the flag is in.");
  assert.equal(turnStatus(messages[1]), "completed");

  // A turn that hangs, aborted; waitForIdle waits past the moment the
  // message is queued and the session still reads idle.
  nextTurn({ lines: claudeTurn("sdk-ts", "never said", 0).slice(0, 1), hang_ms: 60_000 });
  await api.POST("/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages", {
    params: { path: { account, task: task.id, session } },
    body: { message: "Now the tests." },
  });
  let running = await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}", {
    params: { path: { account, task: task.id, session } },
  });
  for (let tries = 0; running.data!.data.status !== "running" && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    running = await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}", {
      params: { path: { account, task: task.id, session } },
    });
  }
  assert.equal(running.data!.data.status, "running");
  const aborted = await api.POST("/v1/accounts/{account}/tasks/{task}/sessions/{session}/abort", {
    params: { path: { account, task: task.id, session } },
  });
  assert.equal(aborted.response.status, 202);
  const idle = await cinch.waitForIdle(account, task.id, session, { timeoutMs: 30_000, intervalMs: 100 });
  assert.equal(idle.status, "idle");
  const afterAbort = (await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages", {
    params: { path: { account, task: task.id, session } },
  })).data!.data;
  assert.deepEqual(afterAbort.map((m) => m.type), ["user", "assistant", "user", "assistant"]);
  assert.equal(turnStatus(afterAbort[3]), "cancelled");

  // waitForIdle does not answer while a message sent to the idle session
  // still waits for its turn.
  nextTurn({ lines: claudeTurn("sdk-ts", "Tests added.", 3), line_delay_ms: 100 });
  await api.POST("/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages", {
    params: { path: { account, task: task.id, session } },
    body: { message: "Add the tests again." },
  });
  await cinch.waitForIdle(account, task.id, session, { timeoutMs: 30_000, intervalMs: 20 });
  const last = (await api.GET("/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages", {
    params: { path: { account, task: task.id, session } },
  })).data!.data.at(-1)!;
  assert.equal(last.content, "Tests added.");
  assert.equal(turnStatus(last), "completed");

  // A closed session is as idle as it gets: waitForIdle answers with it.
  await api.PATCH("/v1/accounts/{account}/tasks/{task}/sessions/{session}", {
    params: { path: { account, task: task.id, session } },
    body: { status: "closed" },
  });
  const closed = await cinch.waitForIdle(account, task.id, session, { timeoutMs: 5000, intervalMs: 50 });
  assert.equal(closed.status, "closed");

  // Problems are typed errors.
  await assert.rejects(
    api.POST("/v1/accounts/{account}/tasks/{task}/sessions/{session}/abort", {
      params: { path: { account, task: task.id, session } },
    }),
    (error: unknown) => error instanceof ConflictError && error.status === 409,
  );
  await assert.rejects(
    api.GET("/v1/accounts/{account}/tasks/{task}", { params: { path: { account, task: "task_0000000000000000000000000000" } } }),
    (error: unknown) => error instanceof NotFoundError && error.code === "not_found",
  );
  await assert.rejects(
    api.POST("/v1/accounts/{account}/environments", {
      params: { path: { account } },
      // Deliberately wrong: the repository must be a string.
      body: { name: "broken", repository: 42 as unknown as string },
    }),
    (error: unknown) =>
      error instanceof ValidationError && error.errors.some((field) => field.field === "repository"),
  );
});
