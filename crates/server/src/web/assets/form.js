// Form helpers of the settings screens: labelled fields, and the API's
// problem details shown next to the fields they name.

import { h } from "./dom.js";

let nextId = 0;

/** A unique id for a control. */
export function uid(prefix) {
  return `${prefix}-${nextId++}`;
}

/**
 * A labelled field: its `<label>`, the control, an optional hint and the
 * place its errors go. `key` is the API's field name (its first part) whose
 * errors show here. Returns {element, control, error}.
 */
export function field(label, control, { hint, key } = {}) {
  control.id ||= uid("field");
  const error = h("p", { class: "problem field-error", id: `${control.id}-error`, hidden: true });
  const hintNode = hint ? h("p", { class: "muted hint", id: `${control.id}-hint`, text: hint }) : null;
  control.setAttribute("aria-describedby", [hintNode?.id, error.id].filter(Boolean).join(" "));
  const element = h("div", { class: "field", "data-field": key ?? null }, h("label", { for: control.id, text: label }), control, hintNode, error);
  return { element, control, error, key };
}

/** A select's options: [value, text] pairs, `chosen` selected. */
export function options(select, values, chosen) {
  select.replaceChildren(...values.map(([value, text]) => h("option", { value, text, selected: value === chosen })));
}

/**
 * Shows an API error on a form: each field error next to its field (the
 * field whose key is the error's field's first part: `secrets.TOKEN` goes
 * to `secrets`), the rest, and a summary, in `problem`.
 */
export function showErrors(fields, problem, error, doing) {
  clearErrors(fields, problem);
  const unplaced = [];
  for (const fault of error.errors ?? []) {
    const key = fault.field.split(/[.[]/, 1)[0];
    const target = fields.find((candidate) => candidate.key === key);
    const text = `${fault.field === key ? "" : `${fault.field}: `}${fault.message}`;
    if (!target) {
      unplaced.push(`${fault.field}: ${fault.message}`);
      continue;
    }
    target.error.textContent = target.error.hidden ? text : `${target.error.textContent}; ${text}`;
    target.error.hidden = false;
    target.control.setAttribute("aria-invalid", "true");
  }
  const placed = (error.errors?.length ?? 0) - unplaced.length;
  const summary = placed ? `${placed === 1 ? "A field needs" : `${placed} fields need`} a change: see below it.` : "";
  problem.textContent = `Couldn't ${doing}: ${[summary, ...unplaced].filter(Boolean).join(" ") || error.message}`;
  problem.hidden = false;
  fields.find((candidate) => !candidate.error.hidden)?.control.focus();
}

/** Takes the errors off a form. */
export function clearErrors(fields, problem) {
  for (const { control, error } of fields) {
    error.hidden = true;
    error.textContent = "";
    control.removeAttribute("aria-invalid");
  }
  problem.hidden = true;
}

/** Lines of a textarea, trimmed, empty ones left out. */
export function linesOf(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean);
}
