// Environments: the list, New environment and the edit form (name,
// repository, setup, variables, write-only secrets, MCP servers, allowed
// hosts). The API checks everything; its problems show next to the fields.
// A secret's value is sent, never shown back: the API answers its name only.

import { accountPath, call, v1, v1All } from "./api.js";
import { announce, h } from "./dom.js";
import { clearErrors, field, linesOf, showErrors, uid } from "./form.js";

export function showEnvironments(main, navigate) {
  const list = h("ul", { class: "settings-list", "aria-label": "Environments" });
  const status = h("p", { class: "muted", role: "status", text: "Loading the environments…" });
  document.title = "Environments — cinch";
  main.replaceChildren(
    h("header", { class: "page-head" },
      h("h1", { text: "Environments" }),
      h("button", { type: "button", class: "primary", text: "New environment", onclick: () => navigate("#/environments/new") })),
    h("p", { class: "muted", text: "An environment is a repository the agent works in, with its setup commands, variables and secrets." }),
    list,
    status);
  v1All(accountPath("/environments")).then(
    (environments) => {
      list.replaceChildren(...environments.map((environment) => h("li", { class: "settings-row" },
        h("a", { href: `#/environments/${encodeURIComponent(environment.id)}`, class: "settings-name", text: environment.name }),
        h("span", { class: "muted", text: environment.repository }),
        h("span", { class: "muted", text: summary(environment) }))));
      status.textContent = environments.length ? "" : "No environments yet: New environment makes one.";
    },
    (error) => { status.textContent = `Couldn't load the environments: ${error.message}`; },
  );
}

/** "2 secrets · 1 setup command · network: 3 hosts". */
function summary(environment) {
  const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const parts = [count(environment.secret_names.length, "secret"), count(environment.setup.length, "setup command")];
  if (environment.mcp_servers.length) parts.push(count(environment.mcp_servers.length, "MCP server"));
  parts.push(environment.allowed_hosts ? `network: ${count(environment.allowed_hosts.length, "host")}` : "network: open");
  return parts.join(" · ");
}

/** New environment (`id` null) or the edit form of environment `id`. */
export function showEnvironment(main, navigate, id) {
  document.title = `${id ? "Environment" : "New environment"} — cinch`;
  if (!id) {
    render(main, navigate, null);
    return;
  }
  main.replaceChildren(h("p", { class: "muted", text: "Loading the environment…" }));
  v1(accountPath(`/environments/${encodeURIComponent(id)}`)).then(
    (environment) => render(main, navigate, environment),
    (error) => main.replaceChildren(h("p", { class: "problem", role: "alert", text: `Couldn't load the environment: ${error.message}` })),
  );
}

function render(main, navigate, environment) {
  const editing = environment !== null;
  const name = field("Name", h("input", { type: "text", name: "name", required: true, autocomplete: "off", spellcheck: false, value: environment?.name ?? "" }),
    { key: "name", hint: "Letters, digits, _ . and -." });
  const repository = field("Repository", h("input", { type: "text", name: "repository", required: true, autocomplete: "off", spellcheck: false, value: environment?.repository ?? "" }),
    { key: "repository", hint: "An absolute path on the server (/home/me/project) or a git URL (https://…, git@host:path)." });
  const setup = field("Setup commands", h("textarea", { name: "setup", rows: 3, spellcheck: false, text: (environment?.setup ?? []).join("\n") }),
    { key: "setup", hint: "One command a line, run in order in a new workspace (npm ci, make deps…)." });
  const variables = pairs("Variables", "Variable", "env", Object.entries(environment?.env ?? {}), { secret: false });
  const secrets = secretsGroup(environment?.secret_names ?? []);
  const mcp = field("MCP servers", h("textarea", {
    name: "mcp_servers",
    rows: 4,
    spellcheck: false,
    class: "mono",
    text: environment?.mcp_servers?.length ? JSON.stringify(environment.mcp_servers, null, 2) : "",
  }), {
    key: "mcp_servers",
    hint: 'A JSON array, e.g. [{"name": "docs", "type": "http", "url": "https://…", "headers": {"Authorization": {"secret": "DOCS_TOKEN"}}}]; empty for none.',
  });
  const limited = h("input", { type: "checkbox", id: uid("limit"), checked: Boolean(environment?.allowed_hosts) });
  const hosts = field("Allowed hosts", h("textarea", {
    name: "allowed_hosts", rows: 3, spellcheck: false, text: (environment?.allowed_hosts ?? []).join("\n"),
  }), { key: "allowed_hosts", hint: "One a line: api.anthropic.com, *.npmjs.org or an IP address. Checked and empty: nothing gets out." });
  const syncHosts = () => { hosts.control.disabled = !limited.checked; };
  limited.addEventListener("change", syncHosts);
  syncHosts();

  const fields = [name, repository, setup, variables, secrets, mcp, hosts];
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary", text: editing ? "Save environment" : "Create environment" });
  const form = h("form", {
    class: "settings-form",
    novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(fields, problem);
      let servers = [];
      if (mcp.control.value.trim()) {
        try {
          servers = JSON.parse(mcp.control.value);
        } catch (error) {
          showErrors(fields, problem, { errors: [{ field: "mcp_servers", message: `not JSON: ${error.message}` }] }, "save the environment");
          return;
        }
      }
      const body = {
        name: name.control.value.trim(),
        repository: repository.control.value.trim(),
        setup: linesOf(setup.control.value),
        env: variables.values(),
        secrets: secrets.values(editing),
        mcp_servers: servers,
        allowed_hosts: limited.checked ? linesOf(hosts.control.value) : null,
      };
      if (!editing && body.allowed_hosts === null) delete body.allowed_hosts;
      submit.disabled = true;
      try {
        const saved = editing
          ? await v1(accountPath(`/environments/${encodeURIComponent(environment.id)}`), { method: "PATCH", body })
          : await v1(accountPath("/environments"), { method: "POST", body });
        announce(`Environment ${saved.name} saved`);
        navigate("#/environments");
      } catch (error) {
        showErrors(fields, problem, error, editing ? "save the environment" : "create the environment");
        submit.disabled = false;
      }
    },
  },
  name.element,
  repository.element,
  setup.element,
  variables.element,
  secrets.element,
  mcp.element,
  h("div", { class: "field" },
    h("span", { class: "check" }, limited, h("label", { for: limited.id, text: "Limit the network to the allowed hosts" })),
    hosts.element),
  problem,
  h("div", { class: "form-actions" },
    submit,
    h("a", { href: "#/environments", text: "Cancel" }),
    editing ? h("button", {
      type: "button",
      class: "danger",
      text: "Delete environment",
      onclick: async () => {
        if (!window.confirm(`Delete the environment ${environment.name}? Its secrets go with it.`)) return;
        try {
          await call(`/v1${accountPath(`/environments/${encodeURIComponent(environment.id)}`)}`, { method: "DELETE" });
          navigate("#/environments");
        } catch (error) {
          showErrors(fields, problem, error, "delete the environment");
        }
      },
    }) : null));
  main.replaceChildren(
    h("p", {}, h("a", { href: "#/environments", text: "← Environments" })),
    h("h1", { text: editing ? environment.name : "New environment" }),
    form);
  name.control.focus();
}

/**
 * A group of NAME = value rows under `legend` (`word` names one row: its
 * labels read "<word> name", "<word> value"). Returns a field for
 * showErrors, with `values()`: the rows as an object.
 */
function pairs(legend, word, key, entries, { secret }) {
  const rows = h("div", { class: "pairs" });
  const error = h("p", { class: "problem field-error", id: uid("pairs-error"), hidden: true });
  const addRow = (name = "", value = "") => {
    const nameInput = h("input", { type: "text", id: uid("pair-name"), autocomplete: "off", spellcheck: false, value: name, class: "pair-name" });
    const valueInput = h("input", {
      type: secret ? "password" : "text", id: uid("pair-value"), autocomplete: secret ? "new-password" : "off", spellcheck: false, value, class: "pair-value",
    });
    const row = h("div", { class: "pair" },
      h("div", { class: "field" }, h("label", { for: nameInput.id, text: `${word} name` }), nameInput),
      h("div", { class: "field" }, h("label", { for: valueInput.id, text: `${word} value` }), valueInput),
      h("button", { type: "button", class: "pair-remove", text: "Remove", "aria-label": `Remove this ${word.toLowerCase()}`, onclick: () => row.remove() }));
    rows.append(row);
    return nameInput;
  };
  for (const [name, value] of entries) addRow(name, value);
  const control = h("fieldset", { class: "pairs-group", tabindex: -1, "aria-describedby": error.id },
    h("legend", { text: legend }),
    rows,
    h("button", { type: "button", text: `Add a ${word.toLowerCase()}`, onclick: () => addRow().focus() }),
    error);
  return {
    element: control,
    control,
    error,
    key,
    addRow,
    values: () => Object.fromEntries([...rows.querySelectorAll(".pair")]
      .map((row) => [row.querySelector(".pair-name").value.trim(), row.querySelector(".pair-value").value])
      .filter(([name]) => name)),
  };
}

/**
 * Secrets: those kept, by name (each can be given a new value or removed;
 * no value is ever shown), and new ones. `values(editing)` is what to send:
 * new and replaced values, and null for each removed one when editing.
 */
function secretsGroup(names) {
  const group = pairs("Secrets", "Secret", "secrets", [], { secret: true });
  const kept = h("ul", { class: "kept-secrets", "aria-label": "Secrets kept" });
  const removed = new Set();
  const replaced = new Map(); // name → its input
  for (const name of names) {
    const input = h("input", { type: "password", id: uid("secret-new"), autocomplete: "new-password", placeholder: "unchanged" });
    replaced.set(name, input);
    const item = h("li", { class: "kept-secret" },
      h("code", { text: name }),
      h("span", { class: "muted", text: " · value hidden" }),
      h("label", { for: input.id, class: "visually-hidden", text: `New value for ${name}` }),
      input,
      h("button", {
        type: "button",
        text: "Remove",
        "aria-label": `Remove the secret ${name}`,
        onclick: () => {
          removed.add(name);
          item.remove();
        },
      }));
    kept.append(item);
  }
  group.control.insertBefore(kept, group.control.querySelector(".pairs"));
  group.control.insertBefore(h("p", { class: "muted hint", text: "Set for the harness and masked in its output. A value is never shown again once saved." }), kept);
  const newValues = group.values;
  group.values = (editing) => {
    const values = { ...newValues() };
    for (const [name, input] of replaced) {
      if (!removed.has(name) && input.value) values[name] = input.value;
    }
    if (editing) for (const name of removed) values[name] = null;
    return values;
  };
  if (!names.length) group.addRow();
  return group;
}
