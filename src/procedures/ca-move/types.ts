import type { DepotSpec, FleetRow, InstallerTarget } from '../../installer/index.js';
import type { ExportTarget } from '../../constants.js';
import type { Finding } from '../../util/findings.js';

/** The command that reloads a site of one kind, to run by hand when the move does not run one. */
export interface ReloadHint {
  server: ExportTarget;
  command: string;
}
import type { SecretPrompt } from '../../util/secrets.js';

/** How the new certificate reaches the server: `depotkit serve` reloads on SIGHUP; another server runs its own reload. */
export type ServedDepot =
  | { kind: 'serve'; certFile: string; keyFile: string; /** serve's process id */ pid: number }
  | {
      kind: 'site';
      certFile: string;
      keyFile: string;
      /** run with /bin/sh; without it the report says to reload and run the move again */ reloadCommand?: string;
      /** the kind `depotkit export` wrote the site as: the report then names its reload command */ server?: ExportTarget;
      /** with `server` systemd: the unit's name (the export's name; depotkit by default) */ unit?: string;
    };

export interface CaMoveOptions {
  /** The new server certificate (leaf first, its intermediates after), its key and the new CA, as PEM files. */
  newCert: string;
  newKey: string;
  newCa: string;
  /** The CA to retire; needed only with `removeOld`. */
  oldCa?: string;
  served: ServedDepot;
  /**
   * The depot as the consumers are pointed at it, with its account: every consumer validates it again with
   * these settings. With `asHost`, its URL is the depot's address as this host reaches it.
   */
  depot: DepotSpec;
  /**
   * The host name the consumers use, when this host reaches the depot at another name or address (as
   * `check` takes it): the consumers are given the depot URL with this name, and this host reads the
   * served certificate at the URL's address, sending this name.
   */
  asHost?: string;
  /**
   * Set the depot URL on consumers whose depot settings name another host or port; without it such a
   * consumer's row fails before the switch, and nothing changes its depot.
   */
  repoint?: boolean;
  /** Host names and addresses the consumers use for the depot besides the URL's host: each needs a SAN. */
  names?: string[];
  consumers: InstallerTarget[];
  concurrency: number;
  timeoutMs: number;
  /** Asks for the password of a user whose consumers name no file or variable (on a terminal, say), once per user before any consumer is asked; without it such a user is refused. */
  prompt?: SecretPrompt;
  removeOld?: boolean;
  dryRun?: boolean;
  /** Switch even when some consumers cannot be reached (they validate the depot once they trust the new CA). */
  skipUnreachable?: boolean;
  /** Where the progress is kept; beside the served certificate by default. */
  stateFile?: string;
  /** How long the server gets to serve the new certificate after its reload; 30 s by default. */
  switchTimeoutMs?: number;
  /**
   * How long the switch of a site with a reload command waits after the proof; 5 s by default. A validation a
   * consumer began before it trusted the new CA still judges with its old list, and nginx, Apache and Caddy
   * close their idle connections at a reload, so its next request meets the new certificate (serve keeps its
   * connections across a reload). The simulated installer's validations took up to 2 s at a load of 9 on 2 cores.
   */
  trustSettleMs?: number;
  /**
   * How long a re-run waits for a site to take a pair it finds written, when the move runs no reload; 5 s by
   * default. nginx's and Apache's reload commands return once the signal is sent, before the server reads the
   * files (within a second here).
   */
  reloadUnderWayMs?: number;
  /** Aborted on an interruption: the open sessions are revoked at once and the move stops, its state kept for a re-run. */
  signal?: AbortSignal;
  onPhase?: (phase: PhaseReport) => void;
}

/** One consumer's row: who it is as appliance-info says, then the phase's outcome. */
export interface ConsumerRow<T> extends FleetRow<T> {
  role?: string;
  version?: string;
  /** Could not be reached at all (no answer, TLS refused): what `skipUnreachable` lets through. */
  unreachable?: boolean;
}

export type PhaseName = 'plan' | 'import' | 'prove' | 'switch' | 'revalidate' | 'retire';

export interface PhaseReport {
  phase: PhaseName;
  ok: boolean;
  /** Done by an earlier run, per the state file. */
  skipped?: boolean;
  note?: string;
  rows?: Array<ConsumerRow<unknown>>;
  /** The switch's: check's verdict on the chain the depot serves after it, judged as the new pair was in the plan. */
  findings?: Finding[];
}

export interface CaMovePlan {
  /** The depot's origin as the consumers are given it. */
  depotUrl: string;
  /** Where this host reaches it (`asHost`), when that is another address. */
  reachedAt?: string;
  newCa: { subject: string; sha256: string };
  oldCa?: { subject: string; sha256: string };
  leaf: { subject: string; sha256: string };
  findings: Finding[];
  consumers: Array<{ name: string; url: string }>;
  steps: string[];
  stateFile: string;
}

export interface CaMoveReport {
  ok: boolean;
  dryRun: boolean;
  resumed: boolean;
  plan: CaMovePlan;
  phases: PhaseReport[];
  /** What is left when the move stopped. */
  next?: string;
  /** When the server is to be reloaded by hand: its reload command (each kind's when the site's kind is not known). */
  reload?: ReloadHint[];
}
