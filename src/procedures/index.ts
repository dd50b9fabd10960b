// Day-two procedures over several capabilities: moving a depot to another CA; vCenters among the consumers.
export { moveDepotCa } from './ca-move/move.js';
export { CA_MOVE_STATE_FILE } from './ca-move/plan.js';
export { CA_MOVE_WAITS, servedLeafSha256 } from './ca-move/switch.js';
export type { CaMoveOptions, CaMoveReport, CaMovePlan, ConsumerRow, PhaseReport, PhaseName, ServedDepot } from './ca-move/types.js';
export { withVcenter, resyncVcenterDepots, type VcenterResync } from './vcenters/session.js';
