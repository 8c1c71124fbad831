// The API client: every call sends the signed-in token as a bearer header.
// The token lives in localStorage only — never in a URL, where it would
// leak into history and logs.

const TOKEN_KEY = "cinch.token";

export const session = {
  token: localStorage.getItem(TOKEN_KEY),
  /** The token's account: {id, name}, once signed in. */
  account: null,
};

/** An error answer, with the problem's detail and field errors. */
class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `the server answered ${status}`);
    this.status = status;
    this.errors = problem?.errors ?? [];
  }
}

/** Another view learns of a refused token through this event. */
export const UNAUTHORIZED = "cinch:unauthorized";

export function authHeaders() {
  return { Authorization: `Bearer ${session.token}` };
}

/**
 * Calls the API. A JSON `body` is sent as JSON; the answer is parsed as
 * JSON unless `text` asks for the text. Throws ApiError on an error answer.
 */
export async function call(path, { method = "GET", body, text = false } = {}) {
  const headers = authHeaders();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  if (response.status === 401) window.dispatchEvent(new Event(UNAUTHORIZED));
  if (!response.ok) {
    const problem = await response.json().catch(() => null);
    throw new ApiError(response.status, problem);
  }
  if (response.status === 204) return null;
  return text ? response.text() : response.json();
}

/** A /v1 call's data. */
export async function v1(path, options) {
  return (await call(`/v1${path}`, options)).data;
}

/** Every page of a /v1 listing, following meta.next_cursor. */
export async function v1All(path) {
  const items = [];
  let cursor = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const page = await call(`/v1${path}${cursor ? `${separator}cursor=${encodeURIComponent(cursor)}` : ""}`);
    items.push(...page.data);
    cursor = page.meta?.next_cursor;
  } while (cursor);
  return items;
}

/** The account's path prefix under /v1. */
export function accountPath(rest = "") {
  return `/accounts/${encodeURIComponent(session.account.id)}${rest}`;
}

/** Checks `token` and keeps it: the first of its accounts is the one used. */
export async function signIn(token) {
  session.token = token;
  try {
    const accounts = await v1("/accounts");
    if (!accounts.length) throw new ApiError(403, { detail: "this token has no account" });
    session.account = accounts[0];
    localStorage.setItem(TOKEN_KEY, token);
  } catch (error) {
    // Keep a kept token through a server that is down; drop a refused one.
    if (error.status === 401 || error.status === 403) signOut();
    throw error;
  }
}

export function signOut() {
  session.token = null;
  session.account = null;
  localStorage.removeItem(TOKEN_KEY);
}
