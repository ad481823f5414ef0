/**
 * The Prometheus side of operations: ops/prometheus/alerts.yml passes `promtool check rules` and its unit
 * tests (`promtool test rules`), and a real Prometheus scraping a started node reads back a series the
 * node exported (HTTP requests by route template), with the recording rules loaded.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { promtool, startPrometheus, type Prometheus } from '../helpers/prometheus.ts';
import { eventually } from '../helpers/wait.ts';
import { ensureBinary } from '../helpers/system-package.ts';

jest.setTimeout(300_000);

describe('Prometheus rules and scraping', () => {
  it('alerts.yml passes promtool check rules', () => {
    const out = execFileSync(promtool(), ['check', 'rules', 'ops/prometheus/alerts.yml'], { encoding: 'utf8' });
    expect(out).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('alerts.yml passes its promtool unit tests', () => {
    const out = execFileSync(promtool(), ['test', 'rules', 'alerts.test.yml'], { cwd: 'ops/prometheus', encoding: 'utf8' });
    expect(out).toContain('SUCCESS');
  });

  it('the docker-compose Prometheus and Alertmanager configurations pass their checkers', () => {
    expect(execFileSync(promtool(), ['check', 'config', 'ops/prometheus/prometheus.yml'], { encoding: 'utf8' })).toMatch(/SUCCESS/);
    const amtool = ensureBinary(['amtool'], 'prometheus-alertmanager');
    expect(execFileSync(amtool, ['check-config', 'ops/alertmanager/alertmanager.yml'], { encoding: 'utf8' })).toMatch(/SUCCESS/);
  });

  it('the Grafana dashboard queries only metrics the service exports or the rules record', () => {
    const dash = JSON.parse(readFileSync('ops/grafana/dashboard.json', 'utf8')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    const rules = readFileSync('ops/prometheus/alerts.yml', 'utf8');
    const exported = [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'webhook_delivery_attempts_total',
      'chain_listener_lag_blocks',
      'chain_listener_lag_seconds',
      'actor_mailbox_depth',
      'actor_active',
      'actor_activations_total',
      'store_operation_duration_seconds_bucket',
      'alerts_raised_total',
      'abuse_signal_total',
      'payouts',
      'refunds',
    ];
    const exprs = dash.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThanOrEqual(8);
    const recorded = [...rules.matchAll(/record: ([a-z_:0-9]+)/g)].map((m) => m[1]);
    for (const e of exprs) {
      const names = e.match(/[a-z_:][a-z0-9_:]*/g) ?? [];
      const known = names.filter((n) => exported.includes(n) || recorded.includes(n));
      if (known.length === 0) throw new Error(`dashboard query uses no known metric: ${e}`);
    }
  });

  describe('a real Prometheus scraping a node', () => {
    let t: TestNode;
    let prom: Prometheus;

    beforeAll(async () => {
      t = await startTestNode();
      prom = await startPrometheus([t.url.replace('http://', '')], { ruleFiles: ['ops/prometheus/alerts.yml'] });
    });

    afterAll(async () => {
      await prom?.stop();
      await t?.stop();
    });

    it('exports actor, store and HTTP metrics with low-cardinality labels', async () => {
      expect((await t.request('POST', '/v1/payment_sessions/demo', { body: {} })).status).toBe(201);
      const text = await (await fetch(`${t.url}/metrics`)).text();
      expect(text).toMatch(/actor_activations_total\{actor="payment_sessions"\} [1-9]/);
      expect(text).toMatch(/actor_active\{actor="payment_sessions"\} [1-9]/);
      expect(text).toMatch(/actor_mailbox_depth\{actor="payment_sessions"\} 0/);
      expect(text).toMatch(/store_operation_duration_seconds_count\{op="write"\} [1-9]/);
      expect(text).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/v1\/payment_sessions\/demo",status="201"\} 1/);
      expect(text).not.toMatch(/ps_[0-9a-z]{26}/);
    });

    it('reads back a scraped series by route template', async () => {
      for (let i = 0; i < 5; i++) expect((await t.request('GET', '/v1/payment_methods')).status).toBe(200);
      expect((await t.request('GET', '/v1/payment_sessions/ps_unknown')).status).toBe(401);
      const series = await eventually(
        'the scraped series',
        async () => {
          const r = await prom.query('http_requests_total{route="/v1/payment_methods",status="200"}');
          return r.length > 0 && Number(r[0].value[1]) >= 5 && r;
        },
        120_000,
        500,
      );
      expect(series[0].metric).toMatchObject({ job: 'payments', method: 'GET', route: '/v1/payment_methods', status: '200' });
      // the raw path never becomes a label: the session id is not in any series
      const bySession = await prom.query('http_requests_total{route="/v1/payment_sessions/:session_id"}');
      expect(bySession.some((s) => s.metric.status === '401')).toBe(true);
      const everything = await prom.query('{job="payments"}');
      expect(JSON.stringify(everything)).not.toContain('ps_unknown');
      const rules = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string }> } };
      expect(rules.data.groups.map((g) => g.name).sort()).toEqual(['payments-alerts', 'payments-recording']);
    });
  });
});
