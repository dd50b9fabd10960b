// The depot tree: building, verifying, demo depots, the catalog and its signature, the metadata archives.
export { buildDepot, BUILD_OPERATION, type BuildOptions, type BuildReport, type BinaryEntry } from './build.js';
export {
  parseCatalog,
  catalogBinaries,
  catalogRelease,
  CatalogError,
  type Catalog,
  type CatalogBinary,
  type CatalogBundle,
  type CatalogReading,
} from './catalog.js';
export { readCatalogEntries, type CatalogEntry } from './catalog-entries.js';
export { readManifestReleases, type ManifestRelease } from './manifest-releases.js';
export { releaseOfVersion } from './versions.js';
export { compareVersions } from '../util/versions.js';
export { makeDemoDepot, DEMO_OPERATION, DEFAULT_DEMO_BINARY_SIZE, demoVersion, demoFileNames, type DemoOptions, type DemoResult } from './demo.js';
export { hclDate, hclAgeDays, hclTimestamps, checkHclContent, type HclTimes } from './hcl.js';
export { readMetadata, isMetadataPath, type MetadataFiles, type MetadataSource } from './metadata.js';
export { suggestComponent } from './names.js';
export { placeFile, PLACE_MODES, stateFileFor, type PlaceMode, type PlaceResult, type VerifiedState } from './place.js';
export { catalogSchema, hclAllSchema, hclLastUpdatedSchema, signatureSchema, SIGNATURE_FORMAT } from './schemas.js';
export {
  ensureSigningKey,
  signCatalog,
  parseSignatureFile,
  verifyCatalogSignature,
  SIGNING_KEY_FILE,
  SIGNING_PUBLIC_FILE,
  type SignatureFile,
  type SignatureVerdict,
  type SigningKeyPaths,
} from './signature.js';
export { verifyDepot, type VerifyOptions, type VerifyResult } from './verify.js';
export { planReleases, type ReleaseBinary, type ReleasePlan, type ReleasePlans } from './release-plan.js';
export {
  judgeReleases,
  type OtherBuild,
  type ReleaseFileProblem,
  type ReleaseJudgement,
  type ReleaseState,
  type ReleaseVerdict,
  type LeftOutFile,
  type SeenFile,
} from './release-status.js';
export { readSelection, recordSelection, selectionOf, selectionFileFor, type Choice, type DepotSelection } from './selection.js';
export { listUpgradeMetadata, upgradeMetadataPaths, isUpgradeMetadataPath } from './upgrade-metadata.js';
