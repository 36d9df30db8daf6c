// The typed REST client. `schema.d.ts` is generated from the gateway's OpenAPI document
// (`npm run api`), so a route or field the gateway drops fails `tsc` here, not in a browser.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type Memory = Schemas["Memory"];
export type SearchResult = Schemas["SearchResult"];
export type Goal = Schemas["Goal"];
export type WhoAmI = Schemas["WhoAmI"];

const KEY_STORAGE = "exocortex.apiKey";

// The key lives for the browser tab's session only and is sent as a header, never in a URL.
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string): void => sessionStorage.setItem(KEY_STORAGE, key),
  clear: (): void => sessionStorage.removeItem(KEY_STORAGE),
};

/** An RFC 9457 problem the gateway answered with, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const withKey: Middleware = {
  onRequest({ request }) {
    const key = apiKey.get();
    if (key) request.headers.set("Authorization", `Bearer ${key}`);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(withKey);

type Outcome<T> = { data?: T; error?: unknown; response: Response };

function problemText(error: unknown, status: number): [string, string | undefined] {
  if (error && typeof error === "object") {
    const p = error as { detail?: unknown; title?: unknown; field?: unknown };
    const detail = typeof p.detail === "string" ? p.detail : JSON.stringify(p.detail ?? p.title);
    return [detail, typeof p.field === "string" ? p.field : undefined];
  }
  return [`HTTP ${status}`, undefined];
}

/** The data of a call, or an ApiError carrying the gateway's own explanation. */
export async function unwrap<T>(call: Promise<Outcome<T>>): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = await call;
  } catch (e) {
    throw new ApiError(0, `the gateway cannot be reached (${String(e)})`);
  }
  const { data, error, response } = outcome;
  if (!response.ok || data === undefined) {
    const [message, field] = problemText(error, response.status);
    if (response.status === 401) window.dispatchEvent(new Event("exocortex:unauthorized"));
    throw new ApiError(response.status, message, field);
  }
  return data;
}
