// The planning board: #PlanningTool's tasks by status, each with its owner and what it
// waits on; filtered by owner. Redrawn whenever the mirror folds a delta.

import { clear, h } from "../dom.js";
import { cut } from "../format.js";

const COLUMNS = [
  ["todo", "To do"],
  ["in_progress", "In progress"],
  ["blocked", "Blocked"],
  ["done", "Done"],
];

export class BoardView {
  constructor(root) {
    this.columns = root.querySelector("#board-columns");
    this.owner = root.querySelector("#board-owner");
    this.absent = root.querySelector("#board-absent");
    this.owner.addEventListener("change", () => this.update());
  }

  bind(mirror) {
    this.mirror = mirror;
    this.owner.value = "";
    this.update();
  }

  update() {
    if (!this.mirror) return;
    const absent = this.mirror.absent; // no #PlanningTool: the line saying so, nothing else
    this.absent.hidden = !absent;
    this.owner.parentElement.hidden = absent;
    this.columns.hidden = absent;
    if (absent) return;
    const tasks = [...this.mirror.value.tasks.values()].sort((a, b) => a.id - b.id);
    const owners = [...new Set(tasks.map((t) => t.owner || ""))].sort();
    const chosen = this.owner.value;
    clear(this.owner).append(h("option", { value: "" }, "Every owner"),
      ...owners.map((o) => h("option", { value: o || "-" }, o || "Unassigned")));
    this.owner.value = owners.includes(chosen === "-" ? "" : chosen) ? chosen : "";
    const wanted = this.owner.value;
    const shown = tasks.filter((t) => !wanted || (t.owner || "-") === wanted);
    clear(this.columns);
    for (const [status, title] of COLUMNS) {
      const mine = shown.filter((t) => t.status === status);
      this.columns.append(h("section", { class: "column", dataset: { status }, "aria-label": `${title}: ${mine.length}` },
        h("h3", {}, title, h("span", { class: "count" }, String(mine.length))),
        h("ul", {}, mine.map((task) => h("li", { class: "task", dataset: { task: task.id }, tabindex: 0 },
          h("div", { class: "task-title" }, h("span", { class: "muted" }, `#${task.id} `), h("bdi", {}, task.title)),
          h("div", { class: "task-meta" },
            h("span", { class: "owner" }, task.owner || "unassigned"),
            task.dependencies?.length ? h("span", { class: "muted" }, ` · after ${task.dependencies.map((d) => `#${d}`).join(", ")}`) : null),
          task.description ? h("p", { class: "muted", dir: "auto" }, cut(task.description, 200)) : null,
          task.output ? h("p", { class: "output", dir: "auto" }, cut(task.output, 200)) : null,
        ))),
      ));
    }
    if (!tasks.length) this.columns.append(h("p", { class: "muted empty-board" }, "No task yet: members plan with the planning tool."));
  }
}
