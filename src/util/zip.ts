import yauzl from 'yauzl';

// yauzl's callbacks as promises, for the readers of zip archives (the vendor's metadata archive,
// ESX metadata zips and offline bundles): entries are walked lazily, so that a hostile central
// directory is judged entry by entry before anything is decompressed.

/** Opens a zip file, or one held in memory, for a walk of its entries. */
export function openZip(source: string | Buffer): Promise<yauzl.ZipFile> {
  // autoClose off: the entries are read after the whole central directory has been checked.
  const options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false };
  return new Promise((resolvePromise, reject) => {
    const done = (err: Error | null, zip: yauzl.ZipFile) => (err ? reject(err) : resolvePromise(zip));
    if (typeof source === 'string') yauzl.open(source, options, done);
    else yauzl.fromBuffer(source, options, done);
  });
}

/** The next entry of the central directory, or undefined at its end. */
export function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolvePromise, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => (cleanup(), resolvePromise(entry));
    const onEnd = () => (cleanup(), resolvePromise(undefined));
    const onError = (err: Error) => (cleanup(), reject(err));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

export function readEntryData(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err) return reject(err);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('end', () => resolvePromise(Buffer.concat(chunks)));
    });
  });
}

/** The entry's bytes as a stream, for what is too large to hold (an offline bundle's VIBs). */
export function openEntryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolvePromise, reject) => {
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolvePromise(stream)));
  });
}
