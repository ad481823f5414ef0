/** How a facade action shapes its HTTP response through moleculer-web's ctx.meta fields. */
import type { Context } from 'moleculer';
import { requestMeta } from '../lib/core/request-meta.ts';

/** 201 Created with a Location header. */
export function created(ctx: Context, location: string): void {
  const meta = requestMeta(ctx);
  meta.$statusCode = 201;
  meta.$location = location;
}

export function status(ctx: Context, code: number): void {
  requestMeta(ctx).$statusCode = code;
}

export function header(ctx: Context, name: string, value: string): void {
  const meta = requestMeta(ctx);
  meta.$responseHeaders = { ...(meta.$responseHeaders ?? {}), [name]: value };
}
