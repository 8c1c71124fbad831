// What went wrong, headline first: the line that explains it, which the
// server picks past a CLI's chatter (`headline.rs`: a turn result's
// `headline`, the cause a setup failure's message leads with), and the rest
// one click away.

import { h } from "./dom.js";

/** The lines of a failure's text: its own lines, and a setup tail's ` | ` parts. */
function lines(text) {
  return (text ?? "")
    .split(/\n| \| /)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Why a session closed or went idle, in words. */
const REASONS = {
  setup_failure: "A setup command failed",
  vm_failure: "The workspace could not be made",
  snapshot_failure: "The workspace could not be snapshotted",
  turn_failure: "The turn failed",
  resource_exhausted: "No turn slot came free in time",
  waiting_timeout: "The wait for a turn slot ran out",
};

/** A setup failure's message: `setup command \`<command>\` <why>: <output tail>`. */
const SETUP = /^setup command `([^`]*)` ([^:]*): ([\s\S]*)$/;
const SETUP_LOG_NOTE = / \(the session's setup log has its whole output\)$/;

/**
 * The failure panel of a failed session: its cause as the headline (from
 * `turnHeadline`, its failed turn's, when there is one), what failed
 * in small print, and for a setup failure its setup log: the whole output
 * `setupLog()` fetches, the lines the session's error message keeps until
 * then (or when the server has none). Null for a session that did not fail.
 */
export function sessionFailure(session, { turnHeadline, setupLog }) {
  const reason = REASONS[session.close_reason];
  if (!reason) return null;
  const message = session.error_message ?? "";
  const setup = session.close_reason === "setup_failure" ? SETUP.exec(message) : null;
  const turn = session.close_reason === "turn_failure" ? turnHeadline : null;
  // The server leads a setup failure with the line that explains it, then
  // "; its last lines: a | b | c".
  const [picked, tail] = setup ? setup[3].replace(SETUP_LOG_NOTE, "").split("; its last lines: ") : [];
  const headline = (setup ? picked : turn || message) || reason;
  const small = setup ? `${reason}: \`${setup[1]}\` ${setup[2]}.` : `${reason}.`;
  const panel = h("section", { class: "failure", "aria-labelledby": "failure-headline" },
    h("h3", { id: "failure-headline", class: "failure-headline", text: headline }),
    h("p", { class: "muted failure-what", text: small }));
  if (setup) {
    const output = h("pre", { class: "setup-log", text: lines(tail ?? picked).join("\n") });
    panel.append(h("details", { class: "setup-output" }, h("summary", { text: "Setup log" }), output));
    setupLog().then(
      (text) => {
        if (!text.trim()) return;
        output.textContent = text.trimEnd();
        output.dataset.whole = "true";
      },
      () => {}, // the message's lines stay
    );
  } else if (message && lines(message).length > 1) {
    panel.append(h("details", {}, h("summary", { text: "The whole message" }), h("pre", { class: "setup-log", text: message })));
  }
  return panel;
}
