import { INSTALLER_PASSWORD_MASK } from './literals.js';
import { escapeControlChars } from '../../util/text.js';

export type LogLevel = 'INFO' | 'WARN' | 'ERROR';

/**
 * The simulator's service log. Every secret it has been told about (user and
 * depot passwords) is masked in every line, whatever the line's author forgot.
 */
export class ServiceLog {
  readonly lines: string[] = [];
  private readonly secrets = new Set<string>();

  constructor(
    private readonly clock: () => number,
    private readonly onLine?: (line: string) => void,
  ) {}

  addSecret(secret: string | undefined): void {
    // Very short secrets would mask ordinary words; they are kept out of structured logs anyway.
    if (secret && secret.length >= 3) this.secrets.add(secret);
  }

  write(level: LogLevel, component: string, message: string): void {
    let text = message;
    for (const secret of this.secrets) text = text.split(secret).join(INSTALLER_PASSWORD_MASK);
    // One event, one line: CR, LF and other control characters from a request cannot forge lines.
    text = escapeControlChars(text);
    const line = `${new Date(this.clock()).toISOString()} ${level.padEnd(5)} [${component}] ${text}`;
    this.lines.push(line);
    this.onLine?.(line);
  }
}
