// The account's usage: its turns' tokens and cost over a range of days,
// all together and by harness, model or day.

import { accountPath, v1 } from "./api.js";
import { h } from "./dom.js";
import { clearErrors, field, options, showErrors } from "./form.js";

const GROUPS = [["day", "Day"], ["harness", "Harness"], ["model", "Model"]];

export function showUsage(main) {
  document.title = "Usage — cinch";
  const from = field("From", h("input", { type: "date", name: "from" }), { key: "from", hint: "Empty: since the first turn." });
  const to = field("To", h("input", { type: "date", name: "to" }), { key: "to", hint: "Turns before this day. Empty: until now." });
  const groupBy = field("Group by", h("select", { name: "group_by" }), { key: "group_by" });
  options(groupBy.control, GROUPS, "day");
  const fields = [from, to, groupBy];
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const totals = h("dl", { class: "usage-totals", "aria-label": "Totals" });
  const table = h("div", { class: "table-scroll" });

  const load = async () => {
    clearErrors(fields, problem);
    const query = new URLSearchParams({ group_by: groupBy.control.value });
    if (from.control.value) query.set("from", from.control.value);
    if (to.control.value) query.set("to", to.control.value);
    try {
      const report = await v1(accountPath(`/usage?${query}`));
      totals.replaceChildren(...summary(report.totals).flatMap(([term, value]) => [h("dt", { text: term }), h("dd", { text: value })]));
      const label = GROUPS.find(([value]) => value === groupBy.control.value)[1];
      table.replaceChildren(report.groups.length
        ? h("table", { class: "usage-table" },
          h("thead", {}, h("tr", {}, [label, "Turns", "Input tokens", "Output tokens", "Cost"].map((text) => h("th", { scope: "col", text })))),
          h("tbody", {}, report.groups.map((group) => h("tr", {},
            h("th", { scope: "row", text: group.key ?? "not said" }),
            h("td", { text: count(group.turns) }),
            h("td", { text: count(group.input_tokens) }),
            h("td", { text: count(group.output_tokens) }),
            h("td", { text: dollars(group) })))))
        : h("p", { class: "muted", text: "No turns in this range." }));
    } catch (error) {
      showErrors(fields, problem, error, "load the usage");
    }
  };

  main.replaceChildren(
    h("h1", { text: "Usage" }),
    h("form", { class: "usage-form", onsubmit: (event) => { event.preventDefault(); load(); } },
      h("div", { class: "row" }, from.element, to.element, groupBy.element),
      problem,
      h("div", { class: "form-actions" }, h("button", { type: "submit", text: "Show" }))),
    totals,
    table);
  load();
}

function count(n) {
  return (n ?? 0).toLocaleString("en-US");
}

/** "$1.23" and, when some turns had no known cost, how many. */
function dollars(totals) {
  const amount = `$${totals.cost_usd < 1 ? totals.cost_usd.toFixed(4) : totals.cost_usd.toFixed(2)}`;
  const unpriced = totals.turns_without_cost;
  return unpriced ? `${amount} (${unpriced} turn${unpriced === 1 ? "" : "s"} unpriced)` : amount;
}

function summary(totals) {
  return [
    ["Turns", count(totals.turns)],
    ["Input tokens", `${count(totals.input_tokens)} (${count(totals.cached_input_tokens)} cached)`],
    ["Output tokens", count(totals.output_tokens)],
    ["Cost", dollars(totals)],
    ["Of which reported by the harnesses", `$${totals.reported_cost_usd.toFixed(4)}`],
    ["Of which estimated by cinch", `$${totals.estimated_cost_usd.toFixed(4)}`],
  ];
}
