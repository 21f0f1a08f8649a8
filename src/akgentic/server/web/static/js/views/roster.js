// The roster: every member with its kind, role and model, whether it is in a turn now,
// the tokens it used (the Usage events of the stream, per member) and its commands.

import { clear, h } from "../dom.js";
import { count, counted } from "../format.js";

export class RosterView {
  constructor(root, actions) {
    this.body = root.querySelector("#roster-body");
    this.foot = root.querySelector("#roster-foot");
    this.actions = actions; // {chatWith}
  }

  bind(model) {
    this.model = model;
    this.update();
  }

  update() {
    const model = this.model;
    if (!model) return;
    const busy = new Set(model.busy());
    clear(this.body);
    const total = { inputTokens: 0, outputTokens: 0, requests: 0, toolCalls: 0 };
    const order = { agent: 0, human: 1, tool: 2 };
    const members = [...model.members].sort((a, b) => order[a.kind] - order[b.kind] || a.name.localeCompare(b.name));
    for (const member of members) {
      const used = model.usage.get(member.name);
      if (used) for (const key of Object.keys(total)) total[key] += used[key];
      const status = !model.info.running ? "stopped" : busy.has(member.name) ? "busy" : member.kind === "agent" ? "idle" : "";
      const commands = model.commands.get(member.name) || [];
      this.body.append(h("tr", { dataset: { member: member.name, status } },
        h("th", { scope: "row" }, member.name, h("div", { class: "muted small" }, member.kind,
          member.kind === "agent" && model.info.running
            ? h("button", { type: "button", class: "link inline", "aria-label": `Chat with ${member.name}`, onclick: () => this.actions.chatWith(member.name) }, "chat")
            : null)),
        h("td", {}, member.kind === "tool" && member.role === member.name.slice(1) ? "" : member.role),
        h("td", { class: "model" }, member.model || used?.model || ""),
        h("td", {}, status ? h("span", { class: `badge ${status}` }, status) : ""),
        h("td", { class: "num" }, used ? count(used.requests) : ""),
        h("td", { class: "num" }, used ? count(used.toolCalls) : ""),
        h("td", { class: "num" }, used ? count(used.inputTokens) : ""),
        h("td", { class: "num" }, used ? count(used.outputTokens) : ""),
        h("td", { class: "commands" }, commands.length
          ? h("details", {}, h("summary", {}, counted(commands.length, "command")),
            h("ul", {}, commands.map((c) => h("li", { title: c.description || "" }, h("code", {}, `/${c.name}`)))))
          : ""),
      ));
    }
    clear(this.foot).append(h("tr", {},
      h("th", { scope: "row", colspan: 4 }, "Total"),
      ...["requests", "toolCalls", "inputTokens", "outputTokens"].map((k) => h("td", { class: "num" }, count(total[k]))),
      h("td", {}),
    ));
  }
}
