// Day-two procedures over several capabilities: moving a depot to another CA.
export { moveDepotCa } from './ca-move/move.js';
export { CA_MOVE_STATE_FILE } from './ca-move/plan.js';
export { CA_MOVE_WAITS, servedLeafSha256 } from './ca-move/switch.js';
export type { CaMoveOptions, CaMoveReport, CaMovePlan, ConsumerRow, PhaseReport, PhaseName, ServedDepot } from './ca-move/types.js';
