import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ended, freePort, untilAccepting } from './ports.js';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

export interface NginxOptions {
  root: string;
  /** Leaf then chain, PEM; without it nginx serves plain HTTP. */
  certPem?: string;
  keyPem?: string;
  auth?: { user: string; password: string };
  /** Leave HEAD unauthenticated while GET needs credentials (a misconfiguration seen in the field). */
  openHead?: boolean;
  /** Path prefixes (relative to the root) left without auth, as the vendor's recipe does for PROD/vsan/hcl. */
  openPaths?: string[];
  /** Folders (relative to the root) nginx lists (autoindex, HTML), as an operator may for the vCenter upgrade metadata. */
  listedPaths?: string[];
}

export interface RunningNginx {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts a real nginx, an independent server, serving `root` on 127.0.0.1. */
export async function startNginx(options: NginxOptions): Promise<RunningNginx> {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx-light)');
  const dir = await mkdtemp(join(tmpdir(), 'depotkit-nginx-'));
  await mkdir(join(dir, 'tmp'));
  const port = await freePort();
  const tls = options.certPem && options.keyPem;
  if (tls) {
    await writeFile(join(dir, 'cert.pem'), options.certPem!);
    await writeFile(join(dir, 'key.pem'), options.keyPem!, { mode: 0o600 });
  }
  let auth = '';
  if (options.auth) {
    const hash = execFileSync('openssl', ['passwd', '-apr1', options.auth.password], { encoding: 'utf8' }).trim();
    await writeFile(join(dir, 'htpasswd'), `${options.auth.user}:${hash}\n`);
    auth = `auth_basic ${options.openHead ? '$depot_realm' : '"depot"'}; auth_basic_user_file ${join(dir, 'htpasswd')};`;
  }
  const t = join(dir, 'tmp');
  await writeFile(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${t}; proxy_temp_path ${t}; fastcgi_temp_path ${t}; uwsgi_temp_path ${t}; scgi_temp_path ${t};
  types { application/json json; }
  default_type application/octet-stream;
  # nginx disables auth_basic when the realm evaluates to "off".
  map $request_method $depot_realm { HEAD off; default "depot"; }
  server {
    listen 127.0.0.1:${port}${tls ? ' ssl' : ''};
    ${tls ? `ssl_certificate ${join(dir, 'cert.pem')}; ssl_certificate_key ${join(dir, 'key.pem')}; ssl_protocols TLSv1.2 TLSv1.3;` : ''}
    root ${options.root};
    ${auth}
    location / { }
    ${(options.openPaths ?? []).map((p) => `location /${p}/ { auth_basic off; }`).join('\n    ')}
    ${(options.listedPaths ?? []).map((p) => `location /${p}/ { autoindex on; }`).join('\n    ')}
  }
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  await untilAccepting(port, `nginx on port ${port}`, { everyMs: 50, failIf: ended(child) }).catch((e: Error) => {
    throw new Error(`${e.message}: ${stderr}`);
  });
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
