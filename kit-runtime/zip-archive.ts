/// <reference path="./zip-stream.d.ts" />
/**
 * archiver's ZIP writer with one change: a small entry is deflated on the calling thread.
 *
 * Stock archiver gives every entry its own async zlib stream. For a file of a few kilobytes,
 * the hops to libuv's thread pool and back cost several times the compression itself. A bundle of
 * a hundred source files spent most of its time there: 8–9 ms of hops against about 1 ms of
 * deflating on this machine. So an entry of at most INLINE_DEFLATE_LIMIT bytes is deflated with
 * `zlib.deflateRawSync`, at the archive's zlib options, and written the way compress-commons
 * writes a stored entry. Larger entries keep the stock stream, so that no single entry holds the
 * event loop for long. archiver yields (setImmediate) between entries either way.
 *
 * Everything else is archiver's: the queue, zip-stream's entry normalisation and compress-commons'
 * local headers, data descriptors, ZIP64 and central directory. The bytes are the same as stock
 * archiver's for the same entries and options; bundle.test.ts checks this.
 */
import { deflateRawSync, crc32 } from 'node:zlib';
import { Archiver, type CoreOptions, type TransformOptions, type ZipOptions } from 'archiver';
import ZipStream from 'zip-stream';

/** Entries up to this size are deflated inline; about a millisecond of level-9 work at most. */
export const INLINE_DEFLATE_LIMIT = 64 * 1024;

const METHOD_DEFLATED = 8; // compress-commons' constant for the deflate method

class InlineDeflateZipStream extends ZipStream {
  override _appendBuffer(entry: ZipStream.Entry, source: Buffer, callback: ZipStream.EntryCallback): void {
    if (entry.getMethod() !== METHOD_DEFLATED || source.length === 0 || source.length > INLINE_DEFLATE_LIMIT) {
      super._appendBuffer(entry, source, callback);
      return;
    }
    let compressed: Buffer;
    try {
      compressed = deflateRawSync(source, this.options.zlib);
    } catch (error) {
      callback(error as Error);
      return;
    }
    entry.setCrc(crc32(source));
    entry.setSize(source.length);
    entry.setCompressedSize(compressed.length);
    this._writeLocalFileHeader(entry);
    this.write(compressed);
    this._afterAppend(entry);
    callback(null, entry);
  }
}

/** The members of archiver's core that its own ZipArchive sets up; see archiver/index.js. */
type ArchiverFormatSetup = {
  _format: string;
  _module: unknown;
  _supportsDirectory: boolean;
  _supportsSymlink: boolean;
  _modulePipe(): void;
};

/** archiver's zip plug-in (archiver/lib/plugins/zip.js), over the inline-deflating engine. */
class InlineDeflateZip {
  readonly engine: InlineDeflateZipStream;
  constructor(options: ZipOptions) {
    this.engine = new InlineDeflateZipStream({ comment: '', forceUTC: false, namePrependSlash: false, store: false, ...options });
  }
  append(source: Buffer, data: object, callback: ZipStream.EntryCallback) {
    this.engine.entry(source, data, callback);
  }
  finalize() {
    this.engine.finalize();
  }
  on(...args: Parameters<ZipStream['on']>) {
    return this.engine.on(...args);
  }
  pipe<T extends NodeJS.WritableStream>(destination: T) {
    return this.engine.pipe(destination);
  }
  unpipe(destination?: NodeJS.WritableStream) {
    return this.engine.unpipe(destination);
  }
}

/** A drop-in for archiver's ZipArchive whose small entries are deflated inline. */
export class BundleZipArchive extends Archiver {
  constructor(options: CoreOptions & TransformOptions & ZipOptions) {
    super(options);
    const setup = this as unknown as ArchiverFormatSetup;
    setup._format = 'zip';
    setup._module = new InlineDeflateZip(options);
    setup._supportsDirectory = true;
    setup._supportsSymlink = true;
    setup._modulePipe();
  }
}
