// The /commands palette: while the composer holds "/name…", list the commands the
// recipient announced (its Commands events), filtered by what is typed. Arrow keys move,
// Enter or Tab completes, Escape closes.

import { clear, h } from "../dom.js";

export class Palette {
  constructor(input, list, commandsOf) {
    Object.assign(this, { input, list, commandsOf });
    this.items = [];
    this.active = 0;
    this.forced = false;
    input.addEventListener("input", () => this.refresh());
    input.addEventListener("keydown", (event) => this.key(event));
    input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  get isOpen() {
    return !this.list.hidden;
  }

  /** Open on demand (the Commands button): list everything the recipient announced. */
  toggle() {
    if (this.isOpen) return this.close();
    if (!this.input.value.startsWith("/")) this.input.value = "/";
    this.forced = true;
    this.input.focus();
    this.refresh();
  }

  refresh() {
    const text = this.input.value;
    const typing = /^\/\S*$/.test(text);
    if (!typing && !(this.forced && text === "/")) return this.close();
    const prefix = text.slice(1).toLowerCase();
    const { member, commands } = this.commandsOf();
    this.items = commands.filter((c) => c.name.toLowerCase().startsWith(prefix));
    this.active = Math.min(this.active, Math.max(this.items.length - 1, 0));
    this.render(member, commands.length);
  }

  render(member, total) {
    clear(this.list);
    this.list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    if (!this.items.length) {
      this.list.append(
        h("li", { class: "empty", role: "option", "aria-disabled": "true" },
          total ? "No command starts with that." : `${member || "This member"} announced no commands.`),
      );
      return;
    }
    this.items.forEach((command, index) => {
      const usage = [`/${command.name}`, ...(command.args || []).map((a) => (a.required ? a.name : `[${a.name}=${JSON.stringify(a.default)}]`))].join(" ");
      const option = h("li", {
        id: `palette-${index}`,
        role: "option",
        "aria-selected": index === this.active ? "true" : "false",
        dataset: { command: command.name },
        onmousedown: (event) => {
          event.preventDefault();
          this.choose(index);
        },
      }, h("code", {}, usage), h("span", { class: "muted" }, command.description || ""));
      this.list.append(option);
    });
    this.input.setAttribute("aria-activedescendant", `palette-${this.active}`);
  }

  key(event) {
    if (!this.isOpen) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.active = (this.active + step + this.items.length) % Math.max(this.items.length, 1);
      this.refresh();
    } else if (event.key === "Enter" && this.input.value === `/${this.items[this.active]?.name}`) {
      this.close(); // typed in full: Enter sends it
    } else if ((event.key === "Enter" || event.key === "Tab") && this.items.length && !event.shiftKey) {
      event.preventDefault();
      event.stopImmediatePropagation();
      this.choose(this.active);
    } else if (event.key === "Escape") {
      event.preventDefault();
      this.close();
    }
  }

  choose(index) {
    const command = this.items[index];
    if (!command) return;
    this.input.value = `/${command.name}${command.args?.length ? " " : ""}`;
    this.close();
    this.input.focus();
  }

  close() {
    this.forced = false;
    this.list.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }
}
