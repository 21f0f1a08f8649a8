// The event timeline: every record of the team's log, newest first, filtered by member
// and by kind. Bookkeeping records (received, processed, state saves) are hidden unless
// asked for. Only the newest rows that pass the filters are drawn.

import { clear, h } from "../dom.js";
import { clock, counted, summary } from "../format.js";
import { isBookkeeping } from "../model.js";

const SHOWN = 500;

export class TimelineView {
  constructor(root) {
    this.list = root.querySelector("#timeline-list");
    this.member = root.querySelector("#timeline-member");
    this.kind = root.querySelector("#timeline-kind");
    this.bookkeeping = root.querySelector("#timeline-bookkeeping");
    this.status = root.querySelector("#timeline-status");
    for (const control of [this.member, this.kind, this.bookkeeping]) {
      control.addEventListener("change", () => this.update());
    }
  }

  bind(model) {
    this.model = model;
    this.member.value = "";
    this.kind.value = "";
    this.update();
  }

  options(select, values, every) {
    const chosen = select.value;
    const sorted = [...values].sort();
    clear(select).append(h("option", { value: "" }, every), ...sorted.map((v) => h("option", { value: v }, v)));
    select.value = sorted.includes(chosen) ? chosen : "";
  }

  update() {
    const model = this.model;
    if (!model) return;
    this.options(this.member, model.senders, "Every member");
    this.options(this.kind, model.types, "Every kind");
    const member = this.member.value;
    const kind = this.kind.value;
    const all = this.bookkeeping.checked;
    const rows = [];
    let matched = 0;
    for (let i = model.events.length - 1; i >= 0; i -= 1) {
      const event = model.events[i];
      if (member && event.sender !== member) continue;
      if (kind ? event.type !== kind : !all && isBookkeeping(event.type)) continue;
      matched += 1;
      if (rows.length < SHOWN) rows.push(event);
    }
    clear(this.list);
    for (const event of rows) {
      this.list.append(h("li", { class: `event ${event.type}`, dataset: { seq: event.seq, type: event.type } },
        h("span", { class: "seq" }, `#${event.seq}`),
        h("time", { datetime: event.time }, clock(event.time)),
        h("span", { class: "sender" }, event.sender || ""),
        h("span", { class: "type" }, event.type),
        h("span", { class: "summary" }, summary(event))));
    }
    this.status.textContent = matched > SHOWN ? `The newest ${SHOWN} of ${matched} records.` : `${counted(matched, "record")}.`;
  }
}
