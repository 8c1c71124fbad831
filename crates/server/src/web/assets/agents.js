// Agents: who runs the account's tasks, each with its default harness,
// model, effort and environment, and whether it may run tasks; and a form
// that adds one. The API checks the choices; its problems show by the field.

import { accountPath, v1, v1All } from "./api.js";
import { announce, h } from "./dom.js";
import { clearErrors, field, options, showErrors, uid } from "./form.js";

export function showAgents(main) {
  document.title = "Agents — cinch";
  const list = h("div", { class: "agent-list" });
  const status = h("p", { class: "muted", role: "status", text: "Loading the agents…" });
  main.replaceChildren(
    h("h1", { text: "Agents" }),
    h("p", { class: "muted", text: "A task runs as an agent: its harness, model and effort unless the task names others, in its environment." }),
    list,
    status);
  Promise.all([v1All(accountPath("/agents")), v1("/models"), v1All(accountPath("/environments"))]).then(
    ([agents, harnesses, environments]) => {
      status.textContent = "";
      const forms = agents.map((agent) => agentForm(agent, harnesses, environments));
      list.replaceChildren(...forms, newAgentForm(main));
    },
    (error) => { status.textContent = `Couldn't load the agents: ${error.message}`; },
  );
}

function agentForm(agent, harnesses, environments) {
  const harness = field("Default harness", h("select", { name: "harness" }), { key: "harness" });
  const model = field("Model", h("input", { type: "text", name: "model", autocomplete: "off", spellcheck: false, list: uid("models"), value: agent.model ?? "" }),
    { key: "model", hint: "Empty: the harness's default." });
  const models = h("datalist", { id: model.control.getAttribute("list") });
  const effort = field("Effort", h("select", { name: "effort" }), { key: "effort" });
  const environment = field("Environment", h("select", { name: "environment_id" }), { key: "environment_id" });
  const enabled = h("input", { type: "checkbox", id: uid("enabled"), checked: agent.enabled });
  const fields = [harness, model, effort, environment];
  const problem = h("p", { class: "problem", role: "alert", hidden: true });

  options(harness.control, [["", "The server's default"], ...harnesses.map((entry) => [entry.harness, entry.display_name])], agent.harness ?? "");
  options(environment.control, [["", "None: a scratch repository"], ...environments.map((env) => [env.id, `${env.name} — ${env.repository}`])],
    agent.environment_id ?? "");
  const harnessChanged = (chosenEffort) => {
    const chosen = harnesses.find((entry) => entry.harness === harness.control.value);
    models.replaceChildren(...(chosen?.models ?? []).map((id) => h("option", { value: id })));
    options(effort.control, [["", "The harness's default"], ...(chosen?.efforts ?? []).map((value) => [value, value])], chosenEffort);
  };
  harness.control.addEventListener("change", () => harnessChanged(""));
  harnessChanged(agent.effort ?? "");

  const save = h("button", { type: "submit", class: "primary", text: `Save ${agent.name}` });
  return h("form", {
    class: "settings-form agent",
    "aria-label": `Agent ${agent.name}`,
    onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(fields, problem);
      save.disabled = true;
      const body = {
        harness: harness.control.value || null,
        model: model.control.value.trim() || null,
        effort: effort.control.value || null,
        environment_id: environment.control.value || null,
        enabled: enabled.checked,
      };
      try {
        await v1(accountPath(`/agents/${encodeURIComponent(agent.id)}`), { method: "PATCH", body });
        announce(`Agent ${agent.name} saved`);
        problem.textContent = "Saved.";
        problem.className = "muted";
        problem.hidden = false;
      } catch (error) {
        problem.className = "problem";
        showErrors(fields, problem, error, `save ${agent.name}`);
      } finally {
        save.disabled = false;
      }
    },
  },
  h("h2", {}, agent.name, agent.connected ? h("span", { class: "chip", text: "connected" }) : null),
  h("div", { class: "row" }, harness.element, model.element, effort.element),
  models,
  environment.element,
  h("p", { class: "check" }, enabled, h("label", { for: enabled.id, text: "May run tasks" })),
  problem,
  h("div", { class: "form-actions" }, save));
}

function newAgentForm(main) {
  const name = field("New agent's name", h("input", { type: "text", name: "name", autocomplete: "off", spellcheck: false }), { key: "name" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  return h("form", {
    class: "settings-form",
    onsubmit: async (event) => {
      event.preventDefault();
      clearErrors([name], problem);
      try {
        await v1(accountPath("/agents"), { method: "POST", body: { name: name.control.value.trim() } });
        showAgents(main);
      } catch (error) {
        showErrors([name], problem, error, "add the agent");
      }
    },
  },
  h("h2", { text: "New agent" }),
  name.element,
  problem,
  h("div", { class: "form-actions" }, h("button", { type: "submit", text: "Add agent" })));
}
