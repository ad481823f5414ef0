/** The cluster layout in docker-compose.yml runs every service somewhere (a route whose service no node runs is a 503). */
import { readFileSync } from 'node:fs';
import { SERVICE_FACTORIES } from '../../services/index.ts';

describe('docker-compose.yml', () => {
  it('runs every service of the code base on some node, and names no unknown one', () => {
    const compose = readFileSync('docker-compose.yml', 'utf8');
    const listed = new Set([...compose.matchAll(/SERVICES: "([^"]+)"/g)].flatMap((m) => m[1].split(',')));
    expect([...listed].filter((s) => !(s in SERVICE_FACTORIES))).toEqual([]);
    expect(Object.keys(SERVICE_FACTORIES).filter((s) => !listed.has(s))).toEqual([]);
  });
});
