// A simple monogram per harness: a coloured shape with one or two letters.
// They are cinch's own drawings, not the vendors' logos.

import { svg } from "./dom.js";

const SHAPES = {
  circle: () => svg("circle", { cx: 16, cy: 16, r: 15 }),
  square: () => svg("rect", { x: 1, y: 1, width: 30, height: 30, rx: 7 }),
  hexagon: () => svg("polygon", { points: "16,1 29,8.5 29,23.5 16,31 3,23.5 3,8.5" }),
  diamond: () => svg("polygon", { points: "16,0.5 31.5,16 16,31.5 0.5,16" }),
};

const MONOGRAMS = {
  claude: { letters: "Cl", shape: "circle", tone: "claude" },
  codex: { letters: "Cx", shape: "hexagon", tone: "codex" },
  gemini: { letters: "G", shape: "diamond", tone: "gemini" },
  cursor: { letters: "Cu", shape: "square", tone: "cursor" },
  // The ACP agents: the same vendor's tone, and a square for "over ACP".
  "claude-acp": { letters: "Cl", shape: "square", tone: "claude" },
  "codex-acp": { letters: "Cx", shape: "square", tone: "codex" },
  "gemini-acp": { letters: "G", shape: "square", tone: "gemini" },
  opencode: { letters: "Oc", shape: "hexagon", tone: "opencode" },
  qwen: { letters: "Q", shape: "circle", tone: "qwen" },
};

/**
 * The logo of `harness` (a driver's or harness profile's name), decorative: its name is always
 * written beside it. A harness declared in config.toml gets its first two letters on a square.
 */
export function logo(harness) {
  const name = harness || "?";
  const mark = MONOGRAMS[name] ?? {
    letters: name.slice(0, 2).replace(/^./, (first) => first.toUpperCase()),
    shape: "square",
    tone: "other",
  };
  return svg(
    "svg",
    { class: `logo tone-${mark.tone}`, viewBox: "0 0 32 32", width: 24, height: 24, "aria-hidden": "true", focusable: "false" },
    svg("g", { class: "logo-shape" }, SHAPES[mark.shape]()),
    svg("text", { x: 16, y: 16.5, "text-anchor": "middle", "dominant-baseline": "central", class: "logo-letters" }, mark.letters),
  );
}
