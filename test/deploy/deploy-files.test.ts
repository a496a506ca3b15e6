/**
 * Docker has no daemon here, so the files that ship for it are tested outside it: compose's nginx
 * renders the template the topology tests run (and nginx accepts the result), compose's service
 * environment is a valid configuration, and the image's HEALTHCHECK command tells a ready service
 * from a dead one.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { LISTEN_BACKLOG } from '../../src/http/app.js';
import { connectionBudget } from '../../src/runtime/file-descriptors.js';
import { freePort } from '../support/child-service.js';
import { type RunningService, startService } from '../support/service.js';
import { hasPromtool, PROMTOOL } from '../support/promtool.js';
import { hasNginx, NGINX, renderNginxConfig, startNginx } from '../support/topology.js';

const run = promisify(execFile);
const read = (file: string) => readFile(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('the deployment files', () => {
  let compose: any;
  let template: string;
  let svc: RunningService;
  beforeAll(async () => {
    compose = parse(await read('docker-compose.yml'));
    template = await read('deploy/nginx/nginx.conf.template');
    svc = await startService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('mounts the template the topology tests render, and sets every variable it uses', () => {
    const nginx = compose.services.nginx;
    expect(nginx.volumes).toContain('./deploy/nginx/nginx.conf.template:/etc/nginx/conclave.conf.template:ro');
    const used = [...new Set([...template.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1]))].sort();
    expect(used).toEqual(['CONCLAVE_UPSTREAMS', 'NGINX_PORT', 'NGINX_RUN_DIR']);
    expect(Object.keys(nginx.environment).sort()).toEqual(used);
    const substituted = nginx.command
      .at(-1)
      .match(/envsubst '([^']+)'/)[1]
      .split(' ')
      .map((v: string) => v.replace(/^\$+/, ''));
    expect(substituted.sort()).toEqual(used);
  });

  it.skipIf(!hasNginx)("renders, with compose's values, a configuration nginx accepts", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'conclave-compose-nginx-'));
    const env = compose.services.nginx.environment;
    const port = await freePort();
    const config = await renderNginxConfig({
      ...env,
      NGINX_PORT: `127.0.0.1:${port}`,
      NGINX_RUN_DIR: dir,
      // The compose service name does not resolve here; the upstream line keeps its parameters.
      CONCLAVE_UPSTREAMS: env.CONCLAVE_UPSTREAMS.replace('conclave:3000', new URL(svc.base).host),
    });
    await writeFile(path.join(dir, 'nginx.conf'), config);
    const { stderr } = await run(NGINX, ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf')]);
    expect(stderr).toContain('test is successful');
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!hasNginx)('keeps /metrics off the public port; a scraper reads each replica directly', async () => {
    const second = await startService();
    const replicas = [svc, second];
    const nginx = await startNginx(replicas.map((replica) => new URL(replica.base).host));
    try {
      for (const path of ['/metrics', '//metrics', '/metrics/', '/%6detrics', '/metrics?format=text']) {
        const response = await fetch(`${nginx.base}${path}`);
        const body = await response.text();
        expect(response.status, path).toBe(404);
        expect(JSON.parse(body).error.code, path).toBe('vendor:conclave:not_found');
        expect(body, path).not.toContain('conclave_http_requests_total');
      }
      // The rest of the API still goes through.
      expect((await fetch(`${nginx.base}/healthz`)).status).toBe(200);
      // Each replica answers its own figures on its own address, as the scrape config reaches them.
      for (const replica of replicas) {
        const response = await fetch(`${replica.base}/metrics`);
        expect(response.status).toBe(200);
        expect(await response.text()).toContain('conclave_http_requests_total');
      }
    } finally {
      await nginx.stop();
      await second.stop();
    }
  });

  it('scrapes every replica on the internal network and publishes only nginx', async () => {
    const prometheus = parse(await read('deploy/prometheus/prometheus.yml'));
    const [job] = prometheus.scrape_configs;
    expect(job.metrics_path).toBe('/metrics');
    // One target per address the service name resolves to: one per replica, never the balancer.
    expect(job.dns_sd_configs).toEqual([
      expect.objectContaining({
        names: ['conclave'],
        type: 'A',
        port: Number(compose.services.conclave.environment.PORT),
      }),
    ]);
    expect(compose.services.conclave.ports).toBeUndefined();
    expect(compose.services.redis.ports).toBeUndefined();
    expect(compose.services.nginx.ports).toEqual(['8080:8080']);
    expect(compose.services.prometheus.ports).toEqual(['127.0.0.1:9090:9090']);
    expect(compose.services.prometheus.volumes).toContain(
      './deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
    );
    if (hasPromtool) {
      const { stdout } = await run(PROMTOOL, [
        'check',
        'config',
        fileURLToPath(new URL('../../deploy/prometheus/prometheus.yml', import.meta.url)),
      ]);
      expect(stdout).toContain('SUCCESS');
    }
  });

  it('restarts every service that stops', () => {
    for (const [name, service] of Object.entries<any>(compose.services)) {
      expect(service.restart, name).toBe('unless-stopped');
    }
  });

  it('gives the service a valid configuration', () => {
    const environment = { ...compose.services.conclave.environment, CONCLAVE_SIGNING_KEY_SEED: 'ab'.repeat(32) };
    const config = loadConfig(environment);
    expect(config.store).toMatchObject({ kind: 'redis', url: 'redis://redis:6379', cluster: false });
    // The replicas trust nginx's fixed address, and nothing else: no client names itself.
    const nginxAddress = compose.services.nginx.networks.default.ipv4_address;
    expect(config.trustProxy).toEqual([nginxAddress]);
    expect(compose.networks.default.ipam.config[0].subnet).toBe('172.31.240.0/24');
    expect(nginxAddress.startsWith('172.31.240.')).toBe(true);
    // nginx replaces the client's X-Forwarded-For with the address it saw, never appends to it.
    expect(template).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
    expect(template).not.toContain('$proxy_add_x_forwarded_for');
    // Its descriptor limit fits its connections.
    const connections = Number(/worker_connections (\d+);/.exec(template)![1]);
    const rlimit = Number(/worker_rlimit_nofile (\d+);/.exec(template)![1]);
    expect(rlimit).toBeGreaterThan(connections);
    expect(compose.services.nginx.ulimits.nofile.hard).toBeGreaterThanOrEqual(rlimit);
    // Sized to the replicas' parking pools: nginx lets through every parked request they can hold,
    // and has two connections for each of those and of 4,000 other requests in progress.
    const parkedAll = Number(/limit_conn conclave_parked_all (\d+);/.exec(template)![1]);
    expect(parkedAll).toBe(compose.services.conclave.deploy.replicas * config.maxParkedConnections);
    expect(connections).toBeGreaterThanOrEqual(2 * (parkedAll + 4000));
    // A client's caps sit within what the service gives one address.
    const perClient = Number(/limit_conn conclave_client (\d+);/.exec(template)![1]);
    const parkedPerClient = Number(/limit_conn conclave_parked_client (\d+);/.exec(template)![1]);
    expect(perClient).toBe(connectionBudget(compose.services.conclave.ulimits.nofile.hard).defaultPerAddress);
    expect(parkedPerClient).toBeLessThan(perClient);
    expect(parkedPerClient).toBeLessThanOrEqual(
      (config.maxParkedConnections * config.parkedShares.addressPercent) / 100,
    );
    // A reconnect storm waits in the accept queues (nginx's and the service's) instead of being
    // dropped: both listen with the service's backlog, and the containers' kernel allows it.
    expect(template).toContain(`listen \${NGINX_PORT} backlog=${LISTEN_BACKLOG};`);
    for (const name of ['nginx', 'conclave']) {
      expect(Number(compose.services[name].sysctls['net.core.somaxconn']), name).toBeGreaterThanOrEqual(LISTEN_BACKLOG);
    }
    expect(compose.services.conclave.depends_on.redis.condition).toBe('service_healthy');
    expect(compose.services.nginx.depends_on.conclave.condition).toBe('service_healthy');
    expect(compose.services.redis.command).toEqual(['redis-server', '--appendonly', 'yes', '--appendfsync', 'always']);
  });

  it('has a HEALTHCHECK that tells a ready service from a dead one', async () => {
    const dockerfile = await read('Dockerfile');
    const line = dockerfile.match(/HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])/)![1]!;
    const [binary, ...args] = JSON.parse(line) as string[];
    expect(binary).toBe('node');
    const probe = (port: string) =>
      run(process.execPath, args, { env: { ...process.env, PORT: port } }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? 1,
      );
    expect(await probe(new URL(svc.base).port)).toBe(0);
    expect(await probe(String(await freePort()))).toBe(1);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  it('ships docs/ in the runtime image where the built service reads the guide', async () => {
    const dockerfile = await read('Dockerfile');
    // The runtime stage is the last FROM; its COPY lines, with destinations resolved against WORKDIR.
    const runtime = dockerfile.split(/^FROM /m).at(-1)!;
    const workdir = runtime.match(/^WORKDIR (\S+)$/m)![1]!;
    const copies = [...runtime.matchAll(/^COPY (?:--from=(\S+) )?(\S+) (\S+)$/gm)].map(([, from, source, target]) => ({
      from,
      source: source ?? '',
      target: path.posix.resolve(workdir, target ?? ''),
    }));
    const docs = copies.find((c) => c.target === path.posix.join(workdir, 'docs'));
    expect(docs, 'a COPY of docs/ into the runtime stage').toBeDefined();
    expect(docs!.from === undefined ? docs!.source : docs!.source.replace(/^\/app\//, '')).toMatch(/^docs\/?$/);
    const ignored = (await read('.dockerignore')).split('\n').map((l) => l.trim());
    expect(ignored).not.toContain('docs');
    // The compiled guide page (dist/src/http/guide-page.js) looks three folders up, beside dist/.
    const dist = copies.find((c) => c.source === '/app/dist')!;
    const source = await read('src/http/guide-page.ts');
    const upward = source.match(/'(\.\.\/\.\.\/\.\.\/docs\/)'/)![1]!;
    expect(path.posix.resolve(dist.target, 'src/http', upward)).toBe(docs!.target);
  });
});
