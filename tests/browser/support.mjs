// What every browser test shares: its settings from the environment that
// host/tests/it/app.rs gives it, the test's own calls to the API, waiting for a
// condition, numbered "ok" lines, and a headless Chromium whose page errors
// are collected (a test ends by asserting there were none).

import assert from "node:assert/strict";
import path from "node:path";
import { chromium } from "playwright-core";

/** A setting the Rust side passes; fails, saying how to run the test, when it is missing. */
export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through cargo test -p cinch --test it -- app::`);
  return value;
}

/** A /v1 call made by the test itself (not the page): its status, text and parsed JSON. */
export async function request(method, rest, body, token = env("CINCH_TOKEN")) {
  const response = await fetch(`${env("CINCH_URL")}/v1${rest}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : null };
}

/** A /v1 call that must succeed: its data. */
export async function api(method, rest, body, token) {
  const answer = await request(method, rest, body, token);
  assert(answer.status < 300, `${method} ${rest} answered ${answer.status}: ${answer.text}`);
  return answer.json?.data;
}

/** Polls `check` until it returns a truthy value; fails with `what` after `timeout` ms. */
export async function eventually(what, check, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Numbered TAP-like lines: `ok N - what`; `ok.step` is the last number said. */
export function stepper() {
  const ok = (what) => {
    ok.step += 1;
    console.log(`ok ${ok.step} - ${what}`);
  };
  ok.step = 0;
  return ok;
}

/**
 * A headless Chromium on a fresh profile, its first page, and the errors
 * that page logs. Without the background-networking flags Chromium reaches
 * for Google's services, which this closed network floods with retries.
 */
export async function launch({ viewport = { width: 1100, height: 900 }, ...options } = {}) {
  const context = await chromium.launchPersistentContext(env("CINCH_PROFILE"), {
    executablePath: env("CINCH_CHROMIUM"),
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport,
    ...options,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  return { context, page, problems };
}

/**
 * Says why a browser test failed: the step it failed at and the error, a
 * screenshot (`<name>-failure.png` under CINCH_SCREENSHOTS), what the page
 * logged and its text; and fails the process.
 */
export async function reportFailure({ page, problems }, ok, name, error) {
  const file = path.join(env("CINCH_SCREENSHOTS"), `${name}-failure.png`);
  await page.screenshot({ path: file, fullPage: true }).catch(() => {});
  console.error(`not ok ${ok.step + 1} - ${error.stack}`);
  console.error(`screenshot of the failure: ${file}`);
  console.error(`page problems:\n${problems.join("\n")}`);
  console.error(`page text:\n${await page.locator("main").innerText().catch(() => "(none)")}`);
  process.exitCode = 1;
}
