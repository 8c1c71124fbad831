// The app's shell: sign-in, sign-out and the routes, kept in the URL's hash
// (#/tasks, #/new, #/tasks/<id>, #/tasks/<id>/sessions/<id>, #/environments,
// #/environments/new, #/environments/<id>, #/agents, #/tokens, #/usage) so
// the server serves one page.

import { UNAUTHORIZED, session, signIn, signOut } from "./api.js";
import { h } from "./dom.js";
import { showAgents } from "./agents.js";
import { showEnvironment, showEnvironments } from "./environments.js";
import { showCompare } from "./compare.js";
import { showNewTask } from "./new-task.js";
import { showTask } from "./task.js";
import { showTasks } from "./tasks.js";
import { showTokens } from "./tokens.js";
import { showUsage } from "./usage.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let leave = null; // stops the current page: its stream, its timers

const ROUTES = [
  [/^#\/tasks\/?$/, () => showTasks(main)],
  [/^#\/new$/, () => showNewTask(main, navigate)],
  [/^#\/tasks\/([^/]+)\/compare$/, (task) => showCompare(main, decodeURIComponent(task))],
  [/^#\/tasks\/([^/]+)(?:\/sessions\/([^/]+))?$/, (task, sid) =>
    showTask(main, decodeURIComponent(task), sid && decodeURIComponent(sid))],
  [/^#\/environments\/?$/, () => showEnvironments(main, navigate)],
  [/^#\/environments\/new$/, () => showEnvironment(main, navigate, null)],
  [/^#\/environments\/([^/]+)$/, (id) => showEnvironment(main, navigate, decodeURIComponent(id))],
  [/^#\/agents$/, () => showAgents(main)],
  [/^#\/tokens$/, () => showTokens(main)],
  [/^#\/usage$/, () => showUsage(main)],
];

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function route() {
  leave?.();
  leave = null;
  if (!session.account) return showSignIn();
  nav.hidden = false;
  document.getElementById("account").textContent = session.account.name;
  for (const [pattern, show] of ROUTES) {
    const match = pattern.exec(location.hash);
    if (match) {
      leave = show(...match.slice(1)) ?? null;
      return;
    }
  }
  navigate("#/tasks");
}

function showSignIn(reason = "") {
  document.title = "Sign in — cinch";
  nav.hidden = true;
  const token = h("input", { id: "token", name: "token", type: "password", autocomplete: "current-password", required: true, spellcheck: false });
  const problem = h("p", { class: "problem", role: "alert", text: reason, hidden: !reason });
  const submit = h("button", { type: "submit", class: "primary", text: "Sign in" });
  const form = h("form", {
    class: "sign-in",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await signIn(token.value.trim());
        route();
      } catch (error) {
        problem.textContent = error.status === 401 ? "That token is not known here." : `Couldn't sign in: ${error.message}`;
        problem.hidden = false;
        submit.disabled = false;
        token.focus();
      }
    },
  },
  h("h1", { text: "Sign in to cinch" }),
  h("div", { class: "field" },
    h("label", { for: "token", text: "Token" }),
    token,
    h("p", { class: "muted hint" }, h("code", { text: "cinch serve" }), " prints the admin's token on its first start; ", h("code", { text: "cinch token create" }), " makes others.")),
  problem,
  submit);
  main.replaceChildren(form);
  token.focus();
}

function signOutNow(reason) {
  leave?.();
  leave = null;
  signOut();
  showSignIn(reason);
}

document.getElementById("sign-out").addEventListener("click", () => signOutNow(""));
window.addEventListener(UNAUTHORIZED, () => {
  if (session.account) signOutNow("The server no longer accepts the token: sign in again.");
});
window.addEventListener("hashchange", () => {
  route();
  main.focus({ preventScroll: true });
});

// A token kept from an earlier visit signs in by itself.
if (session.token) {
  signIn(session.token).then(route, (error) => showSignIn(`Couldn't sign in with the kept token: ${error.message}`));
} else {
  showSignIn();
}
