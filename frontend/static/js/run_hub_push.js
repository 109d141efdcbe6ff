// Run page: pushing a checkpoint to the Hugging Face Hub. A "Push to Hub" button in each
// checkpoint row opens one small form (repository, token, part, private) that posts to the API
// with the CSRF token; the token field is emptied as soon as the push is accepted or the form
// closed. The "Hub pushes" list shows each push's status and progress (files and bytes sent, a bar
// while it goes), and asks the API again every 2 s while any push is still going (a push runs on
// the control plane's background queue, not in this page nor in the request that asked for it).
(function (RunPage) {
  "use strict";

  const { element, fetchJson, formatBytes } = window.PageKit;
  const POLL_MS = 2000;

  class HubPushes {
    constructor(root, { pushUrl, listUrl, hubUrl, pushes }) {
      this.root = root;
      this.form = this.$("hub-push-form");
      this.urls = { push: pushUrl, list: listUrl, hub: hubUrl };
      this.pushes = new Map();
      this.timer = null;
      this.form.addEventListener("submit", (event) => { event.preventDefault(); this.submit(); });
      this.$("hub-push-cancel").addEventListener("click", () => this.close());
      this.add(pushes);
    }

    $(id) {
      return this.root.querySelector(`#${id}`);
    }

    /* The form for one checkpoint; `parts` are the [part, label] pairs it exports, the first chosen. */
    open(checkpoint, parts) {
      this.form.dataset.checkpoint = String(checkpoint.id);
      this.$("hub-push-step").textContent = String(checkpoint.step);
      this.$("hub-part").replaceChildren(...parts.map(([value, text]) => element("option", { value, text })));
      this.showError("");
      this.form.hidden = false;
      this.$("hub-repo").focus();
    }

    close() {
      this.form.hidden = true;
      this.$("hub-token").value = "";
    }

    async submit() {
      const button = this.$("hub-push-submit");
      button.disabled = true;
      try {
        const push = await fetchJson(this.urls.push.replace("{id}", this.form.dataset.checkpoint), {
          method: "POST",
          body: { repo_id: this.$("hub-repo").value.trim(), token: this.$("hub-token").value.trim(),
                  part: this.$("hub-part").value, private: this.$("hub-private").checked },
        });
        this.close();
        this.add([push]);
      } catch (error) {
        this.showError(error.message);
      } finally {
        button.disabled = false;
      }
    }

    showError(message) {
      const box = this.$("hub-push-error");
      box.textContent = message;
      box.hidden = !message;
    }

    add(list) {
      for (const push of list) this.pushes.set(push.id, push);
      const rows = [...this.pushes.values()].sort((a, b) => b.id - a.id).map((push) => this.row(push));
      this.$("hub-push-rows").replaceChildren(...rows);
      this.$("hub-pushes-table").hidden = rows.length === 0;
      this.$("hub-pushes-empty").hidden = rows.length > 0;
      this.pollWhilePushing();
    }

    row(push) {
      const repo = element("a", { href: `${this.urls.hub}/${push.repo_id}`, rel: "noopener", text: push.repo_id });
      // Only a web address becomes a link: the commit URL is what the Hub answered.
      const commit = /^https?:\/\//.test(push.commit_url || "")
        ? element("a", { href: push.commit_url, rel: "noopener", text: "commit" }) : null;
      return element("tr", { "data-push": push.id, "data-status": push.status },
        element("td", { text: new Date(push.created_at).toLocaleString() }),
        element("td", { text: `step ${push.step}` }),
        element("td", {}, repo, push.private ? " (private)" : ""),
        element("td", { text: push.part }),
        element("td", {}, element("span", { class: `badge status-${push.status}`, text: push.status })),
        element("td", { class: "push-detail" }, this.progress(push), push.detail, commit ? " · " : null, commit));
    }

    /* While pushing: a bar of the bytes sent and "n/m files · x of y"; nothing once it has ended. */
    progress(push) {
      if (push.status !== "pushing" || !push.files_total) return null;
      const bytes = `${formatBytes(push.bytes_done)} of ${formatBytes(push.bytes_total)}`;
      const sent = `${push.files_done}/${push.files_total} files · ${bytes}`;
      return element("span", { class: "push-progress" },
        element("progress", { max: String(push.bytes_total || 1), value: String(push.bytes_done),
                              "aria-label": `bytes sent to the Hub: ${sent}` }),
        element("span", { class: "small muted", text: `${sent} · ` }));
    }

    pollWhilePushing() {
      if (this.timer || ![...this.pushes.values()].some((push) => push.status === "pushing")) return;
      this.timer = setTimeout(() => this.refresh(), POLL_MS);
    }

    async refresh() {
      this.timer = null;
      try {
        this.add(await fetchJson(this.urls.list));
      } catch (error) {
        this.pollWhilePushing(); // asked again at the next tick
      }
    }
  }

  RunPage.HubPushes = HubPushes;
})(window.RunPage = window.RunPage || {});
