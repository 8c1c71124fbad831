// Approvals in the web app, in a real headless Chromium, against the
// `cinch serve` that host/tests/it/app.rs starts. It reads:
//   CINCH_URL, CINCH_TOKEN        the server and its admin token
//   CINCH_CHROMIUM, CINCH_PROFILE the browser and a fresh profile folder
//   CINCH_SCREENSHOTS             where screenshots go (their paths are printed)
//   CINCH_ENVIRONMENT             an environment whose approval policy asks; its tasks run
//                                 `fake-acp`, which asks before it writes out.txt
//   CINCH_GATE                    the agent asks once this file exists
//   CINCH_FAKE_SCRIPT, CINCH_SCRIPT_QUESTION  the fake CLI's (`claude`) script file, and the
//                                 script that asks the user a question and waits
// Run it through `cargo test -p cinch --test it -- app::approvals_answered`.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { api, env, eventually, launch, reportFailure, stepper } from "./support.mjs";

const BASE = env("CINCH_URL");
const TOKEN = env("CINCH_TOKEN");
const SHOTS = env("CINCH_SCREENSHOTS");

const ok = stepper();

async function idleWithTurns(sessionPath, turns) {
  await eventually(`${sessionPath} idle after ${turns} turn(s)`, async () => {
    const session = await api("GET", sessionPath);
    assert(!session.close_reason, `${sessionPath}: ${session.close_reason}: ${session.error_message}`);
    return session.status === "idle" && session.usage.turns === turns;
  });
}

const { context, page, problems } = await launch();

try {
  await run();
  assert.deepEqual(problems, [], "the page logged errors");
  console.log(`${ok.step} passed, 0 failed`);
} catch (error) {
  await reportFailure({ page, problems }, ok, "approvals", error);
} finally {
  await context.close();
}

/** The session's one ended turn: its assistant message. */
async function endedTurn(sessionPath) {
  await idleWithTurns(sessionPath, 1);
  const messages = await api("GET", `${sessionPath}/messages`);
  return messages.find((message) => message.type === "assistant" && message.turn);
}

/** The titles the tasks list shows. */
async function listedTitles() {
  return page.locator(".task-row .task-title").allInnerTexts();
}

async function run() {
  const [account] = await api("GET", "/accounts");
  const accountPath = `/accounts/${account.id}`;
  const [admin] = await api("GET", `${accountPath}/members`);
  const start = async (title, harness = "fake-acp") => {
    const task = await api("POST", `${accountPath}/tasks`, {
      title, prompt: "Create out.txt", environment_id: env("CINCH_ENVIRONMENT"), harness,
    });
    const [session] = await api("GET", `${accountPath}/tasks/${task.id}/sessions`);
    return { task, session, sessionPath: `${accountPath}/tasks/${task.id}/sessions/${session.id}` };
  };
  const pending = async (sessionId) => api("GET", `${accountPath}/approvals?status=pending&session_id=${sessionId}`);

  await page.goto(BASE);
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tasks" }).waitFor();

  // The first task's agent waits at the gate: its page opens before it asks.
  const first = await start("Approve a write");
  await eventually("the first turn running", async () => (await api("GET", first.sessionPath)).status === "running");
  await page.goto(`${BASE}/#/tasks/${first.task.id}/sessions/${first.session.id}`);
  await page.getByRole("heading", { name: "Approve a write", level: 1 }).waitFor();
  await eventually("the live stream", async () => (await page.locator(".connection").getAttribute("data-state")) === "live");
  assert.equal(await page.locator(".approval-card").count(), 0, "nothing asked yet");
  assert.equal(await page.title(), "Approve a write — cinch");
  fs.writeFileSync(env("CINCH_GATE"), "");
  const card = page.locator(".approval-card");
  await eventually("the card, live", async () => (await card.count()) === 1);
  const [asked] = await pending(first.session.id);
  assert.equal(await card.getAttribute("data-approval"), asked.id);
  assert.equal(await card.getAttribute("data-status"), "pending");
  assert.match(await card.locator(".approval-head").innerText(), /Approval needed\s*execute · shell/);
  assert.equal(await card.locator(".approval-title").innerText(), "echo hello > out.txt");
  for (const name of ["Allow once", "Allow for this session", "Deny"]) {
    assert(await card.getByRole("button", { name, exact: true }).isVisible(), `${name} shows`);
  }
  await eventually("the count in the title", async () => (await page.title()) === "(1) Approve a write — cinch");
  await page.screenshot({ path: path.join(SHOTS, "approval-card.png"), fullPage: true });
  ok("the agent's request shows live as a card in the conversation, counted in the page title");

  // While it waits, the task is under Needs someone (though the admin owns it).
  await page.goto(`${BASE}/#/tasks`);
  await page.getByRole("button", { name: "Needs someone" }).click();
  await eventually("the waiting task under Needs someone", async () => (await listedTitles()).includes("Approve a write"));
  ok("the tasks list's Needs someone filter shows the task while its approval waits");

  // Allow once: the tool runs and the turn completes.
  await page.getByRole("link", { name: /Approve a write/ }).click();
  await eventually("the task page on its session", () => page.url().includes(`/sessions/${first.session.id}`));
  await eventually("the card again, loaded", async () => (await card.count()) === 1);
  assert.equal(await page.title(), "(1) Approve a write — cinch");
  await card.getByRole("button", { name: "Allow once" }).click();
  await eventually("the card decided", async () => (await card.getAttribute("data-status")) === "allowed");
  await eventually("who decided", async () => (await card.locator(".approval-outcome").innerText()) === `Allowed by ${admin.name}`);
  assert.equal(await card.getByRole("button").count(), 0, "a decided card offers no buttons");
  await eventually("the count gone from the title", async () => (await page.title()) === "Approve a write — cinch");
  const allowed = await endedTurn(first.sessionPath);
  assert.equal(allowed.content, "done (permission answered: allow-once)");
  assert(fs.existsSync(path.join(allowed.turn.workspace, "out.txt")), "the allowed tool wrote out.txt");
  await eventually("the agent's reply on the page", async () => (await page.locator("main").innerText()).includes("permission answered: allow-once"));
  await eventually("the decision in the conversation", async () =>
    (await page.locator(".step-internal").allInnerTexts()).some((text) => text.startsWith("Approval · ") && text.includes(`allowed by ${admin.id}`)));
  const [decided] = await api("GET", `${accountPath}/approvals?session_id=${first.session.id}`);
  assert.equal(decided.decided_by, admin.id);
  ok("Allow once lets the tool run: the card says who allowed it, the turn completes with the file written");

  await page.goto(`${BASE}/#/tasks`);
  await page.getByRole("button", { name: "Needs someone" }).click();
  await eventually("the decided task gone from Needs someone", async () => !(await listedTitles()).includes("Approve a write"));
  ok("once decided, the task leaves the Needs someone filter");

  // Deny with a note: the tool does not run, the agent is told and its turn completes.
  const second = await start("Refuse a write");
  await eventually("the second request waiting", async () => (await pending(second.session.id)).length === 1);
  await page.goto(`${BASE}/#/tasks/${second.task.id}`);
  await eventually("the task page on its session", () => page.url().includes(`/sessions/${second.session.id}`));
  await eventually("the waiting card", async () => (await card.count()) === 1);
  await eventually("the count in the title", async () => (await page.title()) === "(1) Refuse a write — cinch");
  await card.getByLabel("Note for the agent (optional)").fill("not in this repository");
  await card.getByRole("button", { name: "Deny" }).click();
  await eventually("the card denied", async () => (await card.getAttribute("data-status")) === "denied");
  await eventually("who denied, and the note", async () =>
    (await card.locator(".approval-outcome").innerText()) === `Denied by ${admin.name} — not in this repository`);
  assert.equal(await page.title(), "Refuse a write — cinch");
  const denied = await endedTurn(second.sessionPath);
  assert.equal(denied.content, "done (permission answered: reject-once)", "the agent was told");
  assert.equal(denied.turn.status, "completed");
  assert(!fs.existsSync(path.join(denied.turn.workspace, "out.txt")), "the denied tool did not run");
  const [refusal] = await api("GET", `${accountPath}/approvals?session_id=${second.session.id}`);
  assert.equal(refusal.status, "denied");
  assert.equal(refusal.message, "not in this repository");
  await page.screenshot({ path: path.join(SHOTS, "approval-denied.png"), fullPage: true });
  ok("Deny with a note refuses the tool: the card says who denied it and why, the agent is told and its turn completes");

  // A question (Claude Code's AskUserQuestion): its options as buttons, a text answer.
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), env("CINCH_SCRIPT_QUESTION"));
  const third = await start("Pick a greeting", "claude");
  await eventually("the question waiting", async () => (await pending(third.session.id)).length === 1);
  await page.goto(`${BASE}/#/tasks/${third.task.id}`);
  await eventually("the task page on its session", () => page.url().includes(`/sessions/${third.session.id}`));
  await eventually("the question's card", async () => (await card.count()) === 1);
  assert.match(await card.locator(".approval-head").innerText(), /The agent asks\s*AskUserQuestion/);
  assert.equal(await card.locator(".approval-title").innerText(), "Which greeting should I write?");
  assert.equal(await card.locator(".approval-input").count(), 0, "one question: its options are the buttons");
  assert.deepEqual(await card.locator(".approval-buttons").first().getByRole("button").allInnerTexts(), ["hello", "howdy"]);
  assert.equal(await card.getByRole("button", { name: "Allow once" }).count(), 0, "a question is answered, not allowed");
  assert(await card.getByLabel("Your answer").isVisible());
  await eventually("the count in the title", async () => (await page.title()) === "(1) Pick a greeting — cinch");
  await page.screenshot({ path: path.join(SHOTS, "approval-question.png"), fullPage: true });
  await card.getByRole("button", { name: "howdy", exact: true }).click();
  await eventually("the question answered", async () => (await card.getAttribute("data-status")) === "answered");
  await eventually("who answered what", async () =>
    (await card.locator(".approval-outcome").innerText()) === `Answered by ${admin.name}: howdy`);
  const [question] = await api("GET", `${accountPath}/approvals?session_id=${third.session.id}`);
  assert.equal(question.kind, "question");
  assert.equal(question.answer, "howdy");
  assert.equal(await page.title(), "Pick a greeting — cinch");
  await api("POST", `${third.sessionPath}/abort`);
  ok("a question shows its options; choosing one answers it, and the card says who answered what");
}
