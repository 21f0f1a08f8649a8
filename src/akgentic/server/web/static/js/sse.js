// A team's event stream read with fetch (EventSource cannot send the bearer token), and
// resumed after any drop from the last event id: the server replays the records after
// it, so nothing is missed and nothing repeats. A `deleted` event (the team was deleted:
// the server closes the stream after it), or a connection answered 404 with the code
// `team_not_found` (the team is gone: purged while the stream was down), ends it for good.

import { UNREACHABLE } from "./api.js";

const HEARTBEAT = 10; // seconds between keep-alives we ask the server for
const SILENCE = 3 * HEARTBEAT * 1000; // no byte for this long: the connection is dead

/** Parses text/event-stream chunks; calls onEvent({id, event, data}) per event and
 * onRetry(ms) for a retry field. Comments (keep-alives) are skipped. */
export function sseParser(onEvent, onRetry = () => {}) {
  let buffer = "";
  let data = [];
  let id = null;
  let event = "";
  const line = (text) => {
    if (text === "") {
      if (data.length) onEvent({ id, event: event || "message", data: data.join("\n") });
      data = [];
      event = "";
      id = null;
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "retry" && /^\d+$/.test(value)) onRetry(Number(value));
  };
  return (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(buffer[end] === "\r" && buffer[end + 1] === "\n" ? end + 2 : end + 1);
      line(text);
    }
  };
}

export class TeamStream {
  /**
   * @param api        the Api (for the token)
   * @param path       /teams/{id}/events
   * @param onRecord   (wireEvent) => void, in sequence order, each once
   * @param onStatus   (status, detail) => void: connecting, live, reconnecting, stopped,
   *                   deleted (last: the stream is over), closed
   */
  constructor({ api, path, onRecord, onStatus }) {
    Object.assign(this, { api, path, onRecord, onStatus });
    this.lastSeq = 0;
    this.retry = 2000;
    this.closed = false;
    this.controller = null;
    this.connections = 0;
  }

  start(fromSeq = 1) {
    this.lastSeq = fromSeq - 1;
    this.loop();
  }

  close() {
    this.closed = true;
    this.controller?.abort();
    this.onStatus("closed");
  }

  async loop() {
    while (!this.closed) {
      try {
        await this.connect();
      } catch (error) {
        if (this.closed) return;
        this.onStatus("reconnecting", error?.message || String(error));
      }
      if (this.closed) return;
      await new Promise((resolve) => setTimeout(resolve, this.retry));
    }
  }

  async connect() {
    this.onStatus(this.connections ? "reconnecting" : "connecting");
    this.connections += 1;
    const controller = (this.controller = new AbortController());
    const headers = this.api.headers({ Accept: "text/event-stream" });
    if (this.lastSeq > 0) headers["Last-Event-ID"] = String(this.lastSeq);
    const url = `${this.path}?from_seq=${this.lastSeq + 1}&heartbeat=${HEARTBEAT}`;
    let response;
    try {
      response = await fetch(url, { headers, signal: controller.signal, cache: "no-store" });
    } catch (error) {
      if (this.closed) throw error;
      this.api.noteReachable(false); // no answer at all: the server is down or out of reach
      throw new Error(UNREACHABLE);
    }
    this.api.noteReachable(true);
    if (response.status === 401) {
      this.api.onUnauthorized?.("this server requires a token");
      throw new Error("the server wants a token");
    }
    if (response.status === 404 && (await this.teamIsGone(response))) return;
    if (!response.ok) throw new Error(`the stream answered ${response.status}`);
    this.onStatus("live");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const parse = sseParser(
      (event) => this.dispatch(event),
      (ms) => (this.retry = Math.min(Math.max(ms, 250), 30000)),
    );
    let watchdog = setTimeout(() => controller.abort(), SILENCE);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        clearTimeout(watchdog);
        if (done) break;
        watchdog = setTimeout(() => controller.abort(), SILENCE);
        parse(value);
      }
    } finally {
      clearTimeout(watchdog);
    }
    throw new Error("the server closed the stream");
  }

  /** Whether a 404 says the team no longer exists (deleted while the stream was down:
   * the server's error code `team_not_found`), which ends the stream like a `deleted`
   * event. Any other 404 (a proxy's, a route the server lacks) is an error, retried. */
  async teamIsGone(response) {
    const body = await response.json().catch(() => null);
    if (body?.code !== "team_not_found") return false;
    this.closed = true;
    this.onStatus("deleted");
    return true;
  }

  dispatch({ id, event, data }) {
    if (event === "deleted") {
      this.closed = true; // the server ends the stream: do not reconnect
      this.onStatus("deleted");
      return;
    }
    if (event === "stopped") {
      this.stopped = true;
      this.onStatus("stopped");
      return;
    }
    const record = JSON.parse(data);
    const seq = Number(id ?? record.seq);
    if (seq <= this.lastSeq) return; // already seen (a replay overlapping a resume)
    this.lastSeq = seq;
    if (this.stopped) {
      this.stopped = false; // the team was resumed: its records flow again
      this.onStatus("live");
    }
    this.onRecord(record);
  }
}
