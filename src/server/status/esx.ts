import { describeProductState, type EsxProductState } from '../../esx/status.js';
import { verifyEsx } from '../../esx/verify.js';

/** An ESX depot under the served root, as the status page and /metrics show it. */
export interface StatusEsxDepot {
  /** Its folder under the root: vLCM's online depot is the URL of `index` there. */
  folder: string;
  kind: 'online' | 'bundle' | 'umds';
  index: string;
  ok: boolean;
  vibs: number;
  present: number;
  products: { productId: string; version: string; state: EsxProductState; words: string; vibs: number; present: number; components: number }[];
  /** What is wrong, as `esx verify` says it (the first few errors). */
  problems: string[];
}

/** Problems a page shows before pointing at `esx verify` for the rest. */
const PROBLEMS_SHOWN = 5;

/**
 * The ESX depots under `root` by size (nothing hashed), as `esx verify` judges them; none when the
 * root holds none. Problems are part of the result, never thrown.
 */
export async function esxStatus(root: string): Promise<StatusEsxDepot[]> {
  const result = await verifyEsx(root).catch(() => undefined);
  if (!result) return [];
  const errors = result.findings.filter((f) => f.severity === 'error' && f.id !== 'esx.depot.none');
  return result.depots.map((depot) => {
    const mine = errors.filter((f) => !depot.folder || f.path === undefined || f.path.startsWith(`${depot.folder}/`));
    return {
      folder: depot.folder,
      kind: depot.kind,
      index: depot.index,
      ok: mine.length === 0,
      vibs: depot.stats.vibs,
      present: depot.stats.present,
      products: depot.products.map((p) => ({
        productId: p.productId || p.metadata,
        version: p.version,
        state: p.state,
        words: describeProductState(p),
        vibs: p.vibs,
        present: p.present,
        components: p.components.length,
      })),
      problems: mine.slice(0, PROBLEMS_SHOWN).map((f) => f.message),
    };
  });
}
