// The chunked I/O is shared with depot build, one floor down; pack, unpack and mirror keep importing it from here.
export { CHUNK_BYTES, PositionalWriter, readChunks, writevAt } from '../util/chunked-io.js';
