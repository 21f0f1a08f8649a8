// The server's HTTP API, as any client uses it: JSON in and out, the bearer token when
// the server has one (kept for this browser tab only), errors with the server's reason.

const TOKEN_KEY = "akgentic.token";

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
    } catch (error) {
      throw new ApiError(0, `cannot reach the server: ${error.message}`);
    }
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
