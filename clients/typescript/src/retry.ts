/**
 * The fetch every request goes through: it gives each POST an
 * Idempotency-Key (unless the caller set one) and retries what is safe to
 * retry, a POST always with its own key, so that a retry never does the work
 * twice: cinch replays the first answer for the same key and body.
 */

/** When and how often to try a request again. */
export interface RetryOptions {
  /** Tries after the first one (default 3). */
  retries?: number;
  /** The wait before the first retry, doubled for each next one (default 250 ms). */
  baseDelayMs?: number;
  /** The longest wait between two tries (default 5 s). */
  maxDelayMs?: number;
}

/** The header cinch reads a request's key from. */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/**
 * Answers worth another try: the server failed (it lets go of the key, so
 * the retry runs again), or a request with the same key is still being
 * answered (409 with Retry-After). Any other answer was recorded for the key
 * and would only be replayed.
 */
function retryable(response: Response): boolean {
  if (response.status >= 500) {
    return true;
  }
  return response.status === 409 && response.headers.has("Retry-After");
}

function delayFor(attempt: number, response: Response | undefined, options: Required<RetryOptions>): number {
  const retryAfter = Number(response?.headers.get("Retry-After"));
  if (Number.isFinite(retryAfter) && retryAfter > 0) {
    return Math.min(retryAfter * 1000, options.maxDelayMs);
  }
  return Math.min(options.baseDelayMs * 2 ** attempt, options.maxDelayMs);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** A new key: random, so that two requests never share one by chance. */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

/**
 * Wraps `base` (the global fetch by default): POSTs get a key, and requests
 * are retried on a lost connection or a retryable answer with the same key.
 */
export function retryingFetch(
  options: RetryOptions = {},
  base: (request: Request) => Promise<Response> = (request) => fetch(request),
): (request: Request) => Promise<Response> {
  const settings: Required<RetryOptions> = {
    retries: options.retries ?? 3,
    baseDelayMs: options.baseDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 5000,
  };
  return async (input: Request) => {
    let request = input;
    if (request.method === "POST" && !request.headers.has(IDEMPOTENCY_HEADER)) {
      const headers = new Headers(request.headers);
      headers.set(IDEMPOTENCY_HEADER, newIdempotencyKey());
      request = new Request(request, { headers });
    }
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= settings.retries;
      // Each try sends a copy: a body can be read only once.
      const sent = last ? request : request.clone();
      let response: Response;
      try {
        response = await base(sent);
      } catch (error) {
        if (last || request.signal.aborted) {
          throw error;
        }
        await sleep(delayFor(attempt, undefined, settings), request.signal);
        continue;
      }
      if (last || !retryable(response)) {
        return response;
      }
      await response.body?.cancel();
      await sleep(delayFor(attempt, response, settings), request.signal);
    }
  };
}
