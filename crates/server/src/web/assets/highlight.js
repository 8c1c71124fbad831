// A small syntax highlighter for the diff view: comments, strings,
// numbers and keywords of the common languages, one line at a time (a line
// of a diff may stand without its neighbours). It marks up text only: its
// output is text nodes and spans, never HTML.

import { h } from "./dom.js";

const C_LIKE = { line: "//", block: true, strings: "\"'" };

/** Each language: its keywords, its comment forms and its string quotes. */
const LANGUAGES = {
  js: {
    ...C_LIKE,
    strings: "\"'`",
    keywords: "async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements private public protected readonly as",
  },
  rust: {
    ...C_LIKE,
    strings: "\"",
    keywords: "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err",
  },
  python: {
    line: "#",
    strings: "\"'",
    keywords: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self",
  },
  go: {
    ...C_LIKE,
    strings: "\"'`",
    keywords: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  },
  c: {
    ...C_LIKE,
    keywords: "auto bool break case char class const continue default delete do double else enum extern false float for goto if include define inline int long namespace new nullptr private protected public return short signed sizeof static struct switch template this throw true try typedef union unsigned using virtual void volatile while final override package import extends implements interface null boolean byte string var",
  },
  shell: {
    line: "#",
    strings: "\"'",
    keywords: "if then else elif fi for while until do done case esac function in return export local readonly set unset echo exit",
  },
  data: {
    line: "#",
    strings: "\"'",
    keywords: "true false null yes no on off",
  },
  css: {
    block: true,
    strings: "\"'",
    keywords: "important inherit initial none auto",
  },
};

/** Which language a file is in, by its name. */
const EXTENSIONS = {
  js: "js", mjs: "js", cjs: "js", jsx: "js", ts: "js", tsx: "js",
  rs: "rust",
  py: "python",
  go: "go",
  c: "c", h: "c", cc: "c", cpp: "c", hpp: "c", cs: "c", java: "c", kt: "c", swift: "c",
  sh: "shell", bash: "shell", zsh: "shell",
  json: "data", toml: "data", yaml: "data", yml: "data", ini: "data",
  css: "css", scss: "css",
};

const compiled = new Map();

/** The language of `path`'s file, compiled to one scanner; null for others. */
export function languageOf(path) {
  const name = path.split("/").pop();
  const extension = name.includes(".") ? name.split(".").pop().toLowerCase() : name === "Dockerfile" || name === "Makefile" ? "sh" : "";
  const key = EXTENSIONS[extension];
  if (!key) return null;
  if (!compiled.has(key)) compiled.set(key, compile(LANGUAGES[key]));
  return compiled.get(key);
}

/** One sticky pattern with a named group per kind of token. */
function compile(language) {
  const parts = [];
  const comments = [];
  if (language.line) comments.push(`${escape(language.line)}.*`);
  if (language.block) comments.push("/\\*.*?(?:\\*/|$)");
  if (comments.length) parts.push(`(?<comment>${comments.join("|")})`);
  const quotes = [...language.strings].map((quote) => `${escape(quote)}(?:\\\\.|[^${escape(quote)}\\\\])*(?:${escape(quote)}|$)`);
  parts.push(`(?<string>${quotes.join("|")})`);
  parts.push("(?<number>\\b(?:0[xX][0-9a-fA-F_]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b)");
  parts.push(`(?<keyword>\\b(?:${language.keywords.split(" ").join("|")})\\b)`);
  return new RegExp(parts.join("|"), "g");
}

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** `text` as nodes: its tokens in spans (`tok-comment`, `tok-string`, …), the rest as text. */
export function highlight(text, language) {
  if (!language || text.length > 2000) return [text];
  const nodes = [];
  let at = 0;
  language.lastIndex = 0;
  for (const match of text.matchAll(language)) {
    if (!match[0]) continue;
    const kind = Object.entries(match.groups).find(([, value]) => value !== undefined)[0];
    if (match.index > at) nodes.push(text.slice(at, match.index));
    nodes.push(h("span", { class: `tok-${kind}`, text: match[0] }));
    at = match.index + match[0].length;
  }
  if (at < text.length) nodes.push(text.slice(at));
  return nodes;
}
