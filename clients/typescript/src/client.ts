/**
 * The client: every operation of cinch's API, typed from its OpenAPI
 * document (`api`, openapi-fetch), with keys and retries on every request,
 * problems thrown as errors, and the helpers for following a session.
 */

import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { followEvents, type CinchEvent, type FollowOptions } from "./events.js";
import { problemMiddleware } from "./problem.js";
import { retryingFetch, type RetryOptions } from "./retry.js";
import { waitForIdle, type WaitOptions } from "./wait.js";

type Session = components["schemas"]["Session"];
type Task = components["schemas"]["TaskView"];
type TaskCreate = components["schemas"]["TaskCreate"];

/** Where cinch is and who calls it. */
export interface CinchOptions {
  /** The server, e.g. `http://127.0.0.1:7700`. */
  baseUrl: string;
  /** A bearer token (`~/.cinch/admin-token`, or one `cinch token create` made). */
  token: string;
  /** When to retry (a POST keeps its Idempotency-Key across retries). */
  retry?: RetryOptions;
  /** The fetch to send requests with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** A cinch server, as one token sees it. */
export class Cinch {
  /** Every operation: `api.GET("/v1/accounts/{account}/tasks", { params: { path: { account } } })`. */
  readonly api: Client<paths>;
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly send: (request: Request) => Promise<Response>;

  constructor(options: CinchOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.send = retryingFetch(options.retry, options.fetch);
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: { Authorization: `Bearer ${this.token}` },
      fetch: this.send,
    });
    this.api.use(problemMiddleware);
  }

  /** The id of the token's account. */
  async accountId(): Promise<string> {
    const { data } = await this.api.GET("/v1/accounts");
    const account = data?.data[0];
    if (!account) {
      throw new Error("the token sees no account");
    }
    return account.id;
  }

  /**
   * Creates a task; with a `prompt` it starts a session, returned with it
   * (`undefined` without one).
   */
  async startTask(account: string, body: TaskCreate): Promise<{ task: Task; session: Session | undefined }> {
    const created = await this.api.POST("/v1/accounts/{account}/tasks", { params: { path: { account } }, body });
    const task = created.data!.data;
    const sessions = await this.api.GET("/v1/accounts/{account}/tasks/{task}/sessions", {
      params: { path: { account, task: task.id } },
    });
    return { task, session: sessions.data!.data[0] };
  }

  /**
   * A session's live events, from its first (or after `lastEventId`),
   * followed across dropped connections until the loop stops.
   */
  events(account: string, task: string, session: string, options: FollowOptions = {}): AsyncGenerator<CinchEvent> {
    const path = [account, task, session].map(encodeURIComponent);
    const url = `${this.baseUrl}/v1/accounts/${path[0]}/tasks/${path[1]}/sessions/${path[2]}/events`;
    return followEvents(url, { Authorization: `Bearer ${this.token}` }, options, this.send);
  }

  /** The session once its turn ended and nothing waits (or once it closed). */
  waitForIdle(account: string, task: string, session: string, options: WaitOptions = {}): Promise<Session> {
    return waitForIdle(this.api, { account, task, session }, options);
  }
}
