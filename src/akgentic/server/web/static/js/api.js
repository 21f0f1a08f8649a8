// The server's HTTP API, as any client uses it: JSON in and out, the bearer token when
// the server has one (kept for this browser tab only), errors with the server's reason.

const TOKEN_KEY = "akgentic.token";

/** What a request says when no answer came at all (the server is stopped, the network
 * is down): the browser's own words ("Failed to fetch") tell a person nothing. */
export const UNREACHABLE = "cannot reach the server (is it running?)";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

export class Api {
  constructor() {
    this.token = sessionStorage.getItem(TOKEN_KEY) || null;
    this.onUnauthorized = null; // (detail) => void
    this.onReachable = null; // (reachable) => void, when it changes
    this.reachable = true; // whether the server answered the last request or stream
  }

  /** A request (or the event stream's connection) got an answer, or none at all: a
   * change is told to onReachable. */
  noteReachable(reachable) {
    if (reachable === this.reachable) return;
    this.reachable = reachable;
    this.onReachable?.(reachable);
  }

  setToken(token) {
    this.token = token || null;
    if (this.token) sessionStorage.setItem(TOKEN_KEY, this.token);
    else sessionStorage.removeItem(TOKEN_KEY);
  }

  headers(extra = {}) {
    const headers = { ...extra };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    return headers;
  }

  async request(method, path, body) {
    const init = { method, headers: this.headers(), cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch {
      this.noteReachable(false);
      throw new ApiError(0, UNREACHABLE);
    }
    this.noteReachable(true);
    if (response.ok) return response.status === 204 ? null : response.json();
    const detail = await reason(response);
    if (response.status === 401 && this.onUnauthorized) this.onUnauthorized(detail);
    throw new ApiError(response.status, detail);
  }

  get(path) {
    return this.request("GET", path);
  }

  post(path, body) {
    return this.request("POST", path, body);
  }

  delete(path) {
    return this.request("DELETE", path);
  }
}

async function reason(response) {
  try {
    const body = await response.json();
    if (typeof body.detail === "string") return body.detail;
    return JSON.stringify(body.detail ?? body);
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

/** The path of a team resource: team("…", "state", "#PlanningTool"). */
export function team(teamId, ...rest) {
  return ["/teams", teamId, ...rest].map((part, i) => (i ? encodeURIComponent(part) : part)).join("/");
}
