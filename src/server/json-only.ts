// A body is JSON or nothing: a cross-site form (application/x-www-form-urlencoded,
// multipart/form-data, text/plain) needs no preflight, so no route may act on one, even a
// route that reads no body (`POST /v1/tools/{name}/disable`). 415 before the route runs.
import type { MiddlewareHandler } from 'hono';
import { HttpProblem } from './problems.js';

const SAFE_METHOD = /^(?:GET|HEAD|OPTIONS)$/;

/** The media type of a Content-Type header, lowercase, without parameters ('' when absent). */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** `application/json` or `application/*+json`. */
export function isJsonType(type: string): boolean {
  return type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type);
}

export function unsupportedMediaType(type: string): HttpProblem {
  return new HttpProblem('UNSUPPORTED_MEDIA_TYPE', `the body must be application/json, got ${type === '' ? 'no Content-Type' : JSON.stringify(type)}`, { context: { content_type: type } });
}

/** 415 for a request that changes something with a Content-Type other than JSON, or a body without one. */
export function jsonOnly(): MiddlewareHandler {
  return (c, next) => {
    if (!SAFE_METHOD.test(c.req.method)) {
      const header = c.req.header('content-type');
      const length = c.req.header('content-length');
      const hasBody = (length !== undefined && length.trim() !== '0') || c.req.header('transfer-encoding') !== undefined;
      if (header !== undefined ? !isJsonType(mediaType(header)) : hasBody) throw unsupportedMediaType(mediaType(header));
    }
    return next();
  };
}
