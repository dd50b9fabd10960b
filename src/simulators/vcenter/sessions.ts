import { randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../util/secret-compare.js';

/**
 * API sessions with an idle lifetime: each use extends a session, as on the
 * real server. A restart of the server's services drops them all.
 */
export class SessionStore {
  private readonly lastUse = new Map<string, number>();
  /** How many sessions were ever created; tests use it to see a client log in again. */
  created = 0;

  constructor(private readonly idleMs: number) {}

  create(): string {
    const id = randomBytes(16).toString('hex');
    this.lastUse.set(id, Date.now());
    this.created++;
    return id;
  }

  /** True when `id` names a live session; using it extends its life. */
  touch(id: string | undefined): boolean {
    if (!id) return false;
    const last = this.lastUse.get(id);
    if (last === undefined) return false;
    if (Date.now() - last > this.idleMs) {
      this.lastUse.delete(id);
      return false;
    }
    this.lastUse.set(id, Date.now());
    return true;
  }

  /** How many sessions are alive now (not ended, not idle too long); tests use it to see a client end its session. */
  live(): number {
    const now = Date.now();
    let n = 0;
    for (const last of this.lastUse.values()) if (now - last <= this.idleMs) n++;
    return n;
  }

  delete(id: string): void {
    this.lastUse.delete(id);
  }

  clear(): void {
    this.lastUse.clear();
  }
}

/** Checks Basic credentials in constant time per user, so timing tells nothing about the password. */
export function checkCredentials(users: Readonly<Record<string, string>>, user: string, password: string): boolean {
  const expected = Object.hasOwn(users, user) ? users[user]! : undefined;
  return constantTimeEqual(password, expected ?? randomBytes(16).toString('hex')) && expected !== undefined;
}

/** The values of every cookie called `name` in a Cookie header, in order (a jar may send one name more than once). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    const value = pair
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (value !== '') values.push(value);
  }
  return values;
}
