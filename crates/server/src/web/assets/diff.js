// The Diff view of a turn: a tree of the changed files beside the files'
// changes, unified or side by side, syntax-highlighted, and each changed
// file whole (the diff asked with whole-file context) at a toggle.

import { h } from "./dom.js";
import { highlight, languageOf } from "./highlight.js";

let nextId = 0;

/** A unified diff's files: path, old path, status, binary, hunks of numbered lines, counts. */
export function parseDiff(text) {
  const files = [];
  let file = null;
  let oldLine = 0;
  let newLine = 0;
  const start = (path) => {
    file = { path, oldPath: path, status: "modified", binary: false, hunks: [], added: 0, removed: 0, inHunks: false };
    files.push(file);
  };
  for (const line of text.replace(/\n$/, "").split("\n")) {
    if (line.startsWith("diff --git ")) {
      const path = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      start(path ? path[2] : line.slice(11));
      if (path) file.oldPath = path[1];
      continue;
    }
    if (!file) start("");
    if (!file.inHunks) {
      if (line === "--- /dev/null" || line.startsWith("new file")) file.status = "added";
      else if (line === "+++ /dev/null" || line.startsWith("deleted file")) file.status = "deleted";
      else if (line.startsWith("--- a/")) file.oldPath = line.slice(6);
      else if (line.startsWith("+++ b/")) file.path = line.slice(6);
      else if (line.startsWith("rename from ")) (file.oldPath = line.slice(12)), (file.status = "renamed");
      else if (line.startsWith("rename to ")) file.path = line.slice(10);
      else if (line.startsWith("Binary files") || line === "GIT binary patch") file.binary = true;
      if (!line.startsWith("@@")) continue;
    }
    if (line.startsWith("@@")) {
      const numbers = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line);
      oldLine = numbers ? Number(numbers[1]) : 0;
      newLine = numbers ? Number(numbers[2]) : 0;
      file.hunks.push({ header: line, lines: [] });
      file.inHunks = true;
      continue;
    }
    const lines = file.hunks.at(-1).lines;
    if (line.startsWith("+")) {
      lines.push({ kind: "add", text: line.slice(1), newLine: newLine++ });
      file.added += 1;
    } else if (line.startsWith("-")) {
      lines.push({ kind: "del", text: line.slice(1), oldLine: oldLine++ });
      file.removed += 1;
    } else if (line.startsWith("\\")) {
      lines.push({ kind: "note", text: line });
    } else {
      lines.push({ kind: "context", text: line.slice(1), oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return files;
}

/**
 * The Diff view. `load(context)` fetches the diff's text with `hunks` or
 * `whole_files` context; `empty` is said of a diff with no files. Returns
 * its element.
 */
export function diffView(load, { empty = "No changes." } = {}) {
  const id = `diff-${nextId++}`;
  const state = { layout: "unified", scope: "hunks" };
  const texts = new Map(); // context → the diff's promise
  const body = h("div", { class: "diff-body" }, h("p", { class: "muted", text: "Loading the diff…" }));
  const toggles = (label, choices, key) => {
    const buttons = choices.map(([value, text]) => h("button", {
      type: "button",
      class: "toggle",
      "aria-pressed": String(state[key] === value),
      text,
      onclick: (clicked) => {
        state[key] = value;
        for (const button of buttons) button.setAttribute("aria-pressed", String(button === clicked.currentTarget));
        show();
      },
    }));
    return h("div", { class: "segmented", role: "group", "aria-label": label }, buttons);
  };
  const element = h("div", { class: "diff-view" },
  h("div", { class: "diff-toolbar" },
    toggles("Layout", [["unified", "Unified"], ["split", "Side by side"]], "layout"),
    toggles("Show", [["hunks", "Changes"], ["whole_files", "Whole file"]], "scope")),
  body);

  let shown = 0;
  const show = () => {
    const asked = ++shown;
    if (!texts.has(state.scope)) {
      texts.set(state.scope, load(state.scope).catch((error) => {
        texts.delete(state.scope);
        throw error;
      }));
    }
    texts.get(state.scope).then(
      (text) => {
        if (asked !== shown) return;
        const files = text.trim() ? parseDiff(text) : [];
        body.replaceChildren(...(files.length ? layout(files, state, id) : [h("p", { class: "muted", text: empty })]));
      },
      (error) => {
        if (asked === shown) body.replaceChildren(h("p", { class: "problem", text: `Couldn't load the diff: ${error.message}` }));
      },
    );
  };
  show();
  return element;
}

/** Paths in the tree's order: at each level, folders first, then by name. */
function treeOrder(a, b) {
  const left = a.path.split("/");
  const right = b.path.split("/");
  for (let at = 0; at < Math.min(left.length, right.length); at += 1) {
    const leftFolder = at < left.length - 1;
    const rightFolder = at < right.length - 1;
    if (leftFolder !== rightFolder) return leftFolder ? -1 : 1;
    if (left[at] !== right[at]) return left[at].localeCompare(right[at]);
  }
  return left.length - right.length;
}

/** The tree beside the files, which follow it in its order. */
function layout(unordered, state, id) {
  const files = [...unordered].sort(treeOrder);
  const sections = files.map((file, index) => fileSection(file, state, `${id}-file-${index}`));
  const tree = fileTree(files, sections);
  return [h("div", { class: "diff-columns" }, tree, h("div", { class: "diff-files" }, sections))];
}

/** The changed files as a tree of folders; a file's button brings its changes into view. */
function fileTree(files, sections) {
  const root = { folders: new Map(), files: [] };
  files.forEach((file, index) => {
    const parts = file.path.split("/");
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      if (!folder.folders.has(part)) folder.folders.set(part, { folders: new Map(), files: [] });
      folder = folder.folders.get(part);
    }
    folder.files.push({ name: parts.at(-1), file, section: sections[index] });
  });
  const buttons = [];
  const list = (folder) => h("ul", {},
    [...folder.folders.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, inner]) =>
      h("li", { class: "tree-folder" }, h("span", { class: "tree-folder-name", text: `${name}/` }), list(inner))),
    folder.files.sort((a, b) => a.name.localeCompare(b.name)).map(({ name, file, section }) => {
      const button = h("button", {
        type: "button",
        class: `tree-file status-${file.status}`,
        "aria-controls": section.id,
        title: file.path,
        onclick: () => {
          for (const other of buttons) other.removeAttribute("aria-current");
          button.setAttribute("aria-current", "true");
          section.scrollIntoView({ block: "nearest" });
          section.focus({ preventScroll: true });
        },
      },
      h("span", { class: "tree-file-name", text: name }),
      h("span", { class: "muted tree-file-counts", text: file.binary ? "binary" : `+${file.added} −${file.removed}` }));
      buttons.push(button);
      return h("li", {}, button);
    }));
  return h("nav", { class: "diff-tree", "aria-label": "Changed files" }, list(root));
}

const STATUS_WORDS = { added: "added", deleted: "deleted", renamed: "renamed", modified: "" };

function fileSection(file, state, id) {
  const language = languageOf(file.path);
  const renamed = file.status === "renamed" ? `${file.oldPath} → ` : "";
  const heading = h("h4", {},
    h("code", { text: `${renamed}${file.path}` }),
    h("span", { class: "muted", text: ` +${file.added} −${file.removed}` }),
    STATUS_WORDS[file.status] ? h("span", { class: "chip", text: STATUS_WORDS[file.status] }) : null);
  let content;
  if (file.binary) content = h("p", { class: "muted", text: "A binary file: no text to show." });
  else if (!file.hunks.length) content = h("p", { class: "muted", text: "No text changed (its mode or name only)." });
  else content = state.layout === "split" ? split(file, state, language) : unified(file, state, language);
  return h("section", { class: "diff-file", id, tabindex: -1, "data-path": file.path, "aria-label": file.path }, heading, content);
}

/** A line's text, highlighted, after its marker. */
function lineText(marker, text, language) {
  return [marker, ...highlight(text, language)];
}

/** A line number, shown by CSS from its attribute: it is no part of the line's text. */
function number(n) {
  return h("span", { class: "ln", "data-n": n ?? "", "aria-hidden": "true" });
}

/** One column of lines, each with its marker (`+`, `-`, ` `) and both numbers. */
function unified(file, state, language) {
  const lines = [];
  for (const hunk of file.hunks) {
    if (state.scope === "hunks") lines.push(h("span", { class: "diff-hunk", text: hunk.header }));
    for (const line of hunk.lines) {
      const marker = { add: "+", del: "-", context: " ", note: "" }[line.kind];
      lines.push(h("span", { class: `diff-${line.kind}` },
        line.kind === "note" ? line.text : [number(line.oldLine), number(line.newLine), ...lineText(marker, line.text, language)]));
    }
  }
  return h("pre", { class: "diff" }, lines);
}

/** The old lines on the left, the new on the right; a removed line faces the line added in its place. */
function split(file, state, language) {
  const rows = [];
  const cell = (line, side) => {
    if (!line) return [h("span", { class: "split-number" }), h("span", { class: "split-text split-empty" })];
    const number = side === "old" ? line.oldLine : line.newLine;
    return [
      h("span", { class: "split-number", text: String(number) }),
      h("span", { class: `split-text diff-${line.kind}` }, ...highlight(line.text, language)),
    ];
  };
  for (const hunk of file.hunks) {
    if (state.scope === "hunks") rows.push(h("div", { class: "split-hunk diff-hunk", text: hunk.header }));
    const lines = hunk.lines.filter((line) => line.kind !== "note");
    for (let at = 0; at < lines.length;) {
      if (lines[at].kind === "context") {
        rows.push(h("div", { class: "split-row" }, cell(lines[at], "old"), cell(lines[at], "new")));
        at += 1;
        continue;
      }
      const removed = [];
      const added = [];
      while (at < lines.length && lines[at].kind === "del") removed.push(lines[at++]);
      while (at < lines.length && lines[at].kind === "add") added.push(lines[at++]);
      for (let pair = 0; pair < Math.max(removed.length, added.length); pair += 1) {
        rows.push(h("div", { class: "split-row" }, cell(removed[pair], "old"), cell(added[pair], "new")));
      }
    }
  }
  return h("div", { class: "diff-split", role: "group", "aria-label": `${file.path}, side by side` },
    h("div", { class: "split-row split-head" },
      h("span", { class: "split-side", text: file.status === "added" ? "(new file)" : file.oldPath }),
      h("span", { class: "split-side", text: file.status === "deleted" ? "(deleted)" : file.path })),
    rows);
}
