// A turn's final message, shown under its block as the assistant's reply, so
// a person reads the answer or the question without opening the block. It is
// markdown, rendered safely (markdown.js); a long one is folded to a few
// lines' height, with "Show more" to read it all and "Show less" to fold it.

import { h } from "./dom.js";
import { markdown } from "./markdown.js";

/**
 * Replies whose text may now fit or overflow the folded height: the text
 * reflows when the window's width changes, and it has no height at all until
 * its block is on the page.
 */
const resized = new ResizeObserver((entries) => {
  for (const entry of entries) replies.get(entry.target)?.measure();
});
const replies = new WeakMap(); // content element → its reply

let nextId = 0;

export class Reply {
  constructor() {
    const id = `reply-${nextId++}`;
    this.text = null;
    this.expanded = false;
    this.content = h("div", { class: "markdown" });
    this.body = h("div", { class: "reply-body", id }, this.content);
    this.toggle = h("button", {
      type: "button",
      class: "reply-toggle",
      "aria-controls": id,
      hidden: true,
      onclick: () => this.setExpanded(!this.expanded),
    });
    this.element = h("section", { class: "reply", "aria-label": "Reply", hidden: true }, this.body, this.toggle);
    replies.set(this.content, this);
    resized.observe(this.content);
  }

  /** Shows `text`, or nothing for none; a changed text starts folded. */
  show(text) {
    if (text === this.text) return;
    this.text = text;
    this.element.hidden = !text;
    this.content.replaceChildren(...(text ? markdown(text) : []));
    this.setExpanded(false);
  }

  setExpanded(expanded) {
    const folding = this.expanded && !expanded;
    this.expanded = expanded;
    this.measure();
    // Folding a long reply read to its end would leave the reader far below it.
    if (folding) this.element.scrollIntoView({ block: "nearest" });
  }

  /** Folds the body to the CSS's height, and offers the toggle only when that cuts the text short. */
  measure() {
    this.body.classList.toggle("folded", !this.expanded);
    const cut = !this.expanded && this.content.offsetHeight > this.body.clientHeight;
    this.body.classList.toggle("cut", cut);
    this.toggle.hidden = !(cut || this.expanded);
    this.toggle.textContent = this.expanded ? "Show less" : "Show more";
    this.toggle.setAttribute("aria-expanded", String(this.expanded));
  }
}
