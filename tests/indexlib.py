"""Reading an index's packed columns from Python: section bodies (zstd frames against the index's
dictionary, common/compress.c) and read-next candidates (common/next_rows.c).

Shared by tests/indexer and tests/relevance. zstd is reached through ctypes, in the libzstd.so.1
that the programs themselves link to.
"""
import ctypes
import ctypes.util
import struct

STORED_RAW, STORED_ZSTD, STORED_CHUNKS = 0, 1, 2

_zstd = ctypes.CDLL(ctypes.util.find_library('zstd') or 'libzstd.so.1')
_zstd.ZSTD_createDCtx.restype = ctypes.c_void_p
_zstd.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
_zstd.ZSTD_createDDict.restype = ctypes.c_void_p
_zstd.ZSTD_createDDict.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_freeDDict.argtypes = [ctypes.c_void_p]
_zstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
_zstd.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_decompress_usingDDict.restype = ctypes.c_size_t
_zstd.ZSTD_decompress_usingDDict.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                             ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p]
_zstd.ZSTD_decompressDCtx.restype = ctypes.c_size_t
_zstd.ZSTD_decompressDCtx.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.c_char_p, ctypes.c_size_t]


class Bodies:
    """Decompresses the section bodies of one index (an sqlite3 connection to it)."""

    def __init__(self, db):
        row = db.execute("SELECT dict FROM dictionaries WHERE name = 'section_body'").fetchone()
        self.dctx = _zstd.ZSTD_createDCtx()
        self.ddict = _zstd.ZSTD_createDDict(row[0], len(row[0])) if row else None

    def __del__(self):
        _zstd.ZSTD_freeDCtx(self.dctx)
        if self.ddict:
            _zstd.ZSTD_freeDDict(self.ddict)

    def text(self, stored):
        """The body stored as stored (bytes), as a str; raises ValueError when it does not
        decompress."""
        return self.raw(stored).decode('utf-8')

    def raw(self, stored):
        """The bytes of the body stored as stored (common/compress.c: raw, one zstd frame, or
        chunks, each a stored text, after their list); raises ValueError when it does not
        decompress."""
        if not stored:
            return b''
        if stored[0] == STORED_CHUNKS:
            n, i = read_varint(stored, 1)
            sizes = []
            for _ in range(n):
                _units, i = read_varint(stored, i)
                length, i = read_varint(stored, i)
                size, i = read_varint(stored, i)
                sizes.append((length, size))
            parts = []
            for length, size in sizes:
                part = self.raw(stored[i:i + size])
                if len(part) != length or stored[i] == STORED_CHUNKS:
                    raise ValueError('a chunk does not decompress to its length')
                parts.append(part)
                i += size
            if i != len(stored):
                raise ValueError('the chunks do not fill the text')
            return b''.join(parts)
        if stored[0] == STORED_RAW:
            return bytes(stored[1:])
        if stored[0] != STORED_ZSTD:
            raise ValueError(f'unknown marker {stored[0]}')
        frame = bytes(stored[1:])
        size = _zstd.ZSTD_getFrameContentSize(frame, len(frame))
        if size >= 2**63:
            raise ValueError('not a whole zstd frame')
        out = ctypes.create_string_buffer(size + 1)
        if self.ddict:
            got = _zstd.ZSTD_decompress_usingDDict(self.dctx, out, size + 1, frame, len(frame),
                                                   self.ddict)
        else:
            got = _zstd.ZSTD_decompressDCtx(self.dctx, out, size + 1, frame, len(frame))
        if _zstd.ZSTD_isError(got) or got != size:
            raise ValueError('does not decompress')
        return out.raw[:size]


def read_varint(blob, i):
    """One little-endian 7-bit varint of blob at i: (value, index after it)."""
    v, shift = 0, 0
    while True:
        b = blob[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


# common/next_rows.h: signal codes, and the flags of a row's first byte
SIGNALS = ['guide_next', 'guide_prev', 'guide_start', 'link_out', 'link_in', 'builds_on', 'prereq',
           'same_topic', 'topic_member', 'similar', 'graph', 'guide_after',
           'list_next', 'topic_next', 'number_next', 'topic_after']
ROW_CODE_MASK, ROW_WEIGHT_ONE, ROW_DETAIL = 0x3f, 0x40, 0x80


def next_rows(db, src=None):
    """Every read-next candidate of the index (of page src only, when given), as (src, seq, dst,
    signal, weight, detail) with seq numbering a page's rows from 0 in the order stored. A
    "similar" row's detail (similar_terms ids) is given as its reason reads it: "a, b, c"."""
    names = dict(db.execute('SELECT id, name FROM similar_terms'))
    sql = 'SELECT src, rows FROM next_candidates' + (' WHERE src = ?' if src is not None else '')
    for s, blob in db.execute(sql + ' ORDER BY src', () if src is None else (src,)):
        i, seq = 0, 0
        while i < len(blob):
            head = blob[i]
            i += 1
            dst, i = read_varint(blob, i)
            weight = 1.0
            if not head & ROW_WEIGHT_ONE:
                weight = struct.unpack_from('<d', blob, i)[0]
                i += 8
            detail = ''
            code = head & ROW_CODE_MASK
            if head & ROW_DETAIL:
                n, i = read_varint(blob, i)
                raw = blob[i:i + n]
                i += n
                if code == SIGNALS.index('similar'):
                    ids, k = [], 0
                    while k < len(raw):
                        v, k = read_varint(raw, k)
                        ids.append(v)
                    detail = ', '.join(names[v] for v in ids if v in names)
                else:
                    detail = raw.decode('utf-8')
            yield s, seq, dst, SIGNALS[code] if code < len(SIGNALS) else str(code), weight, detail
            seq += 1
