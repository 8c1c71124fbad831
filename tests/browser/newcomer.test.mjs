// A newcomer's path in the app alone, in a real headless Chromium against
// the `cinch serve` that host/tests/it/app.rs starts (the fake CLI as claude):
// Environments → New environment (a field's problem shown by the field, a
// write-only secret), a task in it whose state changes live (its turn's
// Revert and Fork one size, its Result panel there), the Diff view (file
// tree, side by side, highlighting, whole file), a failed setup (no Result
// panel: no work tree) and a failed turn that read "failed" with their cause,
// Agents, Tokens and Usage.
// It reads:
//   CINCH_URL, CINCH_TOKEN        the server and its admin token
//   CINCH_CHROMIUM, CINCH_PROFILE the browser and a fresh profile folder
//   CINCH_SCREENSHOTS             where screenshots go (their paths are printed)
//   CINCH_REPO                    the repository the newcomer's environment uses
//   CINCH_FAKE_SCRIPT             the fake CLI's script file, rewritten before each turn
//   CINCH_SCRIPT_CHANGE, CINCH_SCRIPT_FAIL  the scripts of the turn that changes files, and of the failing one
// Run it through `cargo test -p cinch --test it -- app::a_newcomers_path`.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { env, eventually, launch, reportFailure, request as api, stepper } from "./support.mjs";

const BASE = env("CINCH_URL");
const TOKEN = env("CINCH_TOKEN");
const SHOTS = env("CINCH_SCREENSHOTS");
const REPO = env("CINCH_REPO");
const SECRET_VALUE = "s3cret-deploy-value-8f2a";

const ok = stepper();

const started = Date.now();
/** Fails when the page scrolls sideways: its content is wider than the window. */
async function noSideways(what) {
  const { scroll, client } = await page.evaluate(() =>
    ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert(scroll <= client, `${what}: the page scrolls sideways (${scroll}px wide in a ${client}px window)`);
}

async function screenshot(name, locator) {
  const file = path.join(SHOTS, name);
  if (locator) await locator.screenshot({ path: file, animations: "disabled" });
  else await page.screenshot({ path: file, fullPage: true, animations: "disabled" });
  console.log(`screenshot: ${file}`);
}

const { context, page, problems } = await launch({ viewport: { width: 1200, height: 900 } });
// The app asks confirmation before a revoke: the newcomer says yes.
page.on("dialog", (dialog) => dialog.accept());

try {
  await run();
  // The failures the test causes: the refused environment (422), the revoked token (401).
  const unexpected = problems.filter((text) => !/status of (422|401)/.test(text));
  assert.deepEqual(unexpected, [], "the page logged errors");
  console.log(`${ok.step} passed, 0 failed, the path took ${((Date.now() - started) / 1000).toFixed(1)}s`);
} catch (error) {
  await reportFailure({ page, problems }, ok, "newcomer", error);
} finally {
  await context.close();
}

async function run() {
  const nav = page.getByRole("navigation", { name: "Main" });
  await page.goto(BASE);
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tasks" }).waitFor();
  const account = (await api("GET", "/accounts")).json.data[0].id;
  ok("sign in");

  // New task, with no environment yet, points to New environment.
  await nav.getByRole("link", { name: "New task" }).click();
  await page.getByRole("link", { name: "New environment" }).waitFor();
  ok("New task, with no environment, links to New environment");

  // Environments → New environment. A relative repository: the API's problem shows by the field.
  await nav.getByRole("link", { name: "Environments" }).click();
  await page.getByRole("heading", { name: "Environments", level: 1 }).waitFor();
  await page.getByText("No environments yet").waitFor();
  await page.getByRole("button", { name: "New environment" }).click();
  await page.getByRole("heading", { name: "New environment", level: 1 }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill("my-project");
  await page.getByLabel("Repository").fill("projects/mine");
  await page.getByLabel("Setup commands").fill("echo preparing the workspace");
  await page.getByRole("button", { name: "Add a variable" }).click();
  await page.getByLabel("Variable name").fill("APP_ENV");
  await page.getByLabel("Variable value").fill("test");
  await page.getByLabel("Secret name").fill("DEPLOY_TOKEN");
  await page.getByLabel("Secret value").fill(SECRET_VALUE);
  assert.equal(await page.getByLabel("Secret value").getAttribute("type"), "password");
  await page.getByRole("button", { name: "Create environment" }).click();
  const repositoryField = page.locator(".field", { has: page.getByLabel("Repository") });
  const repositoryError = repositoryField.locator(".field-error");
  await repositoryError.waitFor();
  const refused = await api("POST", `/accounts/${account}/environments`, { name: "probe", repository: "projects/mine" });
  assert.equal(refused.status, 422);
  const apiMessage = refused.json.errors.find((fault) => fault.field === "repository").message;
  assert.equal(await repositoryError.innerText(), apiMessage, "the field shows the API's own words");
  assert.equal(await page.getByLabel("Repository").getAttribute("aria-invalid"), "true");
  assert.match(await page.getByRole("alert").first().innerText(), /Couldn't create the environment/);
  assert.equal((await api("GET", `/accounts/${account}/environments`)).json.data.length, 0, "nothing was made");
  await screenshot("newcomer-environment-problem.png", page.locator("main"));
  ok(`a refused repository shows the API's problem by the field: "${apiMessage}"`);

  await page.getByLabel("Repository").fill(REPO);
  await page.getByRole("button", { name: "Create environment" }).click();
  await page.getByRole("heading", { name: "Environments", level: 1 }).waitFor();
  const listed = page.locator(".settings-row", { hasText: "my-project" });
  await listed.waitFor();
  assert.match(await listed.innerText(), /1 secret · 1 setup command · network: open/);
  const read = await api("GET", `/accounts/${account}/environments`);
  const made = read.json.data.find((entry) => entry.name === "my-project");
  assert.deepEqual(made.secret_names, ["DEPLOY_TOKEN"]);
  assert.deepEqual(made.env, { APP_ENV: "test" });
  assert.deepEqual(made.setup, ["echo preparing the workspace"]);
  assert.equal(made.repository, REPO);
  assert(!read.text.includes(SECRET_VALUE), "the secret's value is not in the API's answer");
  ok("create an environment with a secret; over HTTP its name is there, its value is not");

  // Its edit form names the secret and shows no value.
  await listed.getByRole("link", { name: "my-project" }).click();
  await page.getByRole("heading", { name: "my-project", level: 1 }).waitFor();
  await page.getByRole("list", { name: "Secrets kept" }).getByText("DEPLOY_TOKEN", { exact: true }).waitFor();
  assert.equal(await page.getByLabel("New value for DEPLOY_TOKEN").inputValue(), "");
  assert(!(await page.content()).includes(SECRET_VALUE), "the page holds no secret value");
  await screenshot("newcomer-environment-edit.png", page.locator("main"));
  ok("the edit form lists the secret by name, its value nowhere on the page");

  // Edit: a second secret, a new value for the first, a host list; then the second removed again.
  await page.getByLabel("New value for DEPLOY_TOKEN").fill(`${SECRET_VALUE}-2`);
  await page.getByRole("button", { name: "Add a secret" }).click();
  assert(await page.getByLabel("Secret name").evaluate((node) => node === document.activeElement), "the new row takes the focus");
  await page.getByLabel("Secret name").fill("NPM_TOKEN");
  await page.getByLabel("Secret value").fill("npm-secret-value-77");
  await page.getByLabel("Limit the network to the allowed hosts").check();
  await page.getByLabel("Allowed hosts", { exact: true }).fill("registry.npmjs.org\n*.example.com");
  await page.getByRole("button", { name: "Save environment" }).click();
  await page.getByRole("heading", { name: "Environments", level: 1 }).waitFor();
  await page.locator(".settings-row", { hasText: "2 secrets" }).waitFor();
  let edited = await api("GET", `/accounts/${account}/environments/${made.id}`);
  assert.deepEqual(edited.json.data.secret_names, ["DEPLOY_TOKEN", "NPM_TOKEN"]);
  assert.deepEqual(edited.json.data.allowed_hosts, ["registry.npmjs.org", "*.example.com"]);
  assert(!edited.text.includes(SECRET_VALUE) && !edited.text.includes("npm-secret-value-77"), "no value in the answer");
  await page.locator(".settings-row", { hasText: "my-project" }).getByRole("link", { name: "my-project" }).click();
  await page.getByRole("button", { name: "Remove the secret NPM_TOKEN" }).click();
  await page.getByLabel("Limit the network to the allowed hosts").uncheck();
  await page.getByRole("button", { name: "Save environment" }).click();
  await page.locator(".settings-row", { hasText: "1 secret · 1 setup command · network: open" }).waitFor();
  edited = await api("GET", `/accounts/${account}/environments/${made.id}`);
  assert.deepEqual(edited.json.data.secret_names, ["DEPLOY_TOKEN"]);
  assert.equal(edited.json.data.allowed_hosts, null);
  ok("edit: a secret added and given a new value, hosts limited; then the secret removed and the network opened");

  // A task in it: its state changes live, running then waiting for a message.
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), env("CINCH_SCRIPT_CHANGE"));
  const startedTask = Date.now();
  await nav.getByRole("link", { name: "New task" }).click();
  await eventually("the environment in New task", async () =>
    (await page.getByLabel("Environment").locator("option", { hasText: "my-project" }).count()) === 1);
  assert(await page.getByRole("link", { name: "New environment" }).isHidden());
  await page.getByLabel("Prompt").fill("Make greet() say hello and raise the retries to 5.");
  await page.getByLabel("Title").fill("Greetings");
  await page.getByLabel("Environment").selectOption({ label: `my-project — ${REPO}` });
  await page.getByRole("button", { name: "Start task" }).click();
  await page.getByRole("heading", { name: "Greetings", level: 1 }).waitFor();
  const taskChip = page.locator(".task-head .chip");
  const sessionChip = page.locator(".sessions .chip");
  await eventually("the running state", async () => (await taskChip.innerText()) === "running");
  assert.equal(await sessionChip.innerText(), "running");
  await screenshot("newcomer-running.png", page.locator("main"));
  await eventually("the turn's end, shown live", async () => (await taskChip.innerText()) === "waiting", 60_000);
  assert.equal(await sessionChip.innerText(), "waiting");
  assert.match(await page.locator(".session-facts").innerText(), /^waiting · claude/);
  const turnSeconds = ((Date.now() - startedTask) / 1000).toFixed(1);
  ok(`a task in the environment: running, then waiting for a message, live (${turnSeconds}s from New task)`);

  // The ended turn's actions: Revert and Fork side by side, one size.
  const actions = page.locator(".block").first().locator(".block-actions");
  await actions.getByRole("button", { name: "Fork", exact: true }).waitFor();
  const sizes = await actions.locator(":scope > button").evaluateAll((buttons) => buttons.map((button) => {
    const box = button.getBoundingClientRect();
    return { name: button.textContent, height: box.height, fontSize: getComputedStyle(button).fontSize };
  }));
  assert.deepEqual(sizes.map((size) => size.name), ["Revert", "Fork"]);
  assert.equal(sizes[0].height, sizes[1].height, `Revert and Fork differ in height: ${JSON.stringify(sizes)}`);
  assert.equal(sizes[0].fontSize, sizes[1].fontSize, `Revert and Fork differ in type size: ${JSON.stringify(sizes)}`);
  await screenshot("newcomer-block-actions.png", actions);
  ok(`an ended turn's Revert and Fork are one size (${sizes[0].height}px high)`);

  // Its session has a work tree: the Result panel offers Commit and Push.
  const resultPanel = page.getByRole("region", { name: "Result" });
  await eventually("the Result panel's branch", async () => (await resultPanel.locator(".branch-name").innerText()).startsWith("cinch/"));
  assert(await resultPanel.getByRole("button", { name: "Commit" }).isVisible());
  assert(await resultPanel.getByRole("button", { name: "Push" }).isVisible());
  ok("a session with a work tree shows the Result panel: its branch, Commit and Push");

  // The Diff view: a tree, unified and side by side, highlighting, the whole file.
  const block = page.locator(".block").first();
  await block.locator(".block-toggle").click();
  await block.getByRole("tab", { name: "Diff" }).click();
  const view = block.locator(".diff-view");
  const tree = view.getByRole("navigation", { name: "Changed files" });
  await tree.waitFor();
  assert.deepEqual(await tree.locator(".tree-folder-name").allInnerTexts(), ["src/"]);
  assert.deepEqual(await tree.locator(".tree-file-name").allInnerTexts(), ["config.js", "greet.js", "NOTES.md"]);
  assert.deepEqual(await view.locator(".diff-file").evaluateAll((nodes) => nodes.map((node) => node.dataset.path)),
    ["src/config.js", "src/greet.js", "NOTES.md"], "the files follow the tree");
  await tree.getByRole("button", { name: /greet\.js/ }).click();
  const greet = view.locator('.diff-file[data-path="src/greet.js"]');
  assert(await greet.evaluate((node) => node === document.activeElement), "the tree's button brings the file to the keyboard");
  assert.equal(await tree.getByRole("button", { name: /greet\.js/ }).getAttribute("aria-current"), "true");
  assert.equal(await greet.locator(".diff-add").first().innerText(), "+export function greet(name) {");
  assert.deepEqual(await greet.locator(".diff-add").first().locator(".tok-keyword").allInnerTexts(), ["export", "function"]);
  assert.deepEqual(await greet.locator(".tok-string").allInnerTexts(), ['"hello, "']);
  assert.deepEqual(await greet.locator(".tok-comment").allInnerTexts(), ["// a greeting for a name"]);
  const config = view.locator('.diff-file[data-path="src/config.js"]');
  const unifiedLines = await config.locator(".diff > span").allInnerTexts();
  assert(unifiedLines.includes("-export const retries = 3;") && unifiedLines.includes("+export const retries = 5;"), unifiedLines.join("\n"));
  assert(!unifiedLines.some((line) => line.includes("line 1 of the settings")), "the hunk leaves the file's start out");
  await screenshot("newcomer-diff-unified.png", view);
  ok("Diff: a tree of the changed files (a folder, three files), unified lines with keywords, strings and comments highlighted");

  await view.getByRole("button", { name: "Side by side" }).click();
  const split = config.locator(".diff-split");
  await split.waitFor();
  assert.equal(await view.getByRole("button", { name: "Side by side" }).getAttribute("aria-pressed"), "true");
  const facing = await split.evaluate((node) => {
    const removed = node.querySelector(".split-text.diff-del");
    const added = node.querySelector(".split-text.diff-add");
    return { removed: removed.textContent, added: added.textContent,
      sameRow: Math.abs(removed.getBoundingClientRect().top - added.getBoundingClientRect().top) < 2,
      leftOfIt: removed.getBoundingClientRect().right <= added.getBoundingClientRect().left };
  });
  assert.deepEqual(facing, { removed: "export const retries = 3;", added: "export const retries = 5;", sameRow: true, leftOfIt: true });
  await screenshot("newcomer-diff-split.png", view);
  ok("Diff side by side: the removed line faces its replacement, old on the left");

  await view.getByRole("button", { name: "Whole file" }).click();
  await eventually("the whole file", async () =>
    (await config.locator(".split-text", { hasText: "line 1 of the settings" }).count()) === 2);
  const rows = await config.locator(".split-text.diff-context").count();
  assert.equal(rows, 2 * 11, "every unchanged line of the 12, on both sides");
  await view.getByRole("button", { name: "Unified" }).click();
  await eventually("the whole file, unified", async () => (await config.locator(".diff > span").count()) === 13);
  assert.equal(await config.locator(".diff > span").first().innerText(), " // line 1 of the settings");
  assert.equal(await config.locator(".diff-hunk").count(), 0, "no hunk header in a whole file");
  await screenshot("newcomer-diff-whole.png", view);
  ok("Diff: the whole file, side by side and unified");

  // At a phone's width the Diff view stacks its tree above the files and nothing scrolls sideways.
  await page.setViewportSize({ width: 375, height: 740 });
  await view.getByRole("button", { name: "Side by side" }).click();
  await config.locator(".diff-split").waitFor();
  await noSideways("the Diff view side by side");
  const treeBox = await tree.boundingBox();
  const filesBox = await view.locator(".diff-files").boundingBox();
  assert(treeBox.y + treeBox.height <= filesBox.y + 1, "the tree stands above the files");
  await view.getByRole("button", { name: "Unified" }).click();
  await noSideways("the Diff view unified");
  await nav.getByRole("link", { name: "Environments" }).click();
  await page.getByRole("button", { name: "New environment" }).click();
  await page.getByLabel("Secret value").waitFor();
  await noSideways("New environment");
  await page.setViewportSize({ width: 1200, height: 900 });
  await page.goBack();
  await page.goBack();
  await page.getByRole("heading", { name: "Greetings", level: 1 }).waitFor();
  ok("at 375px the Diff view and New environment fit: no sideways scrolling");

  // The list reads it at a glance.
  await nav.getByRole("link", { name: "Tasks" }).click();
  const row = page.locator(".task-row", { hasText: "Greetings" });
  await eventually("the task's state in the list", async () => (await row.locator(".chip").innerText()) === "waiting");
  ok("the task list reads the task waiting for a message");

  // A setup that fails: "failed" everywhere, its cause as the headline, its log at hand.
  const broken = await api("POST", `/accounts/${account}/environments`, {
    name: "broken-setup",
    repository: REPO,
    setup: ["for n in 1 2 3 4 5 6; do echo \"npm http fetch step $n\"; done; echo 'npm warn deprecated left-pad@1.0.0'; echo 'npm error 404 Not Found - GET https://registry.example/nope' >&2; echo 'npm error A complete log of this run can be found in: /home/agent/.npm/_logs/debug.log'; exit 1"],
  });
  assert.equal(broken.status, 201, broken.text);
  await nav.getByRole("link", { name: "New task" }).click();
  await eventually("the broken environment in New task", async () =>
    (await page.getByLabel("Environment").locator("option", { hasText: "broken-setup" }).count()) === 1);
  await page.getByLabel("Prompt").fill("Install the dependencies.");
  await page.getByLabel("Title").fill("Setup that fails");
  await page.getByLabel("Environment").selectOption({ label: `broken-setup — ${REPO}` });
  await page.getByRole("button", { name: "Start task" }).click();
  await page.getByRole("heading", { name: "Setup that fails", level: 1 }).waitFor();
  await eventually("the failed state", async () => (await page.locator(".task-head .chip").innerText()) === "failed", 60_000);
  assert.equal(await page.locator(".sessions .chip").innerText(), "failed");
  assert.match(await page.locator(".session-facts").innerText(), /^failed · /);
  const headline = page.locator(".failure-headline");
  assert.equal(await headline.innerText(), "npm error 404 Not Found - GET https://registry.example/nope");
  assert.match(await page.locator(".failure-what").innerText(), /^A setup command failed: `for n in .*` failed with exit code 1\.$/);
  await page.getByText("Setup log").click();
  // The whole output, from the setup-log route: the error message keeps its last five lines only.
  await page.locator(".setup-log[data-whole]").waitFor();
  const setupLog = await page.locator(".setup-log").innerText();
  assert.match(setupLog, /^\$ for n in 1 2 3 4 5 6; do/);
  assert.match(setupLog, /npm http fetch step 1\n/);
  assert.match(setupLog, /npm warn deprecated left-pad@1\.0\.0/);
  assert.match(setupLog, /npm error A complete log of this run/);
  const failedSetup = (await api("GET", `/accounts/${account}/tasks`)).json.data.find((task) => task.title === "Setup that fails");
  const sessions = (await api("GET", `/accounts/${account}/tasks/${failedSetup.id}/sessions`)).json.data;
  assert.doesNotMatch(sessions[0].error_message, /step 1/, "the message keeps the tail only");
  const overHttp = await fetch(`${BASE}/v1/accounts/${account}/tasks/${failedSetup.id}/sessions/${sessions[0].id}/setup-log`,
    { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(overHttp.status, 200);
  assert.equal((await overHttp.text()).trimEnd(), setupLog);
  const noToken = await fetch(`${BASE}/v1/accounts/${account}/tasks/${failedSetup.id}/sessions/${sessions[0].id}/setup-log`);
  assert.equal(noToken.status, 401);
  // It never had a work tree: nothing to commit or push, so no Result panel.
  assert.equal(sessions[0].status, "closed");
  assert.equal(sessions[0].workspace, null, "a failed setup leaves the session without a work tree");
  assert.equal(await page.getByRole("region", { name: "Result" }).count(), 0, "no Result panel for a session without a work tree");
  assert.equal(await page.getByRole("textbox", { name: "Commit message" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Push" }).count(), 0);
  await screenshot("newcomer-setup-failed.png", page.locator("main"));
  ok("a failed setup reads failed, its headline the line that explains, its log one click away, no Result panel");

  // A turn that fails: failed, not idle; the block's headline is the cause, not the chatter before it.
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), env("CINCH_SCRIPT_FAIL"));
  await nav.getByRole("link", { name: "New task" }).click();
  await eventually("the environments in New task", async () =>
    (await page.getByLabel("Environment").locator("option", { hasText: "my-project" }).count()) === 1);
  await page.getByLabel("Prompt").fill("Deploy it.");
  await page.getByLabel("Title").fill("A turn that fails");
  await page.getByLabel("Environment").selectOption({ label: `my-project — ${REPO}` });
  await page.getByRole("button", { name: "Start task" }).click();
  await page.getByRole("heading", { name: "A turn that fails", level: 1 }).waitFor();
  await eventually("the failed turn", async () => (await page.locator(".task-head .chip").innerText()) === "failed", 60_000);
  const failedSession = (await api("GET", `/accounts/${account}/tasks`)).json.data.find((task) => task.title === "A turn that fails");
  assert.equal(failedSession.session_status, "idle", "the API keeps the spec's status");
  assert.equal(failedSession.session_close_reason, "turn_failure");
  assert.equal(await page.locator(".sessions .chip").innerText(), "failed");
  const blockError = page.locator(".block .block-error");
  await blockError.waitFor();
  assert.doesNotMatch(await blockError.innerText(), /YOLO/);
  assert.equal(await blockError.innerText(), "Error: 401 Unauthorized: invalid x-api-key");
  assert.equal(await page.locator(".failure-headline").innerText(), "Error: 401 Unauthorized: invalid x-api-key");
  await screenshot("newcomer-turn-failed.png", page.locator("main"));
  await nav.getByRole("link", { name: "Tasks" }).click();
  await eventually("the list's states", async () => {
    const states = Object.fromEntries(await page.locator(".task-row").evaluateAll((rows) =>
      rows.map((one) => [one.querySelector(".task-title").textContent, one.querySelector(".chip").textContent])));
    return JSON.stringify(states) === JSON.stringify({ "A turn that fails": "failed", "Setup that fails": "failed", Greetings: "waiting" });
  });
  await screenshot("newcomer-tasks.png", page.locator("main"));
  ok("a failed turn reads failed (the API still says idle, turn_failure) with its cause; the list tells failed from waiting");

  // Agents: the default harness, model and effort.
  await nav.getByRole("link", { name: "Agents" }).click();
  const agentForm = page.getByRole("form").first();
  await agentForm.getByLabel("Default harness").selectOption("claude");
  await agentForm.getByLabel("Model").fill("claude-sonnet-4-5");
  const agentName = await agentForm.locator("h2").evaluate((node) => node.firstChild.textContent);
  await agentForm.getByRole("button", { name: `Save ${agentName}` }).click();
  await agentForm.getByText("Saved.").waitFor();
  const agents = (await api("GET", `/accounts/${account}/agents`)).json.data;
  const saved = agents.find((agent) => agent.name === agentName);
  assert.equal(saved.harness, "claude");
  assert.equal(saved.model, "claude-sonnet-4-5");
  await agentForm.getByLabel("Model").fill("no-such-model");
  await agentForm.getByRole("button", { name: `Save ${agentName}` }).click();
  const modelError = agentForm.locator(".field", { has: page.getByLabel("Model") }).locator(".field-error");
  await modelError.waitFor();
  assert.equal((await api("GET", `/accounts/${account}/agents`)).json.data.find((agent) => agent.name === agentName).model, "claude-sonnet-4-5");
  ok(`Agents: the default harness and model saved; an unknown model refused by the field ("${await modelError.innerText()}")`);

  // Tokens: made and shown once, listed without their text, revoked.
  await nav.getByRole("link", { name: "Tokens" }).click();
  await page.getByRole("heading", { name: "Tokens", level: 1 }).waitFor();
  // Counted once the list has loaded (the screen shows itself before).
  await eventually("the tokens listed", async () => (await page.getByText("Loading the tokens…").count()) === 0);
  const before = await page.locator(".settings-row").count();
  await page.getByLabel("Name", { exact: true }).fill("laptop");
  await page.getByRole("button", { name: "Create token" }).click();
  const shown = page.getByLabel(/^New token “laptop” for /);
  await shown.waitFor();
  const secret = await shown.inputValue();
  assert.match(secret, /^cinch_[0-9a-f]{64}$/);
  assert.equal((await api("GET", "/accounts", undefined, secret)).status, 200, "the new token works");
  await eventually("the new token in the list", async () => (await page.locator(".settings-row").count()) === before + 1);
  const listing = await api("GET", `/accounts/${account}/tokens`);
  assert(!listing.text.includes(secret.slice(6)), "the listing holds no token's text");
  // A token's id is its hash's start: the test works it out from the text.
  const newest = { id: `tok_${createHash("sha256").update(secret).digest("hex").slice(0, 16)}` };
  assert(listing.json.data.some((token) => token.id === newest.id && token.owner_kind === "member" && token.name === "laptop"), JSON.stringify(listing.json.data));
  assert.equal(await page.locator(`[data-token="${newest.id}"] .settings-name`).innerText(), "laptop", "the list shows the token's name");
  await page.reload();
  await page.getByRole("heading", { name: "Tokens", level: 1 }).waitFor();
  assert(!(await page.content()).includes(secret), "shown once: not after a reload");
  await page.getByRole("button", { name: `Revoke ${newest.id}` }).click();
  await eventually("the token gone from the list", async () => (await page.locator(`[data-token="${newest.id}"]`).count()) === 0);
  assert.equal((await api("GET", "/accounts", undefined, secret)).status, 401, "a revoked token is refused at once");
  ok("Tokens: create with a name (shown once), list by name without the text, revoke (refused at once)");

  // Usage: the account's turns.
  await nav.getByRole("link", { name: "Usage" }).click();
  await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
  const totals = page.getByLabel("Totals");
  await eventually("the usage totals", async () => (await totals.locator("dd").count()) > 0);
  const turns = Number((await totals.locator("dd").first().innerText()).replaceAll(",", ""));
  const usage = (await api("GET", `/accounts/${account}/usage`)).json.data;
  assert.equal(turns, usage.totals.turns);
  assert(turns >= 2, `turns: ${turns}`);
  await page.getByLabel("Group by").selectOption("harness");
  await page.getByRole("button", { name: "Show" }).click();
  await page.getByRole("rowheader", { name: "claude" }).waitFor();
  await screenshot("newcomer-usage.png", page.locator("main"));
  ok("Usage: the account's totals, grouped by harness");
}
