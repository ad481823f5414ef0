import { Errors } from 'moleculer';
import { badRequest, conflict, forbidden, notFound, rateLimited, unauthorized } from '../../lib/core/errors.ts';
import { envelopeCode, toEnvelope } from '../../lib/http/envelope.ts';

describe('error envelope', () => {
  it.each([
    [400, 3],
    [401, 7],
    [403, 7],
    [404, 2],
    [409, 5],
    [413, 3],
    [415, 3],
    [429, 4],
    [500, 1],
    [503, 1],
  ])('maps HTTP %i to code %i', (status, code) => {
    expect(envelopeCode(status)).toBe(code);
  });

  it('keeps the message of client errors and hides internals of server errors', () => {
    expect(toEnvelope(badRequest('amount must be a number'))).toEqual({
      status: 400,
      body: { code: 3, message: 'amount must be a number' },
    });
    expect(toEnvelope(notFound('payment session'))).toEqual({ status: 404, body: { code: 2, message: 'payment session not found' } });
    expect(toEnvelope(conflict('busy'))).toEqual({ status: 409, body: { code: 5, message: 'busy' } });
    expect(toEnvelope(rateLimited()).body.code).toBe(4);
    expect(toEnvelope(new Error('SQLITE_BUSY at /srv/app/lib/store.ts:12'))).toEqual({
      status: 500,
      body: { code: 1, message: 'internal server error' },
    });
    expect(toEnvelope(new Errors.MoleculerServerError('db password wrong', 500, 'X'))).toEqual({
      status: 500,
      body: { code: 1, message: 'internal server error' },
    });
    expect(toEnvelope(new Errors.RequestTimeoutError({ action: 'x', nodeID: 'n' })).status).toBe(503);
  });

  it('always uses the spec wording for missing or invalid credentials', () => {
    expect(toEnvelope(unauthorized())).toEqual({ status: 401, body: { code: 7, message: 'missing or invalid authorization header' } });
    expect(toEnvelope(new Errors.MoleculerClientError('jwt expired', 401, 'X'))).toEqual({
      status: 401,
      body: { code: 7, message: 'missing or invalid authorization header' },
    });
    expect(toEnvelope(forbidden('registration is not permitted for this email')).body).toEqual({
      code: 7,
      message: 'registration is not permitted for this email',
    });
  });
});

describe('store races', () => {
  it('surface as 409 code 5 without internals', async () => {
    const { DuplicateKeyError, VersionConflictError } = await import('../../lib/store/port.ts');
    expect(toEnvelope(new VersionConflictError('merchants', 'mer_1'))).toEqual({
      status: 409,
      body: { code: 5, message: 'the resource was changed by a concurrent request; retry' },
    });
    expect(toEnvelope(new DuplicateKeyError('merchants', 'UNIQUE constraint failed: merchants.id')).body.message).not.toMatch(/UNIQUE/);
  });
});
