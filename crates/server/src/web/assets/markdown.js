// Markdown as DOM nodes, for text a harness wrote. Every piece of the text
// becomes a text node or an element this module chose, with attributes it
// chose: the text can never add markup, scripts or event handlers, so raw
// HTML in it reads as the text it is. A link goes only to an http, https or
// mailto address; any other shows its words as text. Images are not loaded
// (a reply must not make the browser fetch from elsewhere): they show as a
// link to the image.
//
// It reads what agents write: paragraphs, headings (# and underlined),
// emphasis, strong, strikethrough, inline code, fenced code, bullet, ordered
// and task lists (nested), block quotes, tables, rules, links and bare URLs.

import { h } from "./dom.js";

/** The nodes of `text` rendered as markdown. */
export function markdown(text) {
  // Tabs count as four columns for indentation, as in CommonMark.
  return blocks(text.replace(/\r\n?/g, "\n").replace(/^\t+/gm, (tabs) => "    ".repeat(tabs.length)).split("\n"));
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*(.*)$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
const TASK = /^\[([ xX])\][ \t]+/;
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/** The block elements of `lines`. */
function blocks(lines) {
  const nodes = [];
  for (let i = 0; i < lines.length;) {
    if (!lines[i].trim()) {
      i += 1;
      continue;
    }
    const read = opener(lines, i) ?? paragraph;
    const { node, next } = read(lines, i);
    nodes.push(node);
    i = next;
  }
  return nodes;
}

/**
 * The reader of the block that line `i` starts, or null for a paragraph's
 * line. Inside a paragraph (`interrupting`) a list starts only plainly, with
 * text after "-" or "1.": "2019. was a year" goes on with the paragraph.
 */
function opener(lines, i, { interrupting = false } = {}) {
  const line = lines[i];
  if (fenceOf(line)) return fence;
  if (HEADING.test(line)) return heading;
  if (RULE.test(line)) return rule;
  if (QUOTE.test(line)) return quote;
  const item = ITEM.exec(line);
  if (item && (!interrupting || (item[4]?.trim() && (!/\d/.test(item[2]) || parseInt(item[2], 10) === 1)))) return list;
  if (tableAt(lines, i)) return table;
  return null;
}

function fenceOf(line) {
  const match = FENCE.exec(line);
  // "```a``` b" is inline code, not a fence: a backtick fence's info has no backtick.
  if (!match || (match[2][0] === "`" && match[3].includes("`"))) return null;
  return { indent: match[1].length, marks: match[2] };
}

function fence(lines, i) {
  const { indent, marks } = fenceOf(lines[i]);
  const closing = new RegExp(`^ {0,3}${marks[0]}{${marks.length},}[ \\t]*$`);
  const indentation = new RegExp(`^ {0,${indent}}`);
  const code = [];
  // Unclosed, the fence runs to the end of the text.
  for (i += 1; i < lines.length && !closing.test(lines[i]); i += 1) code.push(lines[i].replace(indentation, ""));
  return { node: h("pre", {}, h("code", { text: code.join("\n") })), next: i + 1 };
}

/**
 * A heading, a level below the page's own: the page's h1 is the task and
 * its h2 the session, so a reply's "#" is an h3.
 */
function headingNode(level, text) {
  return h(`h${Math.min(6, level + 2)}`, {}, inline(text.trim()));
}

function heading(lines, i) {
  const [, hashes, text = ""] = HEADING.exec(lines[i]);
  return { node: headingNode(hashes.length, text), next: i + 1 };
}

function rule(lines, i) {
  return { node: h("hr"), next: i + 1 };
}

function quote(lines, i) {
  const body = [];
  for (; i < lines.length; i += 1) {
    const match = QUOTE.exec(lines[i]);
    if (match) body.push(match[1]);
    // A line without ">" goes on with the quote's paragraph ("lazy").
    else if (lines[i].trim() && body.at(-1)?.trim() && !opener(lines, i, { interrupting: true })) body.push(lines[i]);
    else break;
  }
  return { node: h("blockquote", {}, blocks(body)), next: i };
}

/** What a list's items share: its bullet, or its numbers' closing "." or ")"; another starts a new list. */
function listKind(marker) {
  return /\d/.test(marker) ? marker.at(-1) : marker;
}

function list(lines, i) {
  const first = ITEM.exec(lines[i]);
  const kind = listKind(first[2]);
  const ordered = kind === "." || kind === ")";
  const items = [];
  // Loose, a list's items are paragraphs; tight (no blank line in it), just their text.
  let loose = false;
  const sibling = (line) => {
    const match = ITEM.exec(line);
    return match !== null && listKind(match[2]) === kind && !RULE.test(line);
  };
  while (i < lines.length && sibling(lines[i])) {
    const match = ITEM.exec(lines[i]);
    const spaces = match[3]?.length ?? 1;
    // The item's content starts after its marker; its other lines are indented that far.
    const indent = match[1].length + match[2].length + (spaces > 4 ? 1 : spaces);
    const body = [match[4] ?? ""];
    for (i += 1; i < lines.length; i += 1) {
      const line = lines[i];
      if (!line.trim()) body.push("");
      else if (line.length - line.trimStart().length >= indent) body.push(line.slice(indent));
      // Not indented, a line goes on with the item's paragraph unless it starts a block or the next item.
      else if (body.at(-1).trim() && !sibling(line) && !opener(lines, i, { interrupting: true })) body.push(line.trim());
      else break;
    }
    const blanks = body.length - 1 - body.findLastIndex((line) => line.trim());
    body.splice(body.length - blanks);
    if (body.slice(1).some((line) => !line.trim())) loose = true;
    else if (blanks && i < lines.length && sibling(lines[i])) loose = true;
    items.push(body);
  }
  const start = parseInt(first[2], 10);
  const node = h(ordered ? "ol" : "ul", { start: ordered && start !== 1 ? start : null },
    items.map((body) => listItem(body, loose)));
  return { node, next: i };
}

function listItem(body, loose) {
  const task = TASK.exec(body[0]);
  if (task) body = [body[0].slice(task[0].length), ...body.slice(1)];
  const children = blocks(body).flatMap((node) => (!loose && node.tagName === "P" ? [...node.childNodes] : [node]));
  if (!task) return h("li", {}, children);
  const box = h("input", { type: "checkbox", disabled: true, checked: task[1] !== " " });
  return h("li", { class: "task-item" }, box, " ", children);
}

function cells(line) {
  const trimmed = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  // "\|" is a pipe inside a cell, in code too.
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

/** Whether a table starts at line `i`: a row, then a delimiter row of as many cells. */
function tableAt(lines, i) {
  return i + 1 < lines.length && lines[i].includes("|") && TABLE_DELIMITER.test(lines[i + 1])
    && cells(lines[i]).length === cells(lines[i + 1]).length;
}

function table(lines, i) {
  const head = cells(lines[i]);
  // Cells are left-aligned unless the delimiter row says otherwise.
  const aligns = cells(lines[i + 1]).map((cell) => {
    if (!cell.endsWith(":")) return null;
    return cell.startsWith(":") ? "align-center" : "align-right";
  });
  const row = (texts, tag) =>
    h("tr", {}, head.map((_, column) => h(tag, { class: aligns[column] }, inline(texts[column] ?? ""))));
  const rows = [];
  for (i += 2; i < lines.length && lines[i].trim() && !opener(lines, i); i += 1) rows.push(row(cells(lines[i]), "td"));
  // Wide tables scroll in their own box rather than widening the page.
  const node = h("div", { class: "table-scroll" },
    h("table", {}, h("thead", {}, row(head, "th")), rows.length ? h("tbody", {}, rows) : null));
  return { node, next: i };
}

function paragraph(lines, i) {
  const text = [lines[i].trimStart()];
  for (i += 1; i < lines.length && lines[i].trim(); i += 1) {
    const underline = SETEXT.exec(lines[i]);
    if (underline) return { node: headingNode(underline[1][0] === "=" ? 1 : 2, text.join("\n")), next: i + 1 };
    if (opener(lines, i, { interrupting: true })) break;
    text.push(lines[i].trimStart());
  }
  return { node: h("p", {}, inline(text.join("\n").trimEnd())), next: i };
}

// Inline

const PUNCTUATION = /[!-/:-@[-`{-~]/;
const ALPHANUMERIC = /[\p{L}\p{N}]/u;
const AUTOLINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)>/y;
const EMAIL = /<([^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>/y;
const BARE_URL = /https?:\/\/[^\s<>]+/y;
const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** The address a link may go to: an absolute http, https or mailto URL, else null. */
function safeHref(address) {
  let url;
  try {
    // Without a base a relative address does not parse: it names nothing the reader could open.
    url = new URL(address);
  } catch {
    return null;
  }
  return SAFE_SCHEMES.has(url.protocol) ? url.href : null;
}

/** A link to `address` if it is safe; else its words as text, with the address on hover. */
function link(address, children) {
  const href = safeHref(address);
  if (!href) return h("span", { class: "unsafe-link", title: address }, children);
  return h("a", { href, rel: "noopener noreferrer", target: "_blank" }, children);
}

/**
 * The inline nodes of `text`. `inLink` is set inside a link's words, where
 * another link cannot go.
 */
function inline(text, { inLink = false } = {}) {
  const nodes = [];
  let plain = "";
  const context = {
    inLink,
    // Where a search for a closing delimiter found none: none will be found from later on either,
    // so a text full of unmatched "*" or "`" is read in linear time.
    unmatched: new Map(),
    // Each "[" and its "]", found in one pass when first needed, for the same reason.
    brackets: null,
  };
  for (let i = 0; i < text.length;) {
    const token = readToken(text, i, context);
    if (!token) {
      plain += text[i];
      i += 1;
      continue;
    }
    if (token.text !== undefined) plain += token.text;
    else {
      if (plain) nodes.push(plain);
      plain = "";
      nodes.push(token.node);
    }
    i = token.end;
  }
  if (plain) nodes.push(plain);
  return nodes;
}

/** What starts at `text[i]`: `{node, end}`, literal `{text, end}`, or null for a plain character. */
function readToken(text, i, context) {
  const char = text[i];
  if (char === "\\") {
    if (text[i + 1] === "\n") return { node: h("br"), end: i + 2 };
    if (PUNCTUATION.test(text[i + 1] ?? "")) return { text: text[i + 1], end: i + 2 };
    return null;
  }
  if (char === "\n") return lineBreak(text, i);
  if (char === "`") return codeSpan(text, i, context.unmatched);
  if (char === "*" || char === "_" || char === "~") return emphasis(text, i, context);
  if (char === "[" || (char === "!" && text[i + 1] === "[")) {
    if (context.inLink) return null;
    context.brackets ??= brackets(text);
    return linkToken(text, i, context.brackets);
  }
  if (context.inLink) return null;
  if (char === "<") return autolink(text, i);
  if (char === "h" && !ALPHANUMERIC.test(text[i - 1] ?? "")) return bareUrl(text, i);
  return null;
}

/** Two spaces before a line's end break the line; else the line goes on (the newline reads as a space). */
function lineBreak(text, i) {
  let spaces = 0;
  while (text[i - 1 - spaces] === " ") spaces += 1;
  return spaces >= 2 ? { node: h("br"), end: i + 1 } : { text: "\n", end: i + 1 };
}

function run(text, i) {
  let end = i;
  while (text[end] === text[i]) end += 1;
  return end - i;
}

/** The index of the next run of exactly `length` of `char` from `from` that `closes(index)` accepts, or -1. */
function closer(text, from, char, length, closes, unmatched) {
  const key = `${char}${length}`;
  if ((unmatched.get(key) ?? Infinity) <= from) return -1;
  for (let at = text.indexOf(char, from); at !== -1; at = text.indexOf(char, at)) {
    const found = run(text, at);
    if (found === length && closes(at)) return at;
    at += found;
  }
  unmatched.set(key, Math.min(from, unmatched.get(key) ?? Infinity));
  return -1;
}

function codeSpan(text, i, unmatched) {
  const length = run(text, i);
  const end = closer(text, i + length, "`", length, () => true, unmatched);
  // Unmatched, the whole run is text: its backticks cannot open a shorter span.
  if (end === -1) return { text: text.slice(i, i + length), end: i + length };
  let code = text.slice(i + length, end).replaceAll("\n", " ");
  if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
  return { node: h("code", { text: code }), end: end + length };
}

/** `*em*`, `**strong**`, `***both***`, the same with `_` (not inside a word), and `~~struck~~`. */
function emphasis(text, i, { inLink, unmatched }) {
  const char = text[i];
  const length = run(text, i);
  const literal = { text: text.slice(i, i + length), end: i + length };
  if (char === "~" ? length !== 2 : length > 3) return literal;
  const after = text[i + length] ?? " ";
  if (/\s/.test(after) || (char === "_" && ALPHANUMERIC.test(text[i - 1] ?? ""))) return literal;
  const closes = (at) => !/\s/.test(text[at - 1]) && !(char === "_" && ALPHANUMERIC.test(text[at + length] ?? ""));
  const end = closer(text, i + length, char, length, closes, unmatched);
  if (end === -1) return literal;
  const inner = inline(text.slice(i + length, end), { inLink });
  const node = char === "~" ? h("del", {}, inner)
    : length === 1 ? h("em", {}, inner)
      : length === 2 ? h("strong", {}, inner)
        : h("em", {}, h("strong", {}, inner));
  return { node, end: end + length };
}

/** The index of each "[" of `text` that a "]" closes → that "]"'s; escaped ones are text. */
function brackets(text) {
  const closes = new Map();
  const open = [];
  for (let at = 0; at < text.length; at += 1) {
    if (text[at] === "\\") at += 1;
    else if (text[at] === "[") open.push(at);
    else if (text[at] === "]" && open.length) closes.set(open.pop(), at);
  }
  return closes;
}

/** `[words](address "title")`, or `![alt](address)`: an image, shown as a link to it. */
function linkToken(text, i, closes) {
  const image = text[i] === "!";
  const open = image ? i + 1 : i;
  const close = closes.get(open);
  if (close === undefined || text[close + 1] !== "(") return null;
  const target = /\(\s*(?:<([^<>\n]*)>|((?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*))(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/y;
  target.lastIndex = close + 1;
  const match = target.exec(text);
  if (!match) return null;
  const address = (match[1] ?? match[2]).replace(/\\([!-/:-@[-`{-~])/g, "$1");
  const words = text.slice(open + 1, close);
  const children = image ? [words || "image"] : inline(words, { inLink: true });
  return { node: link(address, children), end: target.lastIndex };
}

/** `<https://…>` or `<someone@example.com>`; anything else in angle brackets stays text. */
function autolink(text, i) {
  for (const [pattern, prefix] of [[AUTOLINK, ""], [EMAIL, "mailto:"]]) {
    pattern.lastIndex = i;
    const match = pattern.exec(text);
    if (match) return { node: link(prefix + match[1], [match[1]]), end: pattern.lastIndex };
  }
  return null;
}

/** An http(s) URL in running text, without the punctuation that ends its sentence. */
function bareUrl(text, i) {
  BARE_URL.lastIndex = i;
  const match = BARE_URL.exec(text);
  if (!match) return null;
  let url = match[0];
  for (;;) {
    if (/[.,:;!?'"*_~]$/.test(url)) url = url.slice(0, -1);
    // A ")" closes the URL's own "(" (Wikipedia's addresses have them), else the sentence's.
    else if (url.endsWith(")") && url.split("(").length < url.split(")").length) url = url.slice(0, -1);
    else break;
  }
  return { node: link(url, [url]), end: i + url.length };
}
