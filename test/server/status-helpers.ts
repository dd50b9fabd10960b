import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';

/** One sample of the Prometheus text format: a metric name, its labels and its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A small parser of the Prometheus text exposition format (0.0.4), written here rather than taken from the
 * server's own library (prom-client writes the format but has no parser): `# HELP` and `# TYPE` lines are
 * checked for shape, each sample line is `name{label="value",...} value [timestamp]` with the escapes the
 * format defines in label values (`\\`, `\"`, `\n`). Anything else throws, so a malformed exposition fails the test.
 */
export function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
  for (const [n, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)\b/.test(line)) throw new Error(`line ${n + 1}: malformed ${line}`);
        continue;
      }
      if (m[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]!)) throw new Error(`line ${n + 1}: unknown type ${m[3]}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`line ${n + 1}: no metric name in ${JSON.stringify(line)}`);
    let rest = line.slice(name.length);
    const labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      rest = rest.slice(1);
      while (!rest.startsWith('}')) {
        const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(rest);
        if (!label) throw new Error(`line ${n + 1}: malformed labels in ${JSON.stringify(line)}`);
        rest = rest.slice(label[0].length);
        let value = '';
        for (;;) {
          const c = rest[0];
          if (c === undefined) throw new Error(`line ${n + 1}: unterminated label value`);
          rest = rest.slice(1);
          if (c === '"') break;
          if (c === '\\') {
            const e = rest[0];
            rest = rest.slice(1);
            if (e === 'n') value += '\n';
            else if (e === '\\' || e === '"') value += e;
            else throw new Error(`line ${n + 1}: bad escape \\${e}`);
          } else {
            value += c;
          }
        }
        labels[label[1]!] = value;
        if (rest.startsWith(',')) rest = rest.slice(1);
        else if (!rest.startsWith('}')) throw new Error(`line ${n + 1}: expected , or } in ${JSON.stringify(line)}`);
      }
      rest = rest.slice(1);
    }
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2 || !rest.startsWith(' ')) throw new Error(`line ${n + 1}: malformed sample ${JSON.stringify(line)}`);
    const raw = parts[0]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw === 'NaN' ? NaN : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`line ${n + 1}: bad value ${raw}`);
    samples.push({ name, labels, value });
  }
  return { samples, types };
}

/** The sum of the samples of `name` whose labels include `labels` (0 when none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** A CA (PEM), a server chain (leaf then CA) for localhost and 127.0.0.1 and its key, written under `dir`. */
export async function writePki(
  dir: string,
  cn = 'status test CA',
): Promise<{ caCertPem: string; chainPem: string; leafPem: string; keyPem: string; chain: string; leaf: string; key: string; caFile: string }> {
  const ca = await createCa({ cn, keySize: 2048 });
  const server = await issueServerCert(ca, { dns: ['depot.lab.local', 'localhost'], ips: ['127.0.0.1'] });
  await mkdir(dir, { recursive: true });
  const chain = join(dir, 'chain.pem');
  const leaf = join(dir, 'leaf.pem');
  const key = join(dir, 'key.pem');
  const caFile = join(dir, 'ca.pem');
  await writeFile(chain, server.chainPem);
  await writeFile(leaf, server.certPem);
  await writeFile(key, server.keyPem, { mode: 0o600 });
  await writeFile(caFile, ca.certPem);
  return { caCertPem: ca.certPem, chainPem: server.chainPem, leafPem: server.certPem, keyPem: server.keyPem, chain, leaf, key, caFile };
}

/** A 9.0 demo depot of small binaries. */
export async function demoDepot(root: string, binarySize = 4096): Promise<void> {
  await makeDemoDepot(root, { binarySize, signingDir: `${root}-signing` });
}

/** The JSON variant of the status page (`Accept: application/json`), as a JSON Schema: what monitors and scripts may rely on. */
export const STATUS_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: [
    'format',
    'checkedAt',
    'servedAt',
    'check',
    'summary',
    'catalog',
    'manifest',
    'grouping',
    'releases',
    'otherComponents',
    'hcl',
    'upgradeMetadata',
    'esx',
    'certificate',
    'ca',
    'access',
    'hclAgeDays',
    'certificateDaysLeft',
    'caDaysLeft',
  ],
  additionalProperties: false,
  definitions: {
    date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$' },
    source: {
      type: 'object',
      required: ['state'],
      additionalProperties: false,
      properties: { state: { enum: ['ok', 'missing', 'invalid'] }, message: { type: 'string' } },
    },
    certificate: {
      type: 'object',
      required: ['subject', 'issuer', 'dns', 'ips', 'notBefore', 'notAfter', 'sha256', 'isCa', 'selfSigned'],
      additionalProperties: false,
      properties: {
        subject: { type: 'string' },
        commonName: { type: 'string' },
        issuer: { type: 'string' },
        dns: { type: 'array', items: { type: 'string' } },
        ips: { type: 'array', items: { type: 'string' } },
        notBefore: { $ref: '#/definitions/date' },
        notAfter: { $ref: '#/definitions/date' },
        sha256: { type: 'string', pattern: '^([0-9A-F]{2}:){31}[0-9A-F]{2}$' },
        isCa: { type: 'boolean' },
        selfSigned: { type: 'boolean' },
      },
    },
    file: {
      type: 'object',
      required: ['name', 'path', 'size', 'state', 'hashVerified'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1 },
        path: { type: 'string', pattern: '^PROD/COMP/[A-Za-z0-9_-]+/[^/]+$' },
        size: { type: 'integer', minimum: 0 },
        state: { enum: ['present', 'missing', 'wrong-size', 'unreadable', 'left-out'] },
        actualSize: { type: 'integer', minimum: 0 },
        hashVerified: { type: 'boolean' },
      },
    },
    component: {
      type: 'object',
      required: ['name', 'version', 'inCatalog', 'files'],
      additionalProperties: false,
      properties: {
        name: { type: 'string' },
        version: { type: 'string' },
        releaseDate: { type: 'string' },
        inCatalog: { type: 'boolean' },
        files: { type: 'array', items: { $ref: '#/definitions/file' } },
      },
    },
  },
  properties: {
    format: { const: 1 },
    checkedAt: { $ref: '#/definitions/date' },
    servedAt: { $ref: '#/definitions/date' },
    check: { const: 'size' },
    summary: {
      type: 'object',
      additionalProperties: false,
      required: ['complete', 'files', 'present', 'missing', 'wrongSize', 'unreadable', 'leftOut', 'hashVerified', 'bytes', 'presentBytes'],
      properties: {
        complete: { type: 'boolean' },
        ...Object.fromEntries(
          ['files', 'present', 'missing', 'wrongSize', 'unreadable', 'leftOut', 'hashVerified', 'bytes', 'presentBytes'].map((k) => [
            k,
            { type: 'integer', minimum: 0 },
          ]),
        ),
      },
    },
    catalog: { $ref: '#/definitions/source' },
    manifest: { $ref: '#/definitions/source' },
    grouping: { enum: ['manifest', 'catalog'] },
    releases: {
      type: 'array',
      items: {
        type: 'object',
        required: ['version', 'complete', 'state', 'counts', 'problems', 'message', 'components'],
        additionalProperties: false,
        properties: {
          version: { type: 'string' },
          releaseDate: { type: 'string' },
          minInstallerVersion: { type: 'string' },
          complete: { type: 'boolean' },
          state: { enum: ['complete', 'complete-as-chosen', 'metadata-only', 'binaries-missing', 'wrong-binaries'] },
          counts: {
            type: 'object',
            required: ['binaries', 'present', 'missing', 'wrongBytes', 'unreadable', 'leftOut'],
            additionalProperties: false,
            properties: Object.fromEntries(
              ['binaries', 'present', 'missing', 'wrongBytes', 'unreadable', 'leftOut'].map((k) => [k, { type: 'integer', minimum: 0 }]),
            ),
          },
          problems: {
            type: 'array',
            items: {
              type: 'object',
              required: ['path', 'component', 'productVersion', 'problem', 'expected', 'message'],
              additionalProperties: false,
              properties: {
                path: { type: 'string', pattern: '^PROD/COMP/' },
                component: { type: 'string' },
                productVersion: { type: 'string' },
                problem: { enum: ['missing', 'unreadable', 'other-build', 'wrong-bytes'] },
                expected: {
                  type: 'object',
                  required: ['size', 'sha256'],
                  additionalProperties: false,
                  properties: { size: { type: 'integer', minimum: 0 }, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
                },
                actual: {
                  type: 'object',
                  additionalProperties: false,
                  properties: { size: { type: 'integer', minimum: 0 }, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
                },
                otherBuild: {
                  type: 'object',
                  required: ['path', 'fileName', 'component', 'productVersion', 'by'],
                  additionalProperties: false,
                  properties: {
                    path: { type: 'string' },
                    fileName: { type: 'string' },
                    component: { type: 'string' },
                    productVersion: { type: 'string' },
                    by: { enum: ['sha256', 'size'] },
                  },
                },
                message: { type: 'string' },
              },
            },
          },
          message: { type: 'string' },
          components: { type: 'array', items: { $ref: '#/definitions/component' } },
        },
      },
    },
    selection: { type: 'string' },
    selectionChoices: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['releases', 'components'],
        properties: {
          releases: { type: 'array', items: { type: 'string' } },
          components: { type: 'array', items: { type: 'string' } },
          imageType: { type: 'string' },
        },
      },
    },
    keyExposed: { type: 'string' },
    otherComponents: { type: 'array', items: { $ref: '#/definitions/component' } },
    hcl: {
      type: 'object',
      required: ['state', 'maxAgeDays'],
      additionalProperties: false,
      properties: { state: { enum: ['ok', 'missing', 'invalid'] }, updated: { $ref: '#/definitions/date' }, maxAgeDays: { type: 'integer' } },
    },
    esx: {
      type: 'array',
      items: {
        type: 'object',
        required: ['folder', 'kind', 'index', 'ok', 'vibs', 'present', 'products', 'problems'],
        additionalProperties: false,
        properties: {
          folder: { type: 'string' },
          kind: { enum: ['online', 'bundle', 'umds'] },
          index: { type: 'string' },
          ok: { type: 'boolean' },
          vibs: { type: 'integer', minimum: 0 },
          present: { type: 'integer', minimum: 0 },
          products: {
            type: 'array',
            items: {
              type: 'object',
              required: ['productId', 'version', 'state', 'words', 'vibs', 'present', 'components'],
              additionalProperties: false,
              properties: {
                productId: { type: 'string' },
                version: { type: 'string' },
                state: { enum: ['complete', 'metadata-only', 'files-missing', 'metadata-missing'] },
                words: { type: 'string' },
                vibs: { type: 'integer', minimum: 0 },
                present: { type: 'integer', minimum: 0 },
                components: { type: 'integer', minimum: 0 },
              },
            },
          },
          problems: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    upgradeMetadata: {
      type: 'array',
      items: { type: 'string', pattern: '^PROD/COMP/VCENTER/vmw/[0-9a-fA-F-]{36}/upgrade_info\\.(xml|sig|xml\\.sha256)$' },
    },
    hclAgeDays: { type: ['integer', 'null'] },
    certificateDaysLeft: { type: ['integer', 'null'] },
    caDaysLeft: { type: ['integer', 'null'] },
    certificate: { oneOf: [{ type: 'null' }, { $ref: '#/definitions/certificate' }] },
    ca: {
      type: 'object',
      required: ['certificate'],
      additionalProperties: false,
      properties: {
        certificate: { oneOf: [{ type: 'null' }, { $ref: '#/definitions/certificate' }] },
        pem: { type: 'string', pattern: '^-----BEGIN CERTIFICATE-----\\n[A-Za-z0-9+/=\\n]+-----END CERTIFICATE-----\\n$' },
        unknownReason: { type: 'string' },
      },
    },
    access: {
      type: 'object',
      required: ['url', 'tls', 'auth', 'openPrefixes', 'commands'],
      additionalProperties: false,
      properties: {
        url: { type: 'string', pattern: '^https?://[^/]+$' },
        tls: { type: 'boolean' },
        auth: { enum: ['user', 'htpasswd', 'none'] },
        user: { type: 'string' },
        openPrefixes: { type: 'array', items: { type: 'string' } },
        caPath: { const: '/ca.pem' },
        commands: {
          type: 'object',
          required: ['check', 'installerDepot'],
          additionalProperties: false,
          properties: {
            check: { type: 'string', pattern: '^depotkit check ' },
            installerDepot: { type: 'string', pattern: '^depotkit installer connect-depot ' },
          },
        },
      },
    },
  },
} as const;
