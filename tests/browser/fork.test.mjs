// Fork and Compare in the web app, in a real headless Chromium, against the
// `cinch serve` that host/tests/it/app.rs starts. It reads:
//   CINCH_URL, CINCH_TOKEN        the server and its admin token
//   CINCH_CHROMIUM, CINCH_PROFILE the browser and a fresh profile folder
//   CINCH_SCREENSHOTS             where screenshots go (their paths are printed)
//   CINCH_FAKE_SCRIPT             the fake CLI's script file, rewritten before each turn
//   CINCH_SCRIPT_SOURCE, CINCH_SCRIPT_FORK  the fake CLI's scripts: the first session's turn, the fork's
//   CINCH_ENVIRONMENT             the id of the environment the task runs in
// Run it through `cargo test -p cinch --test it -- app::fork_and_compare`.

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
  await reportFailure({ page, problems }, ok, "fork", error);
} finally {
  await context.close();
}

async function run() {
  const [account] = await api("GET", "/accounts");
  const accountPath = `/accounts/${account.id}`;
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), env("CINCH_SCRIPT_SOURCE"));
  const task = await api("POST", `${accountPath}/tasks`, {
    title: "Pick a greeting",
    prompt: "Write greeting.txt.",
    environment_id: env("CINCH_ENVIRONMENT"),
  });
  const [source] = await api("GET", `${accountPath}/tasks/${task.id}/sessions`);
  const sourcePath = `${accountPath}/tasks/${task.id}/sessions/${source.id}`;
  await idleWithTurns(sourcePath, 1);

  await page.goto(BASE);
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tasks" }).waitFor();
  await page.goto(`${BASE}/#/tasks/${task.id}/sessions/${source.id}`);
  const block = page.locator(".block").first();
  await eventually("the turn's block done", async () => (await block.getAttribute("data-status")) === "completed");
  assert.equal(await page.getByRole("link", { name: "Compare sessions" }).count(), 0, "one session: nothing to compare");
  ok("a task with one ended turn shows its block, and no Compare link");

  // Fork from the block: the form opens, and the new session opens once made.
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), env("CINCH_SCRIPT_FORK"));
  const fork = block.getByRole("button", { name: "Fork", exact: true });
  await fork.click();
  assert.equal(await fork.getAttribute("aria-expanded"), "true");
  const form = page.getByRole("form", { name: "Fork from this turn" });
  assert.equal(await form.getByLabel("Harness").inputValue(), "claude");
  await form.getByLabel("First message (optional)").fill("Say it the other way.");
  await page.screenshot({ path: path.join(SHOTS, "fork-form.png") });
  await form.getByRole("button", { name: "Fork here" }).click();
  await eventually("the fork's page", () => !page.url().endsWith(source.id) && page.url().includes("/sessions/"));
  const forkId = decodeURIComponent(page.url().split("/sessions/")[1]);
  const forked = await api("GET", `${accountPath}/tasks/${task.id}/sessions/${forkId}`);
  assert.deepEqual(forked.forked_from, { session_id: source.id, turn_id: (await api("GET", `${sourcePath}/messages`)).find((m) => m.type === "assistant").turn.turn_id });
  await idleWithTurns(`${accountPath}/tasks/${task.id}/sessions/${forkId}`, 1);
  await eventually("the fork's own block", async () => (await page.locator(".block").count()) === 2);
  assert.equal(await page.locator(".step.inherited").count(), 2, "the source's message and turn show as inherited");
  await eventually("two sessions listed", async () => (await page.locator(".sessions li").count()) === 2);
  ok("Fork on a block makes a session from that turn and opens it, the source's conversation inherited");

  // Compare: one column per session, the differing file, the diff of two.
  await page.getByRole("link", { name: "Compare sessions" }).click();
  const columns = page.locator(".compare-column");
  await eventually("two columns", async () => (await columns.count()) === 2);
  assert.match(await columns.nth(0).innerText(), /Hello\./);
  assert.match(await columns.nth(1).innerText(), /Howdy\./);
  assert.match(await columns.nth(1).innerText(), /1 file changed, \+1 −1/);
  const fact = (column, term) => columns.nth(column).locator("dt", { hasText: term }).locator("xpath=following-sibling::dd[1]");
  assert.deepEqual(await fact(1, "Changes").locator("li").allInnerTexts(), ["greeting.txt (+1 −1)"], "the fork's changed file under its Changes");
  const origin = fact(1, "Forked from").getByRole("link");
  assert.equal(await origin.innerText(), "1. claude", "a fork names the column it came from");
  assert.equal(await origin.getAttribute("href"), `#/tasks/${encodeURIComponent(task.id)}/sessions/${encodeURIComponent(source.id)}`);
  assert.equal(await fact(0, "Forked from").count(), 0, "the source was forked from nothing");
  assert.deepEqual(await page.locator(".compare-differing li").allInnerTexts(), ["greeting.txt"]);
  await page.getByLabel("From").selectOption({ index: 0 });
  await page.getByLabel("To").selectOption({ index: 1 });
  await page.getByRole("button", { name: "Show the diff" }).click();
  await eventually("the two-session diff", async () => (await page.locator(".compare-patch .diff-add").count()) > 0);
  assert.deepEqual(await page.locator(".compare-patch .diff-del").allInnerTexts(), ["-hello"]);
  assert.deepEqual(await page.locator(".compare-patch .diff-add").allInnerTexts(), ["+howdy"]);
  await page.screenshot({ path: path.join(SHOTS, "compare.png"), fullPage: true });
  ok("Compare shows both sessions side by side, the file that differs and the diff between them");

  // On a phone the columns are tabs.
  await page.setViewportSize({ width: 375, height: 740 });
  assert(await page.getByRole("tab", { name: "1. claude" }).isVisible());
  assert(await columns.nth(0).isVisible());
  assert(!(await columns.nth(1).isVisible()));
  await page.getByRole("tab", { name: "2. claude" }).click();
  assert(await columns.nth(1).isVisible());
  assert(!(await columns.nth(0).isVisible()));
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert(sideways <= 0, `the compare page scrolls sideways by ${sideways}px on a phone`);
  await page.screenshot({ path: path.join(SHOTS, "compare-phone.png"), fullPage: true });
  ok("on a narrow screen the sessions are tabs, one column at a time");
}
