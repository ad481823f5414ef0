/** How a facade action shapes its HTTP response through moleculer-web's ctx.meta fields. */
import type { Context } from 'moleculer';

/** 201 Created with a Location header. */
export function created(ctx: Context, location: string): void {
  const meta = ctx.meta as Record<string, unknown>;
  meta.$statusCode = 201;
  meta.$location = location;
}

export function status(ctx: Context, code: number): void {
  (ctx.meta as Record<string, unknown>).$statusCode = code;
}

export function header(ctx: Context, name: string, value: string): void {
  const meta = ctx.meta as { $responseHeaders?: Record<string, string> };
  meta.$responseHeaders = { ...(meta.$responseHeaders ?? {}), [name]: value };
}
