export { ESX_DEMO_DEFAULTS, type EsxDemoOptions, type EsxDemoResult, makeEsxDemo } from './demo.js';
export { type MetadataEntry, parseRootIndex, parseVendorIndex, rootIndexXml, type VendorEntry, vendorIndexXml } from './indexes.js';
export type { EsxComponent, EsxMetadata, EsxProduct, EsxVendor, EsxVib } from './model.js';
export { describeProductState, type EsxProductState, type EsxProductStatus } from './status.js';
export { type EsxDepotReport, type EsxVerifyOptions, type EsxVerifyResult, verifyEsx } from './verify.js';
