/** A vendor of a root index: where its vendor index is, and what content it declares. */
export interface EsxVendor {
  name: string;
  code: string;
  /** Depot-relative path of its vendor index. */
  index: string;
}

/** One `<metadata>` of a vendor index: a product and version, and the metadata zip that describes it. */
export interface EsxProduct {
  vendor: string;
  productId: string;
  version: string;
  channels: string[];
  /** Depot-relative path of the metadata zip. */
  metadata: string;
}

/** A VIB file as a metadata zip lists it. */
export interface EsxVib {
  /** Depot-relative path. */
  path: string;
  id?: string;
  size?: number;
  sha256?: string;
}

/** A bulletin; from ESXi 7 a component with its name and version. */
export interface EsxComponent {
  bulletin: string;
  name?: string;
  version?: string;
  vibIds: string[];
}

/** What a metadata zip lists. */
export interface EsxMetadata {
  /** Depot-relative path of the zip. */
  path: string;
  vibs: EsxVib[];
  components: EsxComponent[];
}
