// New task's key note in a real headless Chromium, against the `cinch serve`
// that host/tests/it/app.rs starts with no model key of its own for its turns
// (ANTHROPIC_API_KEY is not passed on). It reads:
//   CINCH_URL, CINCH_TOKEN        the server and its admin token
//   CINCH_CHROMIUM, CINCH_PROFILE the browser and a fresh profile folder
//   CINCH_SCREENSHOTS             where screenshots go
//   CINCH_ENVIRONMENT             the id of the environment "bare", which has no secret
// The note says Claude Code has no key for a task on "bare", takes the key and adds it as
// the environment's secret; the environment then has it, and a task on it runs.
// Run it through `cargo test -p cinch --test it -- app::new_task_offers_to_add_the_missing_key`.

import assert from "node:assert/strict";
import path from "node:path";
import { api, env, launch, reportFailure, stepper } from "./support.mjs";

const BASE = env("CINCH_URL");
const TOKEN = env("CINCH_TOKEN");
const ENVIRONMENT = env("CINCH_ENVIRONMENT");

const ok = stepper();
const { context, page, problems } = await launch();

try {
  const account = (await api("GET", "/accounts"))[0].id;
  const environmentPath = `/accounts/${account}/environments/${ENVIRONMENT}`;
  assert.deepEqual((await api("GET", environmentPath)).secret_names, [], "bare starts without secrets");

  await page.goto(BASE);
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tasks" }).waitFor();
  await page.getByRole("link", { name: "New task" }).first().click();
  await page.getByLabel("Prompt").fill("Say hello");
  await page.getByLabel("Environment").selectOption(ENVIRONMENT);
  await page.getByLabel("Harness").selectOption("claude");

  const note = page.locator(".credential-note");
  await note.getByText("Claude Code has no key for this task").waitFor();
  await note.getByText("Other ways to give it a key").click();
  await note.getByText("pass_env").first().waitFor();
  const shot = path.join(env("CINCH_SCREENSHOTS"), "credentials-missing.png");
  await note.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);

  // An empty value is refused in the page; the key is then added as the environment's secret.
  await note.getByRole("button", { name: "Add ANTHROPIC_API_KEY to bare" }).click();
  await note.getByText("Enter the key's value first.").waitFor();
  await note.getByLabel("ANTHROPIC_API_KEY").fill("sk-added-in-the-app");
  await note.getByRole("button", { name: "Add ANTHROPIC_API_KEY to bare" }).click();
  await note.getByText("Claude Code gets its key from this environment's secret ANTHROPIC_API_KEY.").waitFor();
  assert.deepEqual((await api("GET", environmentPath)).secret_names, ["ANTHROPIC_API_KEY"]);
  assert(!(await page.content()).includes("sk-added-in-the-app"), "the key's value stays out of the page");
  ok("the note says the key is missing and adds it as the environment's secret");

  // The task now runs.
  await page.getByRole("button", { name: "Start task" }).click();
  // The task's page names its session in the URL once loaded (`#/tasks/T` becomes
  // `#/tasks/T/sessions/S` at once, too soon to be seen under load): wait for that one.
  await page.waitForURL(/#\/tasks\/[^/]+\/sessions\/[^/]+$/);
  const [task, sessionId] = page.url().split("#/tasks/")[1].split("/sessions/").map(decodeURIComponent);
  const sessionPath = `/accounts/${account}/tasks/${task}/sessions/${sessionId}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const session = await api("GET", sessionPath);
    assert(!session.close_reason, `the task's turn failed: ${session.close_reason}: ${session.error_message}`);
    if (session.status === "idle") break;
    assert(Date.now() < deadline, `the task's session stayed ${session.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  ok("a task on the environment runs with its key");
  assert.deepEqual(problems, [], "the page logged errors");
} catch (error) {
  await reportFailure({ page, problems }, ok, "credentials", error);
} finally {
  await context.close();
}
