// API tokens: make one (for yourself or an agent; its text is shown once,
// here, and never again), list them (never their text), revoke one.

import { accountPath, call, v1, v1All } from "./api.js";
import { ago, announce, h } from "./dom.js";
import { clearErrors, field, options, showErrors } from "./form.js";

export function showTokens(main) {
  document.title = "Tokens — cinch";
  const list = h("ul", { class: "settings-list", "aria-label": "Tokens" });
  const status = h("p", { class: "muted", role: "status", text: "Loading the tokens…" });
  const name = field("Name", h("input", { type: "text", name: "name", maxLength: 100, autocomplete: "off", placeholder: "CI, laptop…" }), { key: "name", hint: "Optional: what it is for, to tell it from the others." });
  const owner = field("For", h("select", { name: "agent_id" }), { key: "agent_id", hint: "Yourself, or an agent (a CI job, another program) that acts for the account." });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const made = h("div", { class: "new-token", role: "status" });

  const load = async () => {
    try {
      const [tokens, agents] = await Promise.all([v1(accountPath("/tokens")), v1All(accountPath("/agents"))]);
      if (!owner.control.options.length) {
        options(owner.control, [["", "Me"], ...agents.map((agent) => [agent.id, `The agent ${agent.name}`])], "");
      }
      list.replaceChildren(...tokens.map((token) => row(token, load, problem)));
      status.textContent = tokens.length ? "" : "No tokens.";
    } catch (error) {
      status.textContent = `Couldn't load the tokens: ${error.message}`;
    }
  };

  const create = h("form", {
    class: "settings-form",
    onsubmit: async (event) => {
      event.preventDefault();
      clearErrors([name, owner], problem);
      const body = owner.control.value ? { agent_id: owner.control.value } : {};
      if (name.control.value.trim()) body.name = name.control.value.trim();
      try {
        const token = await v1(accountPath("/tokens"), { method: "POST", body });
        const text = h("input", { type: "text", id: "new-token-text", readOnly: true, value: token.secret, class: "mono", spellcheck: false });
        made.replaceChildren(
          h("label", { for: text.id, text: `New token${token.name ? ` “${token.name}”` : ""} for ${token.owner_name}` }),
          text,
          h("p", { class: "muted hint", text: "Copy it now: cinch keeps only its hash and will not show it again." }));
        text.select();
        name.control.value = "";
        announce("Token created: copy it now");
        load();
      } catch (error) {
        showErrors([name, owner], problem, error, "create the token");
      }
    },
  },
  h("h2", { text: "New token" }),
  name.element,
  owner.element,
  problem,
  h("div", { class: "form-actions" }, h("button", { type: "submit", class: "primary", text: "Create token" })),
  made);

  main.replaceChildren(h("h1", { text: "Tokens" }), create, h("h2", { text: "Tokens of the account" }), list, status);
  load();
}

function row(token, reload, problem) {
  return h("li", { class: "settings-row", "data-token": token.id },
    token.name ? h("strong", { class: "settings-name", text: token.name }) : null,
    h("code", { class: token.name ? "muted" : "settings-name", text: token.id }),
    h("span", { class: "muted", text: `${token.owner_kind === "agent" ? "agent" : "member"} ${token.owner_name}` }),
    h("span", { class: "muted", text: `made ${ago(token.created_at)}` }),
    h("button", {
      type: "button",
      text: "Revoke",
      "aria-label": `Revoke ${token.id}`,
      onclick: async () => {
        const what = token.name ? `“${token.name}” (${token.id})` : token.id;
        if (!window.confirm(`Revoke ${what} of ${token.owner_name}? Whatever uses it stops working.`)) return;
        try {
          await call(`/v1${accountPath(`/tokens/${encodeURIComponent(token.id)}`)}`, { method: "DELETE" });
          announce(`Token ${token.id} revoked`);
          reload();
        } catch (error) {
          problem.textContent = `Couldn't revoke ${token.id}: ${error.message}`;
          problem.hidden = false;
        }
      },
    }));
}
