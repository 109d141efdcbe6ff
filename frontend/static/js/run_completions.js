// Run page: the completions browser. Shows one step's sampled groups (prompt, then each
// completion with its reward per function, total, advantage, model version, staleness,
// finish reason; a judge's raw answer under its score, folded when long); follows the newest step as samples stream in, or stays on the step the
// user picked. Long text is folded. A multi-turn episode is drawn as a conversation
// (episode_view.js), the group's shared prompt messages once above it. Everything is written
// with textContent (model output is untrusted text).
(function (RunPage) {
  "use strict";

  const { element, fetchJson, formatFixed } = window.PageKit;
  const EpisodeView = window.EpisodeView;
  const { foldable } = EpisodeView;
  const CACHE_STEPS = 30;

  // Where a user turn starts in the chat templates of the common families (ChatML, Llama 3,
  // Gemma, Phi/Zephyr, Mistral). A prompt's folded preview starts at its last one: the question
  // asked, not the system prompt before it.
  const USER_TURN = /<\|im_start\|>user|<\|start_header_id\|>user<\|end_header_id\|>|<start_of_turn>user|<\|user\|>|\[INST\]/g;
  const SPECIAL_TOKEN = /<\|[^|>]*\|>|<\/?(start_of_turn|end_of_turn)>|\[\/?INST\]/g;

  function lastUserTurn(text) {
    let start = 0;
    for (const match of text.matchAll(USER_TURN)) start = match.index + match[0].length;
    return text.slice(start).replace(SPECIAL_TOKEN, " ");
  }

  class CompletionsBrowser {
    constructor(root, { samplesUrl, steps, rewardNames }) {
      this.root = root;
      this.samplesUrl = samplesUrl;
      this.rewardNames = rewardNames;
      this.steps = [...steps].sort((a, b) => a - b);
      this.cache = new Map(); // step -> samples (only complete steps from REST or whole events)
      this.current = null;
      this.follow = true;
      this.select = root.querySelector("#sample-step");
      this.followBox = root.querySelector("#sample-follow");
      this.list = root.querySelector("#sample-groups");
      this.empty = root.querySelector("#samples-empty");
      this.status = root.querySelector("#samples-status");
      root.querySelector("#sample-older").addEventListener("click", () => this.move(-1));
      root.querySelector("#sample-newer").addEventListener("click", () => this.move(1));
      root.querySelector("#sample-newest").addEventListener("click", () => { this.setFollow(true); this.show(this.newest()); });
      this.select.addEventListener("change", () => { this.setFollow(false); this.show(Number(this.select.value)); });
      this.followBox.addEventListener("change", () => { this.setFollow(this.followBox.checked); if (this.follow) this.show(this.newest()); });
      this.renderSteps();
      if (this.steps.length) this.show(this.newest());
    }

    newest() { return this.steps.length ? this.steps[this.steps.length - 1] : null; }

    setFollow(follow) { this.follow = follow; this.followBox.checked = follow; }

    move(delta) {
      if (this.current === null) return;
      const at = this.steps.indexOf(this.current) + delta;
      if (at < 0 || at >= this.steps.length) return;
      this.setFollow(at === this.steps.length - 1);
      this.show(this.steps[at]);
    }

    addSteps(steps) {
      let grew = false;
      for (const step of steps) if (!this.steps.includes(step)) { this.steps.push(step); grew = true; }
      if (!grew) return;
      this.steps.sort((a, b) => a - b);
      this.renderSteps();
    }

    renderSteps() {
      this.empty.hidden = this.steps.length > 0;
      this.root.querySelector(".sample-controls").hidden = this.steps.length === 0;
      const options = this.steps.map((step) => element("option", { value: String(step), text: `step ${step}` }));
      this.select.replaceChildren(...options);
      if (this.current !== null) this.select.value = String(this.current);
    }

    /* Samples that arrived live (a run.samples event): whole steps, as the ingest stores them. */
    addLive(samples) {
      const byStep = new Map();
      for (const sample of samples) {
        if (!byStep.has(sample.step)) byStep.set(sample.step, []);
        byStep.get(sample.step).push(sample);
      }
      for (const [step, list] of byStep) this.remember(step, this.merged(this.cache.get(step), list));
      this.addSteps([...byStep.keys()]);
      if (this.follow && this.newest() !== this.current) this.show(this.newest());
      else if (byStep.has(this.current)) this.render(this.current, this.cache.get(this.current));
    }

    merged(known, more) {
      const byId = new Map((known || []).map((s) => [s.id, s]));
      for (const sample of more) byId.set(sample.id, sample);
      return [...byId.values()].sort((a, b) => a.group - b.group || a.id - b.id);
    }

    remember(step, samples) {
      this.cache.delete(step);
      this.cache.set(step, samples);
      while (this.cache.size > CACHE_STEPS) this.cache.delete(this.cache.keys().next().value);
    }

    async show(step) {
      if (step === null) return;
      this.current = step;
      this.select.value = String(step);
      if (!this.cache.has(step)) {
        this.status.textContent = `Loading step ${step}…`;
        try {
          this.remember(step, await this.fetchStep(step));
        } catch (error) {
          this.status.textContent = `Could not load step ${step}: ${error.message}`;
          return;
        }
      }
      if (this.current === step) this.render(step, this.cache.get(step));
    }

    async fetchStep(step) {
      const samples = [];
      let url = `${this.samplesUrl}?step=${step}&page_size=1000`;
      while (url) {
        const page = await fetchJson(url);
        samples.push(...page.results);
        url = page.next;
      }
      return samples;
    }

    render(step, samples) {
      const groups = new Map();
      for (const sample of samples) {
        if (!groups.has(sample.group)) groups.set(sample.group, []);
        groups.get(sample.group).push(sample);
      }
      const episodes = samples.some(EpisodeView.isEpisode);
      this.status.textContent = `Step ${step}: ${groups.size} group${groups.size === 1 ? "" : "s"}, ` +
        `${samples.length} ${episodes ? "episodes" : "completions"}.`;
      this.list.replaceChildren(...(episodes ? [EpisodeView.legend()] : []),
        ...[...groups.entries()].map(([group, list]) => this.renderGroup(step, group, list)));
    }

    renderGroup(step, group, samples) {
      const names = this.rewardColumns(samples);
      // An episode group's prompt is its first episode's messages before the first sampled turn,
      // shown once; each episode then starts where it differs (at its first sampled turn).
      const sharedPrompt = EpisodeView.isEpisode(samples[0]) ? EpisodeView.promptTurns(samples[0].turns) : null;
      const head = element("tr", {}, element("th", { scope: "col", text: "#" }),
        element("th", { scope: "col", text: sharedPrompt ? "Episode" : "Completion" }),
        ...names.map((name) => element("th", { scope: "col", class: "num", text: name })),
        ...["total", "advantage", "version", "staleness", "finish", "tokens"].map((t) => element("th", { scope: "col", class: "num", text: t })));
      const rows = samples.map((sample, i) => element("tr", { "data-sample": String(sample.id) },
        element("td", { text: String(i + 1) }),
        element("td", { class: EpisodeView.isEpisode(sample) ? "completion episode-cell" : "completion" },
          this.completion(sample, sharedPrompt)),
        ...names.map((name) => this.rewardCell(sample, name)),
        element("td", { class: "num total", text: formatFixed(sample.total_reward, 3) }),
        element("td", { class: "num", text: formatFixed(sample.advantage, 3) }),
        element("td", { class: "num", text: String(sample.model_version) }),
        element("td", { class: "num", text: String(sample.staleness) }),
        element("td", { class: "num", text: sample.finish_reason || "—" }),
        element("td", { class: "num", text: String(sample.num_tokens) })));
      const prompt = sharedPrompt && sharedPrompt.length ? EpisodeView.prompt(sharedPrompt)
        : foldable(samples[0].prompt, "prompt-text", lastUserTurn);
      return element("article", { class: "sample-group", "aria-label": `Step ${step}, group ${group}` },
        element("h3", { text: `Group ${group}` }),
        element("div", { class: "prompt" }, element("span", { class: "muted small", text: "Prompt" }), prompt),
        element("div", { class: "table-scroll" },
          element("table", { class: "table samples-table" }, element("thead", {}, head), element("tbody", {}, ...rows))));
    }

    /* A reward's score; a judge's also holds what the judge answered (null where it gave none). */
    rewardCell(sample, name) {
      const score = formatFixed(sample.rewards[name], 2);
      const judgements = sample.judgements || {};
      if (!(name in judgements)) return element("td", { class: "num", text: score });
      const answer = judgements[name];
      return element("td", { class: "num judged", "data-reward": name },
        element("span", { class: "judged-score", text: score }),
        answer === null ? element("p", { class: "judgement muted small", text: "no answer" })
          : element("div", { class: "judgement", title: `${name}'s answer` }, foldable(answer, "judgement-text")));
    }

    completion(sample, sharedPrompt) {
      if (!EpisodeView.isEpisode(sample)) return foldable(sample.completion, "completion-text");
      const shared = sharedPrompt && EpisodeView.startsWith(sample.turns, sharedPrompt);
      return EpisodeView.episode(sample, { skip: shared ? sharedPrompt.length : 0 });
    }

    rewardColumns(samples) {
      const names = [...this.rewardNames];
      for (const sample of samples) for (const name of Object.keys(sample.rewards)) if (!names.includes(name)) names.push(name);
      return names;
    }
  }

  RunPage.CompletionsBrowser = CompletionsBrowser;
  RunPage.lastUserTurn = lastUserTurn; // the evaluation panel previews prompts the same way
})(window.RunPage = window.RunPage || {});
