/**
 * cinch's error answers (application/problem+json, RFC 9457) as errors to
 * catch by class: every request whose answer is a problem throws one.
 */

import type { Middleware } from "openapi-fetch";
import type { components } from "./schema.js";

/** A problem as cinch sends it. */
export type Problem = components["schemas"]["Problem"];

/** A field at fault in a 422, as the problem names it. */
export type FieldError = Problem["errors"][number];

/** Any error answer of cinch. */
export class ProblemError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The problem's type, `urn:cinch:<code>`. */
  readonly type: string;
  /** The type's last part: `not_found`, `validation`, `worktree.busy`, ... */
  readonly code: string;
  /** A short summary of the kind. */
  readonly title: string;
  /** What went wrong this time. */
  readonly detail: string;
  /** The fields at fault, when the request's content is. */
  readonly errors: FieldError[];
  /** Seconds the server asks to wait before trying again, when it says. */
  readonly retryAfter: number | undefined;

  constructor(problem: Problem, retryAfter?: number) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`);
    this.name = new.target.name;
    this.status = problem.status;
    this.type = problem.type;
    this.code = problem.type.replace(/^urn:cinch:/, "");
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.retryAfter = retryAfter;
  }
}

/** 400: the body is not JSON. */
export class BadRequestError extends ProblemError {}
/** 401: no token, or one cinch does not know. */
export class UnauthorizedError extends ProblemError {}
/** 403: the token may not do this. */
export class ForbiddenError extends ProblemError {}
/** 404: nothing there for this token (another account's object included). */
export class NotFoundError extends ProblemError {}
/** 409: the object's state does not allow the request (a turn still runs, a key in flight). */
export class ConflictError extends ProblemError {}
/** 422: a field, parameter or key breaks its rule; `errors` names them. */
export class ValidationError extends ProblemError {}
/** 429: no capacity for it now. */
export class TooManyRequestsError extends ProblemError {}
/** 5xx: the server failed. */
export class ServerError extends ProblemError {}

const BY_STATUS: Record<number, typeof ProblemError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
  429: TooManyRequestsError,
};

/** The error for a problem, of the class its status calls for. */
export function problemError(problem: Problem, retryAfter?: number): ProblemError {
  const kind = problem.status >= 500 ? ServerError : (BY_STATUS[problem.status] ?? ProblemError);
  return new kind(problem, retryAfter);
}

/** Whether an answer is a problem. */
export function isProblem(response: Response): boolean {
  return (response.headers.get("Content-Type") ?? "").startsWith("application/problem+json");
}

/** Throws the problem of an answer that is one. */
export async function throwIfProblem(response: Response): Promise<void> {
  if (!isProblem(response)) {
    return;
  }
  const problem = (await response.json()) as Problem;
  const retryAfter = Number(response.headers.get("Retry-After"));
  throw problemError(problem, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
}

/** The openapi-fetch middleware that turns problems into thrown errors. */
export const problemMiddleware: Middleware = {
  async onResponse({ response }) {
    await throwIfProblem(response.clone());
    return undefined;
  },
};
