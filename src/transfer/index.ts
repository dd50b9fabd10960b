// Across the air gap: pack a depot into volumes, unpack them, mirror a served depot, prune and diff.
export { packDepot, type PackOptions, type PackReport } from './pack.js';
export { unpackDepot, type UnpackOptions, type UnpackReport, type VolumeReport, type VolumeState } from './unpack.js';
export { mirrorDepot, partialPathFor, type MirrorOptions, type MirrorReport } from './mirror.js';
export { mirrorEsx, type EsxMirrorOptions, type EsxMirrorReport } from './esx-mirror/index.js';
export { pruneDepot, type PruneCandidate, type PruneReport } from './prune.js';
export { diffDepots, type DiffBinary, type DiffReport, type DiffSide } from './diff.js';
export { releaseStatus, releaseVersions, type ReleaseStatus } from './releases.js';
export {
  parseManifest,
  planVolumes,
  volumeName,
  partName,
  type PackFile,
  type PackManifest,
  type PackPiece,
  type PackVolume,
  type TreeEntry,
} from './format.js';
export { listMembers, encodeHeader } from './tar.js';
