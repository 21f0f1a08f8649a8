// The team list (status, last activity) and the form that starts a team from one of the
// server's cards.

import { clear, h } from "../dom.js";
import { ago } from "../format.js";

export class TeamsView {
  constructor(root, actions) {
    this.list = root.querySelector("#team-list");
    this.form = root.querySelector("#new-team");
    this.card = root.querySelector("#new-card");
    this.name = root.querySelector("#new-name");
    this.model = root.querySelector("#new-model");
    this.note = root.querySelector("#new-team-note");
    this.actions = actions; // {create}
    this.known = true; // false while the server cannot be reached: no status is shown as known
    this.form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!this.card.value) return;
      const created = await this.actions.create(
        this.card.value,
        this.name.value.trim() || undefined,
        this.model.value.trim() || undefined,
      );
      if (created) this.name.value = this.model.value = "";
    });
    this.card.addEventListener("change", () => this.describe());
  }

  setCards(cards) {
    this.cards = cards;
    clear(this.card);
    for (const card of cards) this.card.append(h("option", { value: card.name }, card.name));
    this.form.querySelector("button").disabled = !cards.length;
    this.describe();
  }

  describe() {
    const card = this.cards?.find((c) => c.name === this.card.value);
    this.note.textContent = card
      ? `${card.description || ""} Members: ${card.members.join(", ")}.`.trim()
      : "This server has no team card (akgentic serve --cards).";
  }

  render(teams, currentId) {
    const focused = this.list.contains(document.activeElement)
      ? document.activeElement.closest("[data-team]")?.dataset.team
      : null;
    clear(this.list);
    if (!teams.length) this.list.append(h("li", { class: "muted" }, "No team yet."));
    for (const team of teams) {
      const current = team.team_id === currentId;
      const status = !this.known ? "unknown" : team.running ? "running" : team.status.toLowerCase();
      this.list.append(h("li", { dataset: { team: team.team_id } },
        h("a", { href: `#/teams/${team.team_id}/chat`, "aria-current": current ? "page" : false, class: current ? "current" : "" },
          h("span", { class: "team-name", dir: "auto" }, team.name),
          h("span", { class: `badge ${this.known ? team.status.toLowerCase() : "unknown"}` }, status),
          h("span", { class: "muted small", title: team.last_activity || "" }, `${team.card_name} · ${ago(team.last_activity)}`))));
    }
    if (focused) this.list.querySelector(`[data-team="${CSS.escape(focused)}"] a`)?.focus();
  }
}
