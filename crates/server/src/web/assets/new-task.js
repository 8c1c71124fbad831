// The new-task form: a prompt and title, an environment, and the harness,
// model and effort the first session runs.

import { accountPath, v1, v1All } from "./api.js";
import { h } from "./dom.js";
import { credentialNote } from "./credentials.js";

export function showNewTask(main, navigate) {
  const prompt = h("textarea", { id: "task-prompt", name: "prompt", rows: 6, required: true });
  const title = h("input", { id: "task-title", name: "title", type: "text", autocomplete: "off" });
  const environment = h("select", { id: "task-environment", name: "environment" });
  const noEnvironment = h("p", { class: "muted hint", hidden: true },
    "No environment yet: the agent works in an empty scratch repository. ",
    h("a", { href: "#/environments/new", text: "New environment" }),
    " puts it in your repository.");
  const harness = h("select", { id: "task-harness", name: "harness" });
  const model = h("select", { id: "task-model", name: "model" });
  const effort = h("select", { id: "task-effort", name: "effort" });
  const submit = h("button", { type: "submit", class: "primary", text: "Start task" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  let models = [];
  let environments = [];
  const credential = credentialNote();
  const credentialChanged = () => credential.update(
    models.find((entry) => entry.harness === harness.value),
    environments.find((env) => env.id === environment.value),
    (updated) => {
      environments = environments.map((env) => (env.id === updated.id ? updated : env));
      credentialChanged();
    });
  environment.addEventListener("change", credentialChanged);

  const field = (label, control, hint) =>
    h("div", { class: "field" }, h("label", { for: control.id, text: label }), control, hint ? h("p", { class: "muted hint", text: hint }) : null);
  const options = (select, values, chosen) =>
    select.replaceChildren(...values.map(([value, text]) => h("option", { value, text, selected: value === chosen })));

  /** The harness's models and efforts, its defaults chosen. */
  const harnessChanged = () => {
    const chosen = models.find((entry) => entry.harness === harness.value);
    // A harness that lists no models or efforts runs on its own default.
    const choices = (values) => (values?.length ? values.map((value) => [value, value]) : [["", "The harness's default"]]);
    options(model, choices(chosen?.models), chosen?.default_model);
    options(effort, choices(chosen?.efforts), chosen?.default_effort);
    credentialChanged();
  };
  harness.addEventListener("change", harnessChanged);

  const form = h("form", {
    class: "new-task",
    onsubmit: async (event) => {
      event.preventDefault();
      problem.hidden = true;
      submit.disabled = true;
      const body = { prompt: prompt.value, harness: harness.value };
      if (model.value) body.model = model.value;
      if (effort.value) body.effort = effort.value;
      if (title.value.trim()) body.title = title.value.trim();
      if (environment.value) body.environment_id = environment.value;
      try {
        const task = await v1(accountPath("/tasks"), { method: "POST", body });
        navigate(`#/tasks/${encodeURIComponent(task.id)}`);
      } catch (error) {
        const fields = error.errors.map((fault) => `${fault.field}: ${fault.message}`);
        problem.textContent = `Couldn't start the task: ${fields.length ? fields.join("; ") : error.message}`;
        problem.hidden = false;
        submit.disabled = false;
      }
    },
  },
  field("Prompt", prompt, "The whole task: the harness sees nothing else."),
  field("Title", title, "Optional."),
  field("Environment", environment),
  noEnvironment,
  h("div", { class: "row" }, field("Harness", harness), field("Model", model), field("Effort", effort)),
  credential.element,
  problem,
  h("div", { class: "form-actions" }, submit, h("a", { href: "#/tasks", text: "Cancel" })));

  document.title = "New task — cinch";
  main.replaceChildren(h("h1", { text: "New task" }), form);
  prompt.focus();

  Promise.all([v1All(accountPath("/environments")), v1("/models")]).then(
    ([listed, harnesses]) => {
      environments = listed;
      models = harnesses;
      options(environment, [["", "The agent's environment"], ...environments.map((env) => [env.id, `${env.name} — ${env.repository}`])],
        environments.length === 1 ? environments[0].id : "");
      noEnvironment.hidden = environments.length > 0;
      options(harness, harnesses.map((entry) => [entry.harness, entry.display_name]), "claude");
      harnessChanged();
    },
    (error) => {
      problem.textContent = `Couldn't load the environments and models: ${error.message}`;
      problem.hidden = false;
    },
  );
}
