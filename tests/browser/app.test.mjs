// The web app in a real headless Chromium, against the `cinch serve` that
// host/tests/it/app.rs starts. It reads:
//   CINCH_URL, CINCH_TOKEN        the server and its admin token
//   CINCH_AGENT_TOKEN             a token of the account's agent (its tasks are nobody's)
//   CINCH_CHROMIUM, CINCH_PROFILE the browser and a fresh profile folder
//   CINCH_SCREENSHOTS             where screenshots go (their paths are printed)
//   CINCH_REPO                    the repository of the environment "app"
//   CINCH_FAKE_SCRIPT             the fake CLI's script file, rewritten before each turn
//   CINCH_SCRIPT_FIRST, CINCH_SCRIPT_FOLLOW_UP, CINCH_SCRIPT_HANG, CINCH_SCRIPT_MARKDOWN
//                                 the fake CLI's scripts for the turns
// Run it through `cargo test -p cinch --test it -- app::the_app_in_a_browser`.

import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { api, env, eventually, launch, reportFailure, stepper } from "./support.mjs";

const BASE = env("CINCH_URL");
const TOKEN = env("CINCH_TOKEN");
const SHOTS = env("CINCH_SCREENSHOTS");

/** The next turn of the fake CLI follows `name`'s script. */
function script(name) {
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), env(name));
}

/** The next turn follows the follow-up's short script, answering `answer` and writing `files`. */
function quickScript(answer, files) {
  const quick = JSON.parse(env("CINCH_SCRIPT_FOLLOW_UP"));
  quick.lines = quick.lines.map((line) => JSON.parse(JSON.stringify(line).replaceAll("I added a second line.", answer)));
  quick.write_files = files;
  fs.writeFileSync(env("CINCH_FAKE_SCRIPT"), JSON.stringify(quick));
}

/** Waits for a session's turn to end well (the session goes back to idle, with no close reason). */
async function idle(sessionPath) {
  await eventually(`${sessionPath} to be idle`, async () => {
    const session = await api("GET", sessionPath);
    const why = `${session.status}, ${session.close_reason}: ${session.error_message}`;
    assert(session.status !== "closed" && !session.close_reason, `${sessionPath}'s turn went wrong (${why})`);
    return session.status === "idle";
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the conversation has one block and it is done; fails at once if it ended otherwise. */
async function oneDoneBlock(what) {
  await eventually(what, async () => {
    const statuses = await page.locator(".block").evaluateAll((blocks) => blocks.map((block) => block.dataset.status));
    assert(statuses.every((status) => status === "running" || status === "completed"), `blocks: ${statuses}`);
    return statuses.join() === "completed";
  });
}

/** The reply under the `n`th code-task block of the conversation. */
function replyOf(n) {
  return page.locator(".step-turn").nth(n).locator(".reply");
}

/** Fails unless `reply` shows the markdown reply of the fake CLI's script in app.rs, with nothing of it run. */
async function markdownReply(reply) {
  await reply.waitFor();
  assert.equal(await reply.locator("h4").innerText(), "What I changed");
  assert.equal(await reply.locator("h5").innerText(), "Every step");
  assert.equal(await reply.locator("strong").first().innerText(), "one line");
  assert.equal(await reply.locator("p code").first().innerText(), "out.txt");
  assert.match(await reply.locator("pre code").innerText(), /^echo again >> out\.txt\n# (a-long-unbroken-word-)+$/);
  assert.deepEqual(await reply.locator("ul > li").evaluateAll((items) => items.map((item) => item.firstChild.textContent)),
    ["checked the file", "ran the tests"]);
  assert.deepEqual(await reply.locator("ul ol > li").allInnerTexts(), ["unit", "browser"]);
  assert.equal(await reply.locator("blockquote").innerText(), "Nothing else changed.");
  assert.equal(await reply.locator("ol").last().locator("li").count(), 30);
  // The HTML is text, and no element of it was made.
  assert.equal(await reply.locator("script, img, iframe, [onerror]").count(), 0);
  assert.match(await reply.evaluate((node) => node.textContent), /<script>window\.pwned = "script"<\/script>\n<img src="x" onerror="window\.pwned = 'img'">/);
  const docs = reply.locator("a", { hasText: "the docs" });
  assert.equal(await docs.getAttribute("href"), "https://example.com/docs");
  assert.equal(await docs.getAttribute("rel"), "noopener noreferrer");
  assert.equal(await reply.locator("a").count(), 1, "the javascript: link is no link");
  const trap = reply.locator(".unsafe-link", { hasText: "a trap" });
  assert.equal(await trap.getAttribute("title"), "javascript:window.pwned='link'");
  // A click as the DOM makes it: a link would be followed, wherever the fold puts it.
  await trap.evaluate((node) => node.click());
  assert.equal(await page.evaluate(() => window.pwned), undefined, "nothing of the reply ran");
}

/** Fails unless the long `reply` starts folded, and Show more and Show less unfold and fold it. */
async function foldedReply(reply) {
  const body = reply.locator(".reply-body");
  const heights = () => body.evaluate((node) => ({ shown: node.clientHeight, whole: node.scrollHeight }));
  const more = reply.getByRole("button", { name: "Show more" });
  await more.waitFor();
  assert.equal(await more.getAttribute("aria-expanded"), "false");
  const folded = await heights();
  assert(folded.shown < folded.whole / 2, `folded, the reply shows its start: ${JSON.stringify(folded)}`);
  await more.click();
  const less = reply.getByRole("button", { name: "Show less" });
  assert.equal(await less.getAttribute("aria-expanded"), "true");
  const unfolded = await heights();
  assert.equal(unfolded.shown, unfolded.whole, "unfolded, the whole reply shows");
  await less.click();
  await more.waitFor();
  assert.deepEqual(await heights(), folded, "Show less folds it again");
}

/** Fails when the page scrolls sideways: its content is wider than the window. */
async function noSideways(what) {
  const { scroll, client } = await page.evaluate(() =>
    ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert(scroll <= client, `${what}: the page scrolls sideways (${scroll}px wide in a ${client}px window)`);
}

/** Fails unless `locator` is shown whole within the window's width. */
async function inView(locator, what) {
  assert(await locator.isVisible(), `${what} is not shown`);
  const box = await locator.boundingBox();
  const width = page.viewportSize().width;
  assert(box.x >= 0 && box.x + box.width <= width, `${what} is cut off: ${box.x}..${box.x + box.width} of ${width}px`);
}

/** Fails unless `locator`'s text takes one line (its box less padding and border is under 1.5 lines high). */
async function oneLine(locator, what) {
  const { height, lineHeight } = await locator.evaluate((node) => {
    const style = getComputedStyle(node);
    const inner = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"]
      .reduce((sum, name) => sum - parseFloat(style[name]), node.getBoundingClientRect().height);
    return { height: inner, lineHeight: parseFloat(style.lineHeight) };
  });
  assert(height < lineHeight * 1.5, `${what} takes one line: ${height}px high, lines are ${lineHeight}px`);
}

/** Fails unless `line` reads as one muted line: the muted colour, smaller type, one line high, no bubble. */
async function mutedLine(line, what) {
  const style = await line.evaluate((node) => {
    const text = node.querySelector(".muted") ?? node;
    const reference = document.querySelector(".session-facts");
    return {
      color: getComputedStyle(text).color,
      muted: getComputedStyle(reference).color,
      size: parseFloat(getComputedStyle(text).fontSize),
      body: parseFloat(getComputedStyle(document.body).fontSize),
      lineHeight: parseFloat(getComputedStyle(text).lineHeight),
      height: node.getBoundingClientRect().height,
      bubbles: node.querySelectorAll(".bubble").length,
    };
  });
  assert.equal(style.color, style.muted, `${what} is in the muted colour`);
  assert(style.size < style.body, `${what} is in smaller type: ${style.size}px`);
  assert(style.height < style.lineHeight * 1.5, `${what} is one line: ${style.height}px high, lines are ${style.lineHeight}px`);
  assert.equal(style.bubbles, 0, `${what} is no message bubble`);
}

/**
 * Markdown as the app renders a reply, and the HTML it makes: what each
 * construct becomes, and that HTML, scripts and links other than http, https
 * and mailto stay text.
 */
const MARKDOWN = [
  ["# Title\n\nSome *em*, **strong**, ***both***, ~~gone~~ and `code`.",
    "<h3>Title</h3><p>Some <em>em</em>, <strong>strong</strong>, <em><strong>both</strong></em>, <del>gone</del> and <code>code</code>.</p>"],
  ["Underlined\n===\n\n#### Four", "<h3>Underlined</h3><h6>Four</h6>"],
  ["```js\nlet a = \"<b>\";\n```\n\n``a ` b`` and `unclosed",
    "<pre><code>let a = \"&lt;b&gt;\";</code></pre><p><code>a ` b</code> and `unclosed</p>"],
  ["- one\n- two\n  - nested\n- three\n\n3) x\n4) y",
    "<ul><li>one</li><li>two<ul><li>nested</li></ul></li><li>three</li></ul><ol start=\"3\"><li>x</li><li>y</li></ol>"],
  ["- loose\n\n- items", "<ul><li><p>loose</p></li><li><p>items</p></li></ul>"],
  ["- [x] done\n- [ ] to do", "<ul><li class=\"task-item\"><input type=\"checkbox\" disabled=\"\"> done</li><li class=\"task-item\"><input type=\"checkbox\" disabled=\"\"> to do</li></ul>"],
  ["> quoted\nlazy\n\n---\nafter", "<blockquote><p>quoted\nlazy</p></blockquote><hr><p>after</p>"],
  ["| a | b |\n|---|--:|\n| `x\\|y` | 2 |",
    "<div class=\"table-scroll\"><table><thead><tr><th>a</th><th class=\"align-right\">b</th></tr></thead><tbody><tr><td><code>x|y</code></td><td class=\"align-right\">2</td></tr></tbody></table></div>"],
  ["snake_case_name, 2 * 3 * 4, \\*not em\\* and a  \nbreak",
    "<p>snake_case_name, 2 * 3 * 4, *not em* and a  <br>break</p>"],
  ["[docs](https://example.com/a?b=1&c=2) [mail](mailto:a@example.com) <https://example.com/b> see https://example.com/c.",
    "<p><a href=\"https://example.com/a?b=1&amp;c=2\" rel=\"noopener noreferrer\" target=\"_blank\">docs</a> "
    + "<a href=\"mailto:a@example.com\" rel=\"noopener noreferrer\" target=\"_blank\">mail</a> "
    + "<a href=\"https://example.com/b\" rel=\"noopener noreferrer\" target=\"_blank\">https://example.com/b</a> "
    + "see <a href=\"https://example.com/c\" rel=\"noopener noreferrer\" target=\"_blank\">https://example.com/c</a>.</p>"],
  ["[a](javascript:alert(1)) [b](<JaVa\tScRiPt:alert(1)>) [c](data:text/html,x) [d](src/main.rs) <javascript:alert(1)>",
    "<p><span class=\"unsafe-link\" title=\"javascript:alert(1)\">a</span> <span class=\"unsafe-link\" title=\"JaVa\tScRiPt:alert(1)\">b</span> "
    + "<span class=\"unsafe-link\" title=\"data:text/html,x\">c</span> <span class=\"unsafe-link\" title=\"src/main.rs\">d</span> "
    + "<span class=\"unsafe-link\" title=\"javascript:alert(1)\">javascript:alert(1)</span></p>"],
  ["<script>window.pwned = 1</script>\n<img src=x onerror=\"window.pwned = 1\">\n![pixel](https://example.com/p.png)",
    "<p>&lt;script&gt;window.pwned = 1&lt;/script&gt;\n&lt;img src=x onerror=\"window.pwned = 1\"&gt;\n"
    + "<a href=\"https://example.com/p.png\" rel=\"noopener noreferrer\" target=\"_blank\">pixel</a></p>"],
];

const ok = stepper();

/** A picture of `locator` and what stands left of it (a block's logo sits on the rail there). */
async function screenshot(locator, name, { left = 0 } = {}) {
  const file = path.join(SHOTS, name);
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  const clip = { x: Math.max(0, box.x - left - 4), y: box.y - 4, width: box.width + left + 8, height: box.height + 8 };
  await page.screenshot({ path: file, clip, animations: "disabled" });
  console.log(`screenshot: ${file}`);
}

/**
 * The browser reaches cinch through this TCP proxy, so the test can drop
 * every connection at once, as a flaky network would.
 */
const sockets = new Set();
const proxy = net.createServer((client) => {
  const target = new URL(BASE);
  const upstream = net.connect(Number(target.port), target.hostname);
  client.pipe(upstream);
  upstream.pipe(client);
  for (const socket of [client, upstream]) {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => {
      sockets.delete(socket);
      client.destroy();
      upstream.destroy();
    });
  }
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
const APP = `http://127.0.0.1:${proxy.address().port}`;

function dropConnections() {
  for (const socket of sockets) socket.destroy();
}

/** The first turn's progress lines, in order (the fake CLI's script in app.rs). */
const FIRST_LINES = [
  "Claude Code started (claude-sonnet-4-5)",
  "Bash: ls",
  "Bash: cat readme.txt",
  "Bash: echo hello > out.txt",
  "Bash: git status --short",
  "Bash: cat out.txt",
  "Bash: wc -l out.txt",
  "Bash: git diff --stat",
  "I wrote out.txt; it says hello.",
];

const { context, page, problems } = await launch({ reducedMotion: "no-preference" });
// Nothing loads from outside cinch; each event stream request's Last-Event-ID is noted.
const outside = [];
const resumes = [];
page.on("request", (request) => {
  if (!request.url().startsWith(APP)) outside.push(request.url());
  if (request.url().endsWith("/events")) resumes.push(request.headers()["last-event-id"]);
});

try {
  await run();
  assert.deepEqual(outside, [], "the app loaded something from outside cinch");
  // Three failures are the test's own: the wrong token, the stream it cut, the log it refused.
  const expected = ["status of 401", "net::ERR_INCOMPLETE_CHUNKED_ENCODING", "status of 404"];
  const unexpected = problems.filter((text) => !expected.some((known) => text.includes(known)));
  assert.deepEqual(unexpected, [], "the page logged errors");
  console.log(`${ok.step} passed, 0 failed`);
} catch (error) {
  await reportFailure({ page, problems }, ok, "app", error);
} finally {
  await context.close();
  dropConnections();
  proxy.close();
}

async function run() {
  // The pages: their types, revalidated by their ETag.
  for (const [file, type] of [["app.js", "text/javascript"], ["app.css", "text/css"], ["favicon.svg", "image/svg+xml"]]) {
    const asset = await context.request.get(`${APP}/assets/${file}`);
    assert.equal(asset.status(), 200);
    assert(asset.headers()["content-type"].startsWith(type), `${file}: ${asset.headers()["content-type"]}`);
    assert.equal(asset.headers()["cache-control"], "no-cache");
    const again = await context.request.get(`${APP}/assets/${file}`, { headers: { "If-None-Match": asset.headers().etag } });
    assert.equal(again.status(), 304);
  }
  ok("the pages' files are served with their types and revalidated by ETag");

  // Sign in: a wrong token is refused, the right one kept out of the URL.
  await page.goto(APP);
  await page.getByLabel("Token").fill("cinch_not-a-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("That token is not known here.").waitFor();
  await page.getByLabel("Token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tasks" }).waitFor();
  assert(!page.url().includes(TOKEN));
  assert.equal(await page.evaluate(() => localStorage.getItem("cinch.token")), TOKEN);
  ok("sign in with a token, kept in localStorage and not in the URL");

  // A text full of unmatched delimiters is read in linear time: a slow one would take minutes.
  const rendered = await page.evaluate(async ([cases, heavy]) => {
    const { markdown } = await import("/assets/markdown.js");
    const html = (text) => {
      const container = document.createElement("div");
      container.append(...markdown(text));
      return container.innerHTML;
    };
    const started = performance.now();
    html(heavy);
    return { html: cases.map(html), heavyMs: performance.now() - started };
  }, [MARKDOWN.map(([text]) => text), "*a _b `c [d ".repeat(20_000)]);
  MARKDOWN.forEach(([text, html], index) => assert.equal(rendered.html[index], html, `markdown: ${JSON.stringify(text)}`));
  assert(rendered.heavyMs < 2000, `unmatched delimiters took ${rendered.heavyMs}ms`);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  ok("markdown renders headings, emphasis, code, lists, quotes, tables and links; HTML and other links stay text");

  // A new task from the form.
  script("CINCH_SCRIPT_FIRST");
  await page.getByRole("link", { name: "New task" }).first().click();
  await page.getByLabel("Prompt").fill("Create out.txt saying hello, then say what you did.");
  await page.getByLabel("Title").fill("Say hello");
  await eventually("the environments and models", async () =>
    (await page.getByLabel("Environment").locator("option").count()) > 1
    && (await page.getByLabel("Model").locator("option").count()) > 0);
  await page.getByLabel("Environment").selectOption({ label: `app — ${env("CINCH_REPO")}` });
  assert.equal(await page.getByLabel("Harness").inputValue(), "claude");
  await page.getByRole("button", { name: "Start task" }).click();
  await page.getByRole("heading", { name: "Say hello", level: 1 }).waitFor();
  ok("create a task from the form");

  // Its block runs with live progress, then ends Done with its diffstat.
  const first = page.locator(".block").first();
  await first.locator(".block-status", { hasText: "Running…" }).waitFor();
  assert.equal(await first.locator(".block-harness").innerText(), "Claude Code");
  assert.match(await first.innerText(), /coding task/);
  assert.match(await first.locator(".block-brief").innerText(), /Create out\.txt saying hello/);
  assert.equal(await first.locator(".block-logo svg").count(), 1);
  await eventually("three live progress lines", async () =>
    (await first.locator(".block-progress li").count()) >= 3 && (await first.getAttribute("data-status")) === "running");
  const animation = await first.locator(".block-status").evaluate((node) => getComputedStyle(node).animationName);
  assert.equal(animation, "pulse");
  ok("the block runs, with live progress");

  // A dropped connection: the page reconnects and resumes after the last event it saw.
  const lastBefore = (await first.locator(".block-progress li").allInnerTexts()).at(-1);
  // The page notes each state the connection goes through: "reconnecting" lasts too short for polling.
  await page.evaluate(() => {
    const connection = document.querySelector(".connection");
    window.connectionStates = [];
    new MutationObserver(() => window.connectionStates.push(connection.dataset.state))
      .observe(connection, { attributes: true, attributeFilter: ["data-state"] });
  });
  dropConnections();
  await eventually("a reconnect", async () => {
    const states = await page.evaluate(() => window.connectionStates);
    const dropped = states.indexOf("reconnecting");
    return dropped !== -1 && states.slice(dropped).includes("live");
  });
  await eventually("a new line after the reconnect", async () =>
    (await first.locator(".block-progress li").allInnerTexts()).at(-1) !== lastBefore);
  const running = await first.locator(".block-progress li").allInnerTexts();
  assert(running.length <= 6, `at most six lines show: ${running}`);
  const start = FIRST_LINES.indexOf(running[0]);
  assert.deepEqual(running, FIRST_LINES.slice(start, start + running.length), "no line lost or seen twice");
  assert(resumes.some((id) => Number(id) > 0), `a reconnect sends Last-Event-ID: ${resumes}`);
  await screenshot(first, "block-running.png", { left: 36 });
  ok(`a dropped stream resumes with no line lost (${running.at(-1)})`);

  await first.locator(".block-status", { hasText: "Done" }).waitFor({ timeout: 60_000 });
  assert.equal(await first.getAttribute("data-status"), "completed");
  assert.equal(await first.locator(".block-progress li").count(), 0);
  assert(await first.locator(".tag", { hasText: "wrote" }).isVisible());
  assert.match(await first.locator(".block-diffstat").innerText(), /^1 file changed, \+1 −0$/);
  assert.match(await first.locator(".block-time").innerText(), /^\d+s$/);
  assert.equal(await first.locator(".block-status").evaluate((node) => getComputedStyle(node).animationName), "none");
  assert.equal(await first.locator(".block-cost").innerText(), "$0.0123");
  assert.match(await first.locator(".block-cost").getAttribute("title"), /as the harness reported it/);
  await eventually("the session's and the task's cost", async () =>
    (await page.locator(".session-facts").innerText()).includes("$0.0123 · 1,200 tokens")
    && (await page.locator(".task-usage").innerText()).includes("$0.0123 · 1,200 tokens"));
  await screenshot(first, "block-done.png", { left: 36 });
  ok("the block ends Done, with a wrote tag, its diffstat, cost and run time; the session and task show their totals");

  // Its final message shows under it, live: the page was not reloaded.
  const firstReply = replyOf(0);
  await firstReply.waitFor();
  assert.equal(await firstReply.locator(".markdown").innerHTML(), "<p>I wrote out.txt; it says hello.</p>");
  assert(await firstReply.locator(".reply-toggle").isHidden(), "a short reply has no Show more");
  ok("the turn's reply shows under its block as the turn ends");

  // Opening it: Result first, then each view, with the keyboard too.
  const toggle = first.locator(".block-toggle");
  await toggle.focus();
  await page.keyboard.press("Enter");
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  const tab = (name) => first.getByRole("tab", { name });
  const panel = first.locator("[role=tabpanel]:not([hidden])");
  assert.equal(await tab("Result").getAttribute("aria-selected"), "true");
  const result = await panel.innerText();
  assert.match(result, /^completed · Claude Code · /);
  assert.match(result, /I wrote out\.txt; it says hello\./);
  assert.doesNotMatch(result, /log:/);
  ok("Result shows the result without its closing log line");

  await tab("Result").focus();
  await page.keyboard.press("ArrowRight");
  assert.equal(await tab("Diff").getAttribute("aria-selected"), "true");
  assert(await tab("Diff").evaluate((node) => node === document.activeElement));
  await panel.locator(".diff-file").first().waitFor();
  assert.match(await panel.locator(".diff-file h4").first().innerText(), /out\.txt/);
  assert.equal(await panel.locator(".diff-add").first().innerText(), "+hello");
  const added = await panel.locator(".diff-add").first().evaluate((node) => getComputedStyle(node).backgroundColor);
  assert.notEqual(added, "rgba(0, 0, 0, 0)");
  ok("Diff shows the file's coloured lines (reached with the arrow key)");

  await tab("Log").click();
  await panel.locator(".steps li").first().waitFor();
  const steps = await panel.locator(".steps li").allInnerTexts();
  assert(steps.includes("Bash: echo hello > out.txt"), `steps: ${steps}`);
  await panel.getByRole("button", { name: "JSON" }).click();
  const raw = await panel.locator(".raw-json").innerText();
  assert.match(raw, /"type": "system"/);
  assert.match(raw, /\n {2}"subtype": "init"/, "the events are pretty-printed");
  ok("Log shows the steps and the raw events as JSON");

  await tab("Metadata").click();
  const metadata = Object.fromEntries(await panel.locator("dt").evaluateAll((terms) =>
    terms.map((term) => [term.textContent, term.nextElementSibling.textContent])));
  assert.equal(metadata.Status, "Done");
  assert.equal(metadata.Harness, "Claude Code");
  assert.equal(metadata.Repository, await first.locator(".block-repo").innerText());
  assert.equal(metadata.Session, "s-app-1");
  assert.match(metadata.Changes, /1 file changed, \+1 −0/);
  assert.match(metadata.Checkpoints, /^[0-9a-f]{7} → [0-9a-f]{7}$/);
  assert.match(metadata["Harness log"], /\.harness\.jsonl$/);
  assert.equal(metadata.Model, "claude-sonnet-4-5");
  assert.equal(metadata.Tokens, "1,000 in · 200 out");
  assert.match(metadata.Cost, /^\$0\.0123, as the harness reported it/);
  assert.equal(metadata["CLI version"], "1.2.3");
  assert.equal(metadata["Unknown events"], "brand_new_event ×2");
  assert.equal(metadata["Lines not JSON"], "1");
  await panel.locator("button.link").click();
  assert.equal(await tab("Log").getAttribute("aria-selected"), "true");
  ok("Metadata lists the turn and the event types its driver did not know; its log path opens Log");

  // A follow-up makes a second block.
  script("CINCH_SCRIPT_FOLLOW_UP");
  await page.getByLabel("Follow-up").fill("Add a second line.");
  await page.getByRole("button", { name: "Send" }).click();
  await eventually("a second block", async () => (await page.locator(".block").count()) === 2);
  const second = page.locator(".block").nth(1);
  await second.locator(".block-status", { hasText: "Done" }).waitFor({ timeout: 60_000 });
  assert.match(await second.locator(".block-brief").innerText(), /Add a second line\./);
  assert.equal(await page.getByLabel("Follow-up").inputValue(), "");
  const users = await page.locator(".step-user .content").allInnerTexts();
  assert.deepEqual(users.slice(-1), ["Add a second line."]);
  await eventually("the session's cost of two turns", async () =>
    (await page.locator(".session-facts").innerText()).includes("$0.0246 · 2,400 tokens"));
  ok("a follow-up runs as a second block; the session's cost adds up");

  // Revert puts the work tree back to the turn's start; Undo brings it back.
  const sessionPath = new URL(page.url()).hash.replace(/^#/, "").replace(/^\/tasks/, "");
  const accountId = (await api("GET", "/accounts"))[0].id;
  const workspace = (await api("GET", `/accounts/${accountId}/tasks${sessionPath}`)).workspace;
  const outTxt = () => fs.readFileSync(path.join(workspace, "out.txt"), "utf8");
  assert.equal(outTxt(), "hello\nagain\n");
  assert(await first.locator(".block-revert").isEnabled());
  await second.getByRole("button", { name: "Revert" }).click();
  const revertLine = page.locator(".step-revert").first();
  await revertLine.waitFor();
  assert.match(await revertLine.innerText(), /Reverted to the start of a turn · 1 file changed, \+0 −1/);
  assert.equal(outTxt(), "hello\n");
  await revertLine.getByRole("button", { name: "Undo" }).click();
  await eventually("the undo's line", async () => (await page.locator(".step-revert").count()) === 2);
  assert.equal(outTxt(), "hello\nagain\n");
  assert.equal(await page.locator(".block").count(), 2, "a revert is no turn");
  ok("Revert on a block restores the work tree to its start; Undo reverts the revert");

  // A log that cannot be read says why (the server's answer is stood in for, slowly).
  await page.route("**/log", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await route.fulfill({
      status: 404,
      contentType: "application/problem+json",
      body: JSON.stringify({ type: "urn:cinch:not_found", title: "Not Found", status: 404, detail: "that call has no harness log", errors: [] }),
    });
  });
  await second.locator(".block-toggle").click();
  await second.getByRole("tab", { name: "Log" }).click();
  const secondPanel = second.locator("[role=tabpanel]:not([hidden])");
  await secondPanel.getByText("Loading the log…").waitFor();
  await secondPanel.getByText("Couldn't load the harness log").waitFor();
  assert.match(await secondPanel.innerText(), /that call has no harness log/);
  await page.unroute("**/log");
  ok("Log says it is loading, then why it couldn't load");

  // A long turn: a reload shows it running, with its latest lines from the log; Abort cancels it.
  script("CINCH_SCRIPT_HANG");
  await page.getByLabel("Follow-up").fill("Take your time.");
  await page.getByRole("button", { name: "Send" }).click();
  const third = page.locator(".block").nth(2);
  await third.locator(".block-status", { hasText: "Running…" }).waitFor();
  await eventually("the long turn's progress", async () =>
    (await third.locator(".block-progress li").allInnerTexts()).includes("Bash: sleep 1000"));
  await page.reload();
  await third.locator(".block-status", { hasText: "Running…" }).waitFor();
  await eventually("progress after a reload", async () =>
    (await third.locator(".block-progress li").allInnerTexts()).includes("Bash: sleep 1000"));
  const afterReload = await third.locator(".block-progress li").allInnerTexts();
  assert.equal(new Set(afterReload).size, afterReload.length, `no line twice: ${afterReload}`);
  assert.equal(await page.locator(".block[data-status=completed]").count(), 2);
  assert(await first.locator(".block-revert").isDisabled(), "no revert while a turn runs");
  ok("a reload shows the state from the API; Revert waits while a turn runs");

  // A running block opens on Result, which shows its progress.
  await third.locator(".block-toggle").click();
  assert.equal(await third.getByRole("tab", { name: "Result" }).getAttribute("aria-selected"), "true");
  const progress = await third.locator("[role=tabpanel]:not([hidden]) .steps li").allInnerTexts();
  assert(progress.includes("Bash: sleep 1000"), `Result while running: ${progress}`);
  ok("a running block opens on Result, with its progress");

  const pulse = () => third.locator(".block-logo svg").evaluate((node) => getComputedStyle(node).animationName);
  assert.equal(await pulse(), "pulse");
  await page.emulateMedia({ reducedMotion: "reduce" });
  assert.equal(await pulse(), "none");
  await page.emulateMedia({ reducedMotion: "no-preference" });
  ok("the running logo pulses, unless motion is reduced");

  // A message sent while a turn runs waits in the queue, shown after the running block.
  script("CINCH_SCRIPT_MARKDOWN");
  await page.getByLabel("Follow-up").fill("Then this.");
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator(".step-internal", { hasText: "Queue · queued" }).waitFor();
  const order = await page.locator(".conversation > li").evaluateAll((items) =>
    items.map((item) => item.querySelector(".block")?.dataset.status ?? item.innerText));
  assert.equal(order.at(-1).trim(), "You\nThen this.", `the queued message comes last: ${order}`);
  ok("a message sent during a turn shows queued, with a muted queue line");

  const abort = page.getByRole("button", { name: "Abort" });
  await eventually("Abort to be enabled", () => abort.isEnabled());
  await abort.click();
  await third.locator(".block-status", { hasText: "Cancelled" }).waitFor({ timeout: 60_000 });
  assert.equal(await third.getAttribute("data-status"), "cancelled");
  ok("Abort stops the running turn: Cancelled");

  // The queued message runs next, as a fourth block, and answers in markdown.
  const fourth = page.locator(".block").nth(3);
  await fourth.locator(".block-status", { hasText: "Done" }).waitFor({ timeout: 60_000 });
  assert.match(await fourth.locator(".block-brief").innerText(), /Then this\./);
  await eventually("Abort to be disabled", async () => !(await abort.isEnabled()));
  ok("the queued message runs once the aborted turn has ended");

  assert(await replyOf(2).isHidden(), "the aborted turn has no final message, so no reply");
  await markdownReply(replyOf(3));
  ok("a markdown reply shows rendered under its block as the turn ends, its HTML and script link inert");
  await foldedReply(replyOf(3));
  await screenshot(replyOf(3), "reply.png");
  ok("a long reply is folded: Show more unfolds it, Show less folds it again");

  await page.reload();
  await fourth.locator(".block-status", { hasText: "Done" }).waitFor();
  assert.equal(await replyOf(0).locator(".markdown").innerText(), "I wrote out.txt; it says hello.");
  await markdownReply(replyOf(3));
  await foldedReply(replyOf(3));
  await page.setViewportSize({ width: 375, height: 740 });
  await noSideways("a reply with a long code line");
  await page.setViewportSize({ width: 1100, height: 900 });
  ok("after a reload the replies show again, rendered and folded; at 375px a long code line scrolls in its box");
  await screenshot(page.locator(".task-body"), "task.png");

  // Close ends the session.
  await page.getByRole("button", { name: "Close session" }).click();
  await eventually("the session to close", async () =>
    (await page.locator(".session-facts").innerText()).startsWith("done"));
  assert(!(await page.getByRole("button", { name: "Close session" }).isEnabled()));
  ok("Close closes the session");

  // Dark mode reads too.
  await page.emulateMedia({ colorScheme: "dark" });
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(background, "rgb(247, 247, 248)");
  await screenshot(page.locator(".block").first(), "block-done-dark.png", { left: 36 });
  await page.emulateMedia({ colorScheme: "light" });
  ok("dark mode");

  // The list: title, status, preview, owner, harness.
  await page.getByRole("link", { name: "Tasks", exact: true }).click();
  const row = page.locator(".task-row").first();
  await row.waitFor();
  assert.match(await row.locator(".task-title").innerText(), /^Say hello$/);
  // Its only session closed after turns that went well: the list reads it done.
  assert.equal(await row.locator(".chip").innerText(), "done");
  await eventually("the task's preview", async () =>
    (await row.locator(".task-preview").count()) === 1);
  assert.match(await row.locator(".task-meta").innerText(), /^admin · claude · /);
  await screenshot(page.locator("main"), "tasks.png");
  ok("the tasks list");

  // Tasks made through the API: "Two attempts" has an attachment and will have
  // two sessions; the agent's task has no title, so its session gets one.
  const account = (await api("GET", "/accounts"))[0].id;
  const tasksPath = `/accounts/${account}/tasks`;
  const environment = (await api("GET", `/accounts/${account}/environments`)).find((entry) => entry.name === "app");
  // The first attempt writes a line too long for any window, to see the page keeps its width.
  const longLine = "a-long-unbroken-line-".repeat(12);
  quickScript("The long way worked.", { "out.txt": `hello\n${longLine}\n` });
  const attempts = await api("POST", tasksPath, {
    title: "Two attempts",
    prompt: "Attempt one: fix it the long way.",
    environment_id: environment.id,
    attachments: [{ name: "CI failure", text: "The checkout test times out waiting for payment confirmation." }],
  });
  const TIDY = "Tidy the README so newcomers can set up the project and run its tests";
  const tidy = await api("POST", tasksPath, { prompt: `${TIDY}\nKeep it short.` }, env("CINCH_AGENT_TOKEN"));
  assert.equal(tidy.owner, null);
  assert.equal(tidy.title, TIDY);
  const attemptsPath = `${tasksPath}/${attempts.id}`;
  const [one] = await api("GET", `${attemptsPath}/sessions`);
  const [tidySession] = await api("GET", `${tasksPath}/${tidy.id}/sessions`);
  await Promise.all([idle(`${attemptsPath}/sessions/${one.id}`), idle(`${tasksPath}/${tidy.id}/sessions/${tidySession.id}`)]);
  quickScript("The short way worked too.", { "out.txt": "hello\nshort\n" });
  const two = await api("POST", `${attemptsPath}/sessions`, { title: "Second attempt", prompt: "Attempt two: fix it the short way." });

  // The "needs someone" queue: the agent's task is nobody's; the admin's are theirs.
  const needsSomeone = page.getByRole("button", { name: "Needs someone" });
  const all = page.getByRole("button", { name: "All", exact: true });
  await needsSomeone.click();
  assert.equal(await needsSomeone.getAttribute("aria-pressed"), "true");
  assert.equal(await all.getAttribute("aria-pressed"), "false");
  await eventually("only the agent's task under Needs someone", async () =>
    (await page.locator(".task-row .task-title").allInnerTexts()).join("|") === TIDY);
  const owner = page.locator(".task-row .owner");
  assert.equal(await owner.innerText(), "needs someone");
  assert.equal(await owner.getAttribute("class"), "owner unowned");
  await all.click();
  await eventually("all three tasks", async () => (await page.locator(".task-row").count()) === 3);
  const owners = Object.fromEntries(await page.locator(".task-row").evaluateAll((rows) =>
    rows.map((row) => [row.querySelector(".task-title").textContent, row.querySelector(".owner").className + ": " + row.querySelector(".owner").textContent])));
  assert.deepEqual(owners, {
    [TIDY]: "owner unowned: needs someone",
    "Two attempts": "owner: admin",
    "Say hello": "owner: admin",
  });
  ok("an agent's task shows as needing someone, alone under that filter; the admin's show their owner");

  // A list of all tasks answering late, after Needs someone was chosen, does not take its place.
  let staleDone;
  const stale = new Promise((resolve) => { staleDone = resolve; });
  await page.route((url) => url.pathname === `/v1${tasksPath}` && !url.searchParams.has("owner"), async (route) => {
    await sleep(700);
    await route.continue().catch(() => {});
    staleDone();
  }, { times: 1 });
  await all.click();
  await needsSomeone.click();
  await eventually("only the agent's task again", async () =>
    (await page.locator(".task-row .task-title").allInnerTexts()).join("|") === TIDY);
  await stale;
  await sleep(300);
  assert.deepEqual(await page.locator(".task-row .task-title").allInnerTexts(), [TIDY], "the late list of all tasks was dropped");
  assert.equal(await needsSomeone.getAttribute("aria-pressed"), "true");
  await all.click();
  await eventually("all three tasks again", async () => (await page.locator(".task-row").count()) === 3);
  ok("a late answer for the other filter does not replace the list");

  // The untitled task's session: a muted title line before the prompt.
  await page.locator(".task-row", { hasText: TIDY }).locator(".task-link").click();
  await page.getByRole("heading", { name: TIDY, level: 1 }).waitFor();
  assert.match(await page.locator(".task-head p").innerText(), / · needs someone · by agent$/);
  const titleLine = page.locator(".step-internal").first();
  await titleLine.waitFor();
  assert.equal(await titleLine.innerText(), `Title · ${TIDY}`);
  assert.equal(await page.locator(".conversation > li").first().innerText(), `Title · ${TIDY}`, "the title line comes first");
  await mutedLine(titleLine, "the ai-title line");
  ok("an ai-title message is one muted line");

  // A task with two sessions: it opens on the latest, and the hash names it.
  await page.getByRole("link", { name: "← Tasks" }).click();
  await page.locator(".task-row", { hasText: "Two attempts" }).locator(".task-link").click();
  await page.getByRole("heading", { name: "Two attempts", level: 1 }).waitFor();
  const sessionLinks = page.locator(".sessions a");
  const current = page.locator('.sessions a[aria-current="page"]');
  const hashOf = (session) => `#/tasks/${attempts.id}/sessions/${session.id}`;
  const hash = () => page.evaluate(() => location.hash);
  /** What the conversation shows: its users' messages and its blocks' briefs. */
  const shown = async () => ({
    users: await page.locator(".step-user .content").allInnerTexts(),
    briefs: await page.locator(".block .block-brief").allInnerTexts(),
    internal: await page.locator(".step-internal").allInnerTexts(),
  });
  await oneDoneBlock("the second session's block, done");
  assert.deepEqual(await sessionLinks.locator(".session-title").allInnerTexts(), ["Two attempts", "Second attempt"]);
  assert.equal(await current.locator(".session-title").innerText(), "Second attempt");
  assert.equal(await hash(), hashOf(two), "the hash names the session shown");
  assert.deepEqual(await shown(), {
    users: ["Attempt two: fix it the short way."],
    briefs: ["Attempt two: fix it the short way."],
    internal: ["Attachment · attached CI failure"],
  });
  assert.equal(await page.locator("#session-heading").innerText(), "Second attempt");

  // Picking the first session shows its own conversation.
  await sessionLinks.filter({ hasText: "Two attempts" }).click();
  await eventually("the first session's conversation", async () =>
    (await page.locator(".step-user .content").allInnerTexts()).join("|") === "Attempt one: fix it the long way.");
  assert.equal(await hash(), hashOf(one));
  assert.equal(await current.locator(".session-title").innerText(), "Two attempts");
  assert.equal(await page.locator("#session-heading").innerText(), "Two attempts");
  await oneDoneBlock("the first session's block, done");
  assert.deepEqual(await shown(), {
    users: ["Attempt one: fix it the long way."],
    briefs: ["Attempt one: fix it the long way."],
    internal: ["Attachment · attached CI failure"],
  });
  await page.locator(".block .block-toggle").click();
  assert.match(await page.locator(".block [role=tabpanel]:not([hidden])").innerText(), /The long way worked\./);
  assert.doesNotMatch(await page.locator(".conversation").innerText(), /Attempt two|short way worked/);

  // Back goes to the second session again.
  await page.goBack();
  await eventually("the second session after Back", async () =>
    (await page.locator(".step-user .content").allInnerTexts()).join("|") === "Attempt two: fix it the short way.");
  assert.equal(await hash(), hashOf(two));
  assert.equal(await current.locator(".session-title").innerText(), "Second attempt");
  ok("a task's two sessions: picking each shows its own conversation, and the hash follows");

  // The attachment line: muted, one line, before the prompt.
  const attachmentLine = page.locator(".step-internal", { hasText: "Attachment" });
  const items = await page.locator(".conversation > li").allInnerTexts();
  assert.equal(items[0], "Attachment · attached CI failure", `the attachment line comes first: ${items}`);
  await mutedLine(attachmentLine, "the attachment line");
  ok("an attachment message is one muted line");

  // A slow load overtaken by a later one does not take the page back.
  let slowDone;
  const slow = new Promise((resolve) => { slowDone = resolve; });
  await page.route(`**${attemptsPath}/sessions`, async (route) => {
    await sleep(700);
    await route.continue().catch(() => {});
    slowDone();
  }, { times: 1 });
  await sessionLinks.filter({ hasText: "Two attempts" }).click();
  await page.getByText("Loading the task…").waitFor();
  await page.goBack();
  await slow;
  await sleep(300);
  assert.equal(await hash(), hashOf(two));
  assert.equal(await current.locator(".session-title").innerText(), "Second attempt");
  assert.deepEqual((await shown()).users, ["Attempt two: fix it the short way."]);
  ok("a session's slow load, left before it came, does not replace the page shown since");

  // A phone's width: the task page and an opened block fit, with the diff's long line scrolling in its box.
  await sessionLinks.filter({ hasText: "Two attempts" }).click();
  await eventually("the first session", async () => (await hash()) === hashOf(one)
    && (await page.locator(".block[data-status=completed]").count()) === 1);
  await page.setViewportSize({ width: 375, height: 740 });
  await noSideways("the task page");
  const narrow = page.locator(".block").first();
  await narrow.locator(".block-toggle").click();
  assert.equal(await narrow.locator(".block-toggle").getAttribute("aria-expanded"), "true");
  await narrow.getByRole("tab", { name: "Diff" }).click();
  await narrow.locator(".diff-add", { hasText: longLine }).waitFor();
  await noSideways("an opened block's diff");
  for (const [part, what] of [[".block-harness", "the block's harness"], [".block-status", "the block's status"], [".block-time", "the block's time"]]) {
    await inView(narrow.locator(part), what);
  }
  for (const name of ["Result", "Diff", "Log", "Metadata"]) await inView(narrow.getByRole("tab", { name }), `the ${name} tab`);
  for (const name of ["Abort", "Close session", "Send"]) {
    await inView(page.getByRole("button", { name }), `the ${name} button`);
    await oneLine(page.getByRole("button", { name }), `the ${name} button`);
  }
  await inView(page.locator(".sessions a").first(), "the session list");
  await screenshot(narrow, "block-narrow.png", { left: 36 });
  await narrow.getByRole("tab", { name: "Metadata" }).click();
  await noSideways("an opened block's metadata");
  ok("at 375px the task page and an opened block fit: no sideways scrolling, header, status and buttons shown");

  await page.getByRole("link", { name: "← Tasks" }).click();
  await page.locator(".task-row", { hasText: TIDY }).waitFor();
  await noSideways("the tasks list");
  for (const row of await page.locator(".task-row").all()) await inView(row, "a task row");
  for (const item of await page.locator("#nav > *").all()) {
    const what = `the top bar's ${await item.innerText()}`;
    await inView(item, what);
    await oneLine(item, what);
  }
  for (const logo of await page.locator(".task-row .logo").all()) {
    assert.equal((await logo.boundingBox()).width, 20, "a row's logo keeps its size beside a long title");
  }
  await page.locator(".task-row", { hasText: TIDY }).locator(".task-link").click();
  await page.locator(".step-internal").first().waitFor();
  await noSideways("the untitled task's page");
  await mutedLine(page.locator(".step-internal").first(), "the ai-title line at 375px");
  assert.equal(await page.locator(".step-internal [title]").first().getAttribute("title"), `Title · ${TIDY}`, "the whole line on hover");
  ok("at 375px the tasks list fits, and a long internal line stays one line");
  await page.setViewportSize({ width: 1100, height: 900 });

  // Sign out forgets the token.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Token").waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("cinch.token")), null);
  ok("sign out");
}
