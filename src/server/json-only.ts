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

/**
 * `application/json` only: a `+json` type says more than "JSON" (`application/merge-patch+json`
 * is a patch, not the whole document), and a patch was stored as the whole tool.
 */
export function isJsonType(type: string): boolean {
  return type === 'application/json';
}

export function unsupportedMediaType(type: string): HttpProblem {
  return new HttpProblem('UNSUPPORTED_MEDIA_TYPE', `the body must be application/json, got ${type === '' ? 'no Content-Type' : JSON.stringify(type)}`, { context: { content_type: type } });
}

/**
 * A `charset` parameter other than UTF-8 (`application/json; charset=latin1`), or undefined:
 * the body is read as UTF-8 (JSON's only encoding, RFC 8259), so latin-1 bytes `C3 A9` meant as
 * `Ã©` were stored as `é`. Refused rather than read as something the client did not send.
 */
function foreignCharset(contentType: string | null | undefined): string | undefined {
  for (const parameter of (contentType ?? '').split(';').slice(1)) {
    const match = /^\s*charset\s*=\s*(?:"([^"]*)"|([^\s;]*))\s*$/i.exec(parameter);
    const charset = match === null ? undefined : (match[1] ?? match[2] ?? '');
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) return charset;
  }
  return undefined;
}

function unsupportedCharset(contentType: string, charset: string): HttpProblem {
  return new HttpProblem('UNSUPPORTED_MEDIA_TYPE', `the body must be UTF-8 JSON, got charset ${JSON.stringify(charset)} in ${JSON.stringify(contentType)}; send it as UTF-8 (or without a charset)`, {
    context: { content_type: contentType, charset },
  });
}

/** 415 for a request that changes something with a Content-Type other than JSON (or JSON in another charset than UTF-8, or content-coded), or a body without one. */
export function jsonOnly(): MiddlewareHandler {
  return (c, next) => {
    if (!SAFE_METHOD.test(c.req.method)) {
      const header = c.req.header('content-type');
      const length = c.req.header('content-length');
      const hasBody = (length !== undefined && length.trim() !== '0') || c.req.header('transfer-encoding') !== undefined;
      if (header !== undefined ? !isJsonType(mediaType(header)) : hasBody) throw unsupportedMediaType(mediaType(header));
      const charset = foreignCharset(header);
      if (charset !== undefined) throw unsupportedCharset(header as string, charset);
      // No content coding is decoded: a gzip body was read as its compressed bytes ("not UTF-8
      // text ... save it as UTF-8"), and plain bytes labelled gzip were taken as they came.
      const encoding = c.req.header('content-encoding');
      if (hasBody && encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) {
        throw new HttpProblem('UNSUPPORTED_MEDIA_TYPE', `the body must not be encoded, got Content-Encoding ${JSON.stringify(encoding)}; send it uncompressed`, {
          context: { content_encoding: encoding },
        });
      }
      // Nor a transfer coding but chunked, which Node decodes: `gzip, chunked` was read as the gzip bytes, `foo, chunked` as if plain.
      const transfer = c.req.header('transfer-encoding');
      if (transfer !== undefined && !/^\s*chunked\s*$/i.test(transfer)) {
        throw new HttpProblem('UNSUPPORTED_MEDIA_TYPE', `the body must be sent plain or chunked, got Transfer-Encoding ${JSON.stringify(transfer)}`, {
          context: { transfer_encoding: transfer },
        });
      }
    }
    return next();
  };
}
