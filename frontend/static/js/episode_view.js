// episode_view.js — a multi-turn episode (a sample's `turns`) drawn as a conversation, for the
// run page's completions browser and the compare page's samples (load after page_kit.js):
//
//   EpisodeView.isEpisode(sample)              // true when the sample has turns
//   EpisodeView.promptTurns(turns)             // the leading messages before the first sampled one
//   EpisodeView.prompt(turns)                  // those messages as bubbles: a group's shared prompt
//   EpisodeView.episode(sample, {skip: n})     // the whole episode, its first n turns left out
//   EpisodeView.legend()                       // what the highlighting means
//   EpisodeView.foldable(text, className)      // long text folded behind a <details> summary
//
// One bubble per message, by role; assistant turns are highlighted when trained (sampled and
// in the loss) and say which policy version sampled them; tool calls are name(arguments)
// chips on the assistant message, and each tool message says which call it answers; errors
// are red. More than COLLAPSE_ABOVE turns: the middle ones are folded behind a button.
// Everything is written with textContent (model and environment output is untrusted text).
(function () {
  "use strict";

  const { element } = window.PageKit;
  const FOLD_CHARS = 600, FOLD_LINES = 8, PREVIEW_CHARS = 240;
  const COLLAPSE_ABOVE = 8, KEEP_HEAD = 3, KEEP_TAIL = 4;
  const END_KIND = { done: "ok", max_turns: "limit", max_tokens: "limit", context: "limit",
    environment_error: "failed", environment_timeout: "failed" };

  /* Text in a <pre>, folded behind a <details> summary when it is long. */
  function foldable(text, className, previewOf = (whole) => whole) {
    const lines = text.split("\n").length;
    if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return element("pre", { class: className, text });
    const preview = previewOf(text).trim().slice(0, PREVIEW_CHARS).replace(/\s+/g, " ");
    return element("details", { class: "fold" },
      element("summary", { text: `${preview}… (${text.length} characters, ${lines} lines)` }),
      element("pre", { class: className, text }));
  }

  function isEpisode(sample) {
    return Array.isArray(sample.turns) && sample.turns.length > 0;
  }

  function promptTurns(turns) {
    const first = turns.findIndex((turn) => turn.role === "assistant");
    return first < 0 ? turns : turns.slice(0, first);
  }

  function plural(count, word) {
    return `${count} ${word}${count === 1 ? "" : "s"}`;
  }

  function toolCallText(call) {
    return `${call.name}(${call.arguments})`;
  }

  function endBadge(reason) {
    return element("span", { class: `badge end-badge end-${END_KIND[reason] || "other"}`, "data-end": reason,
      text: `ended: ${reason}` });
  }

  /* The version that sampled an assistant turn, and how far it lags the version trained on it. */
  function versionNote(turn, trainedVersion) {
    if (turn.model_version === null || turn.model_version === undefined) return null;
    const behind = trainedVersion === null ? 0 : trainedVersion - turn.model_version;
    const text = behind > 0 ? `v${turn.model_version} · ${behind} behind` : `v${turn.model_version}`;
    const title = trainedVersion === null ? `sampled by policy version ${turn.model_version}`
      : `sampled by policy version ${turn.model_version}; trained at version ${trainedVersion}`;
    return element("span", { class: "turn-version", title, text });
  }

  function turnHead(turn, { answers, trainedVersion }) {
    const assistant = turn.role === "assistant";
    return element("div", { class: "turn-head" },
      element("span", { class: "turn-role", text: answers ? `tool · result of ${answers.name}` : turn.role }),
      assistant ? element("span", { class: `badge ${turn.trained ? "trained-badge" : "untrained-badge"}`,
        text: turn.trained ? "trained" : "not trained" }) : null,
      assistant ? versionNote(turn, trainedVersion) : null,
      turn.num_tokens ? element("span", { class: "turn-tokens", text: plural(turn.num_tokens, "token") }) : null);
  }

  function turnView(turn, context) {
    const classes = ["turn", `turn-${turn.role}`];
    if (turn.role === "assistant") classes.push(turn.trained ? "trained" : "untrained");
    if (turn.error) classes.push("has-error");
    const calls = turn.tool_calls || [];
    return element("li", { class: classes.join(" "), "data-role": turn.role },
      turnHead(turn, context),
      turn.content ? foldable(turn.content, "turn-text") : null,
      calls.length ? element("div", { class: "tool-calls", "aria-label": "Tool calls" },
        ...calls.map((call) => element("code", { class: "tool-call", text: toolCallText(call) }))) : null,
      turn.error ? element("p", { class: "turn-error", text: `error: ${turn.error}` }) : null);
  }

  /* One <li> per turn; each tool message is paired with the call it answers, in order. */
  function turnItems(turns, trainedVersion) {
    let pending = [];
    return turns.map((turn) => {
      let answers = null;
      if (turn.role === "assistant") pending = [...(turn.tool_calls || [])];
      else if (turn.role === "tool") answers = pending.shift() || null;
      return turnView(turn, { answers, trainedVersion });
    });
  }

  /* Folds the middle of a long conversation behind one button that unfolds it. */
  function collapsed(items) {
    if (items.length <= COLLAPSE_ABOVE) return items;
    const middle = items.slice(KEEP_HEAD, items.length - KEEP_TAIL);
    for (const item of middle) item.hidden = true;
    const button = element("button", { type: "button", class: "link",
      text: `${plural(middle.length, "more turn")} — show all ${items.length} turns` });
    const more = element("li", { class: "turns-more" }, button);
    button.addEventListener("click", () => {
      for (const item of middle) item.hidden = false;
      more.remove();
    });
    return [...items.slice(0, KEEP_HEAD), more, ...middle, ...items.slice(items.length - KEEP_TAIL)];
  }

  function summary(turns) {
    const sampled = turns.filter((turn) => turn.role === "assistant").length;
    const calls = turns.reduce((count, turn) => count + (turn.tool_calls || []).length, 0);
    const errors = turns.filter((turn) => turn.error).length;
    const parts = [plural(sampled, "assistant turn"), plural(calls, "tool call")];
    if (errors) parts.push(plural(errors, "error"));
    return parts.join(" · ");
  }

  function episode(sample, { skip = 0 } = {}) {
    const trainedVersion = Number.isInteger(sample.model_version) && Number.isInteger(sample.staleness)
      ? sample.model_version + sample.staleness : null;
    const items = turnItems(sample.turns, trainedVersion).slice(skip);
    return element("div", { class: "episode" },
      element("div", { class: "episode-head" },
        sample.end_reason ? endBadge(sample.end_reason) : null,
        element("span", { class: "episode-summary", text: summary(sample.turns) })),
      element("ol", { class: "turns", "aria-label": `Conversation, ${plural(sample.turns.length, "message")}` },
        ...collapsed(items)));
  }

  function prompt(turns) {
    return element("ol", { class: "turns prompt-turns", "aria-label": "Prompt messages" }, ...turnItems(turns, null));
  }

  /* Whether an episode starts with exactly these prompt messages (then they are shown once, above). */
  function startsWith(turns, head) {
    return head.length <= turns.length
      && head.every((turn, i) => turns[i].role === turn.role && turns[i].content === turn.content);
  }

  function legend() {
    return element("p", { class: "episode-legend" },
      element("span", { class: "legend-trained", "aria-hidden": "true" }),
      " highlighted: trained tokens; the rest is context, masked out of the loss.");
  }

  window.EpisodeView = Object.freeze({ isEpisode, promptTurns, prompt, episode, legend, foldable, startsWith });
})();
