// Types for the part of zip-stream (archiver's ZIP engine) that zip-archive.ts extends.
declare module 'zip-stream' {
  import { Transform } from 'node:stream';
  import type { ZlibOptions } from 'node:zlib';

  namespace ZipStream {
    /** compress-commons' ZipArchiveEntry. */
    interface Entry {
      getMethod(): number;
      setCrc(crc: number): void;
      setSize(size: number): void;
      setCompressedSize(size: number): void;
    }
    type EntryCallback = (error: Error | null, entry?: Entry) => void;
  }

  class ZipStream extends Transform {
    constructor(options?: object);
    options: { zlib: ZlibOptions };
    entry(source: Buffer, data: object, callback: ZipStream.EntryCallback): this;
    finalize(): void;
    protected _appendBuffer(entry: ZipStream.Entry, source: Buffer, callback: ZipStream.EntryCallback): void;
    protected _writeLocalFileHeader(entry: ZipStream.Entry): void;
    protected _afterAppend(entry: ZipStream.Entry): void;
  }
  export default ZipStream;
}
