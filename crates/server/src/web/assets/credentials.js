// Whether the chosen harness will have a key for the task, on New task: a
// server turn gets one from the server (its [secrets] or pass_env, as
// GET /v1/models's `credential` says) or from its environment's secrets, and
// nowhere else. When it has none, the note offers to add the key as a secret
// of the chosen environment.

import { accountPath, v1 } from "./api.js";
import { h } from "./dom.js";

const SOURCES = {
  server_secrets: "from [secrets] in the server's config.toml",
  pass_env: "from the server's environment ([serve] pass_env)",
  not_needed: "it needs no key",
};

/**
 * The note's element and `update(harness, environment, replaced)`: `harness`
 * is the harness's entry of /v1/models, `environment` the chosen
 * environment (undefined for the agent's own), and `replaced(environment)` is
 * called with the environment once a key was added to it.
 */
export function credentialNote() {
  const element = h("div", { class: "credential-note", role: "status", "aria-live": "polite" });

  const update = (harness, environment, replaced) => {
    const credential = harness?.credential;
    if (!credential) {
      element.replaceChildren();
      return;
    }
    const name = harness.display_name;
    if (credential.available) {
      const where = SOURCES[credential.source] ?? "";
      const variable = credential.variable ? `${credential.variable}, ` : "";
      element.replaceChildren(h("p", { class: "muted hint", text: `${name} has a key on this server: ${variable}${where}.` }));
      return;
    }
    const given = credential.variables.find((variable) => environment?.secret_names?.includes(variable));
    if (given) {
      element.replaceChildren(h("p", { class: "muted hint", text: `${name} gets its key from this environment's secret ${given}.` }));
      return;
    }
    const ways = h("details", {}, h("summary", { text: "Other ways to give it a key" }),
      h("ul", {}, credential.how_to_add.map((way) => h("li", { text: way }))));
    const missing = h("p", { class: "problem", text: `${name} has no key for this task: its turns would fail.` });
    if (!environment || !credential.variables.length) {
      const hint = environment ? null : h("p", { class: "muted hint", text: "Choose an environment to add one as its secret." });
      element.replaceChildren(missing, ...(hint ? [hint] : []), ways);
      return;
    }
    element.replaceChildren(missing, keyForm(credential.variables[0], environment, replaced), ways);
  };

  return { element, update };
}

/** Adds `variable` as a secret of `environment`: its value is write-only. */
function keyForm(variable, environment, replaced) {
  const value = h("input", { id: "credential-value", type: "password", autocomplete: "off", required: true });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const add = h("button", { type: "button", text: `Add ${variable} to ${environment.name}` });
  add.addEventListener("click", async () => {
    if (!value.value.trim()) {
      problem.textContent = `Enter the key's value first.`;
      problem.hidden = false;
      return;
    }
    add.disabled = true;
    problem.hidden = true;
    try {
      const updated = await v1(accountPath(`/environments/${encodeURIComponent(environment.id)}`), {
        method: "PATCH",
        body: { secrets: { [variable]: value.value } },
      });
      value.value = "";
      replaced(updated);
    } catch (error) {
      problem.textContent = `Couldn't add the key: ${error.message}`;
      problem.hidden = false;
      add.disabled = false;
    }
  });
  return h("div", { class: "field" },
    h("label", { for: value.id, text: `${variable} (kept as a secret of ${environment.name}; never shown again)` }),
    value, add, problem);
}
