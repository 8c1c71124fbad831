// Getting a session's result out in the app, in a real headless Chromium
// against the `cinch serve` that host/tests/it/app.rs starts: the session shows
// its branch, Commit commits the turn's change with the message drafted from
// the turn's final message, Push sends the branch to the environment's
// repository (where `git branch` then shows it), and New session starts
// another session on the task. It reads:
//   CINCH_URL, CINCH_TOKEN        the server and its admin token
//   CINCH_CHROMIUM, CINCH_PROFILE the browser and a fresh profile folder
//   CINCH_SCREENSHOTS             where screenshots go (their paths are printed)
//   CINCH_REPO                    the repository of the environment "result"
//   CINCH_FORGE_REPO              the bare repository that https://github.com/acme/widget.git
//                                 stands for (the agent's git config sends the URL there)
// Run it through `cargo test -p cinch --test it -- app::the_result_out_in_a_browser`.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { api, env, eventually, launch, reportFailure, stepper } from "./support.mjs";

const BASE = env("CINCH_URL");
const TOKEN = env("CINCH_TOKEN");
const REPO = env("CINCH_REPO");

/** git in the source repository (or `repo`): its output, or null when it fails. */
function git(...args) {
  return gitIn(REPO, ...args);
}

function gitIn(repo, ...args) {
  try {
    return execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

const ok = stepper();

const { context, page, problems } = await launch();

try {
  const [account] = await api("GET", "/accounts");
  const accountPath = `/accounts/${account.id}`;
  const environment = await api("POST", `${accountPath}/environments`, { name: "result", repository: REPO });
  const task = await api("POST", `${accountPath}/tasks`, { prompt: "Write the notes", environment_id: environment.id });
  const [session] = await api("GET", `${accountPath}/tasks/${task.id}/sessions`);
  const sessionPath = `${accountPath}/tasks/${task.id}/sessions/${session.id}`;
  await eventually("the turn to end", async () => {
    const now = await api("GET", sessionPath);
    assert(!now.close_reason, `the turn went wrong: ${now.error_message}`);
    return now.status === "idle" && now.harness_session_id;
  });
  const branch = session.branch_name;
  assert.equal(git("show", `${branch}:notes.txt`), null, "the change is not on the branch yet");

  await page.goto(BASE);
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tasks" }).waitFor();
  await page.goto(`${BASE}/#/tasks/${task.id}/sessions/${session.id}`);
  const result = page.getByRole("region", { name: "Result" });
  await eventually("the branch shown", async () => (await result.locator(".branch-name").innerText()) === branch);
  const message = page.getByLabel("Commit message");
  await eventually("the drafted message", async () => (await message.inputValue()) === "Wrote the notes\n\nThey list every step.");
  ok("the session shows its branch, and a commit message drafted from the turn's final message");

  await message.fill("Write the notes\n\nEvery step, listed.");
  await page.getByRole("button", { name: "Commit" }).click();
  await result.getByRole("status").filter({ hasText: `Committed ` }).waitFor();
  assert.equal(git("show", `${branch}:notes.txt`), "step one\nstep two\n");
  assert.equal(git("log", "-1", "--format=%s", branch).trim(), "Write the notes");
  assert.equal(await message.inputValue(), "", "the committed draft is not offered again");
  ok("Commit commits the turn's change on the session's branch");

  await message.fill("Again");
  await page.getByRole("button", { name: "Commit" }).click();
  await result.getByRole("alert").filter({ hasText: "nothing to commit" }).waitFor();
  ok("a second Commit says there is nothing to commit");

  assert.equal(git("branch", "--list", "notes/steps").trim(), "");
  await page.getByLabel("Branch in the repository").fill("notes/steps");
  await page.getByRole("button", { name: "Push" }).click();
  await result.getByRole("status").filter({ hasText: "Pushed " }).waitFor();
  assert.match(git("branch", "--list", "notes/steps"), /notes\/steps/);
  assert.equal(git("show", "notes/steps:notes.txt"), "step one\nstep two\n");
  assert(await result.getByRole("link", { name: "Open a pull request" }).isHidden(), "a local repository has no pull request page");
  const shot = path.join(env("CINCH_SCREENSHOTS"), "result-pushed.png");
  await result.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);
  ok("Push sends the branch to the source repository, where git branch shows it");

  await page.getByRole("button", { name: "New session" }).click();
  await page.getByLabel("First message").fill("Try it another way");
  await page.getByRole("button", { name: "Start session" }).click();
  await eventually("the new session shown", async () => {
    const sessions = await api("GET", `${accountPath}/tasks/${task.id}/sessions`);
    return sessions.length === 2 && page.url().endsWith(`/sessions/${sessions[1].id}`);
  });
  await page.getByRole("navigation", { name: "Sessions" }).getByRole("link").nth(1).waitFor();
  ok("New session starts another session on the task, with the agent's harness");

  // A session on a github.com repository: Push shows the link that opens a pull request.
  const forge = await api("POST", `${accountPath}/environments`, { name: "widget", repository: "https://github.com/acme/widget.git" });
  const forgeTask = await api("POST", `${accountPath}/tasks`, { prompt: "Write the notes", environment_id: forge.id });
  const [forgeSession] = await api("GET", `${accountPath}/tasks/${forgeTask.id}/sessions`);
  await eventually("the forge session's turn to end", async () => {
    const now = await api("GET", `${accountPath}/tasks/${forgeTask.id}/sessions/${forgeSession.id}`);
    assert(!now.close_reason, `the turn went wrong: ${now.error_message}`);
    return now.status === "idle" && now.harness_session_id;
  });
  await page.goto(`${BASE}/#/tasks/${forgeTask.id}/sessions/${forgeSession.id}`);
  await eventually("the drafted message", async () => (await message.inputValue()) !== "");
  await page.getByRole("button", { name: "Commit" }).click();
  await result.getByRole("status").filter({ hasText: "Committed " }).waitFor();
  await page.getByRole("button", { name: "Push" }).click();
  const link = result.getByRole("link", { name: "Open a pull request" });
  await link.waitFor();
  const head = gitIn(env("CINCH_FORGE_REPO"), "symbolic-ref", "--short", "HEAD").trim();
  assert.equal(await link.getAttribute("href"),
    `https://github.com/acme/widget/compare/${head}...${forgeSession.branch_name}?expand=1`);
  assert.equal(gitIn(env("CINCH_FORGE_REPO"), "show", `${forgeSession.branch_name}:notes.txt`), "step one\nstep two\n");
  ok("on a github.com remote, Push pushes there and links to a new pull request");

  // The one failure is the test's own: the second Commit's 409.
  const unexpected = problems.filter((text) => !text.includes("status of 409"));
  assert.deepEqual(unexpected, [], "the page logged errors");
  console.log(`${ok.step} passed, 0 failed`);
} catch (error) {
  await reportFailure({ page, problems }, ok, "result", error);
} finally {
  await context.close();
}
