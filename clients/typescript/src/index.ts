/**
 * `@cinch/client`: a typed client for cinch's HTTP API.
 */

export { Cinch, type CinchOptions } from "./client.js";
export { followEvents, type CinchEvent, type FollowOptions, type ToolEnded, type ToolProgress } from "./events.js";
export {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ProblemError,
  ServerError,
  TooManyRequestsError,
  UnauthorizedError,
  ValidationError,
  problemError,
  type FieldError,
  type Problem,
} from "./problem.js";
export { IDEMPOTENCY_HEADER, newIdempotencyKey, retryingFetch, type RetryOptions } from "./retry.js";
export { WaitTimeoutError, waitForIdle, type WaitOptions } from "./wait.js";
export type { components, operations, paths } from "./schema.js";
