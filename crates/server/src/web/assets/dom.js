// Small DOM and formatting helpers shared by the views.

/**
 * Builds an element. `attrs` sets properties and attributes: `class`,
 * `text` (its text content), `on<event>` handlers, `aria-*`, `data-*` and any
 * other attribute by name; `false`, `null` and `undefined` leave it unset.
 * Children are nodes or strings; null ones are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const isSvg = tag === "svg" || attrs.svg;
  const element = isSvg
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined || name === "svg") continue;
    if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    // Booleans and numbers go to HTML properties (`disabled`, `hidden`, `value`).
    else if (!isSvg && name in element && typeof value !== "string") element[name] = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** An SVG child element (its namespace differs from HTML's). */
export function svg(tag, attrs = {}, ...children) {
  return h(tag, { ...attrs, svg: true }, ...children);
}

/** "12s", "1m 05s", "1h 02m": a run time at a glance. */
export function duration(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** "just now", "5 min ago", or the date: when something happened. */
export function ago(iso) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const seconds = (Date.now() - then) / 1000;
  if (seconds < 45) return "just now";
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return new Date(then).toLocaleDateString();
}

export function firstLine(text) {
  return (text ?? "").trim().split("\n", 1)[0];
}

/** A commit id as people read it: its first 7 characters. */
export function shortSha(sha) {
  return sha ? sha.slice(0, 7) : "none";
}

/** "1 file changed, +3 −1", as the result's second line reads. */
export function diffstat({ total_files: files, insertions, deletions }) {
  if (!files) return "no files changed";
  return `${files} file${files === 1 ? "" : "s"} changed, +${insertions} −${deletions}`;
}

/**
 * A cost as a block or a total shows it: `text` ("$0.0123", "~$0.0123" when
 * cinch estimated it) and `title` (where it comes from); null without one.
 */
export function cost(usage) {
  if (usage?.cost_usd == null) return null;
  const amount = usage.cost_usd < 1 ? usage.cost_usd.toFixed(4) : usage.cost_usd.toFixed(2);
  const estimated = usage.cost_source === "estimated";
  return {
    text: `${estimated ? "~" : ""}$${amount}`,
    title: estimated
      ? `~$${amount}, cinch's estimate from its price table`
      : `$${amount}, as the harness reported it (its own estimate)`,
  };
}

/** "1,120 in (1,000 cached) · 50 out": a turn's tokens; null without usage. */
export function tokens(usage) {
  if (!usage) return null;
  const count = (n) => (n ?? 0).toLocaleString("en-US");
  const cached = usage.cached_input_tokens ? ` (${count(usage.cached_input_tokens)} cached)` : "";
  return `${count(usage.input_tokens)} in${cached} · ${count(usage.output_tokens)} out`;
}

/** "$0.0246 · 2,340 tokens": what some turns cost together; null for none. */
export function totals(usage) {
  if (!usage?.turns) return null;
  const amount = usage.cost_usd < 1 ? usage.cost_usd.toFixed(4) : usage.cost_usd.toFixed(2);
  const all = (usage.input_tokens + usage.output_tokens).toLocaleString("en-US");
  const priced = usage.cost_usd > 0 || !usage.turns_without_cost ? `$${amount} · ` : "";
  return `${priced}${all} tokens`;
}

/** Tells screen readers about a change that happened out of their focus. */
export function announce(text) {
  const region = document.getElementById("announce");
  region.textContent = "";
  // A new text node after a clear is what makes the region speak again.
  requestAnimationFrame(() => { region.textContent = text; });
}

/**
 * Makes `container`'s children exactly `elements`, in order, moving only
 * those out of place: a moved or replaced element loses the focus, and a
 * live list must not take it from someone using the keyboard.
 */
export function reconcile(container, elements) {
  let cursor = container.firstChild;
  for (const element of elements) {
    if (element === cursor) cursor = cursor.nextSibling;
    else container.insertBefore(element, cursor);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    cursor.remove();
    cursor = next;
  }
}
