// Tabs as the ARIA pattern has them: a tablist of buttons, one panel each,
// arrow keys, Home and End move between the tabs.

import { h } from "./dom.js";

let nextId = 0;

/**
 * Tabs named `names` under `label`. `onSelect(name, panel)` runs each time a
 * tab is chosen, to fill its panel. Returns {element, select, selected}.
 */
export function tabs(names, { label, onSelect }) {
  const id = `tabs-${nextId++}`;
  const buttons = new Map();
  const panels = new Map();
  let current = null;

  const select = (name, { focus = false } = {}) => {
    current = name;
    for (const [other, button] of buttons) {
      const on = other === name;
      button.setAttribute("aria-selected", String(on));
      button.tabIndex = on ? 0 : -1;
      panels.get(other).hidden = !on;
    }
    if (focus) buttons.get(name).focus();
    onSelect(name, panels.get(name));
  };

  const onKey = (event) => {
    const index = names.indexOf(current);
    const target = {
      ArrowRight: names[(index + 1) % names.length],
      ArrowLeft: names[(index - 1 + names.length) % names.length],
      Home: names[0],
      End: names[names.length - 1],
    }[event.key];
    if (!target) return;
    event.preventDefault();
    select(target, { focus: true });
  };

  const list = h("div", { class: "tablist", role: "tablist", "aria-label": label, onkeydown: onKey });
  for (const name of names) {
    const slug = name.toLowerCase();
    const button = h("button", {
      type: "button",
      role: "tab",
      id: `${id}-${slug}-tab`,
      "aria-controls": `${id}-${slug}`,
      "aria-selected": "false",
      tabIndex: -1,
      text: name,
      onclick: () => select(name),
    });
    buttons.set(name, button);
    panels.set(name, h("div", {
      role: "tabpanel",
      id: `${id}-${slug}`,
      "aria-labelledby": button.id,
      class: "tabpanel",
      tabIndex: 0,
      hidden: true,
    }));
    list.append(button);
  }
  return {
    element: h("div", { class: "tabs" }, list, ...panels.values()),
    select,
    selected: () => current,
  };
}
