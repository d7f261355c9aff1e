#!/usr/bin/env python3
"""mlpt_tool.py — rewrite .mlpt traces for fuzzing (docs/trace-format.md).

  mlpt_tool.py raw IN OUT      every zstd chunk stored uncompressed (RAW codec)
                               so the fuzzer mutates the payloads themselves
  mlpt_tool.py fixcrc IN OUT   recompute the header and chunk checksums
  mlpt_tool.py craft NAME OUT  write the crafted trace NAME (one per limit of
                               the reader, README "Reading untrusted
                               traces"; kept under regressions/ as NAME.mlpt)

The libFuzzer build skips checksum checks (FUZZING_BUILD_MODE_UNSAFE_FOR_
PRODUCTION), so a crashing input it finds usually has wrong checksums; run
`fixcrc` on it before keeping it under regressions/, so the normal build
(which checks them) reaches the same code. Bytes after the last complete
chunk are kept as they are. Needs the `zstd` command for `raw`.
"""
import struct
import subprocess
import sys

MAGIC = b"\x89MLPT\r\n\x1a"
CHUNK_MAGIC = 0x4B434C4D
_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _TABLE.append(c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def rewrite(data, to_raw):
    if len(data) < 16 or data[:8] != MAGIC:
        return data
    hlen = struct.unpack_from("<I", data, 12)[0]
    if 16 + hlen + 4 > len(data):
        return data
    area = data[16:16 + hlen]
    out = bytearray(data[:16 + hlen]) + struct.pack("<I", crc32c(area))
    off = 16 + hlen + 4
    while off + 20 <= len(data):
        magic, typ, codec, _res, raw, stored, _crc = struct.unpack_from("<IBBHIII", data, off)
        if magic != CHUNK_MAGIC or off + 20 + stored > len(data):
            break
        payload = bytes(data[off + 20:off + 20 + stored])
        if to_raw and codec == 1:
            dec = subprocess.run(["zstd", "-d", "-c", "-q"], input=payload, capture_output=True)
            if dec.returncode == 0 and len(dec.stdout) == raw:
                payload, codec, stored = dec.stdout, 0, raw
        hdr = struct.pack("<BBHII", typ, codec, _res, raw, stored)
        crc = crc32c(payload, crc32c(hdr))
        out += struct.pack("<I", magic) + hdr + struct.pack("<I", crc) + payload
        off += 20 + len(data[off + 20:off + 20 + (struct.unpack_from("<I", data, off + 12)[0])])
    out += data[off:]
    return bytes(out)


# ---- crafted traces ----------------------------------------------------------

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def text(b):
    b = b.encode() if isinstance(b, str) else b
    return varint(len(b)) + b


def kvs(pairs):
    return varint(len(pairs)) + b"".join(text(k) + text(v) for k, v in pairs)


def header(pairs, area=None):
    area = kvs(pairs) if area is None else area
    return MAGIC + struct.pack("<II", 2, len(area)) + area + struct.pack("<I", crc32c(area))


def chunk(typ, payload, zstd=False, raw_len=None):
    stored = payload
    if zstd:
        stored = subprocess.run(["zstd", "-19", "-c", "-q"], input=payload, capture_output=True, check=True).stdout
    raw = len(payload) if raw_len is None else raw_len
    hdr = struct.pack("<BBHII", typ, 1 if zstd else 0, 0, raw, len(stored))
    return struct.pack("<I", CHUNK_MAGIC) + hdr + struct.pack("<I", crc32c(stored, crc32c(hdr))) + stored


def event(typ, name=0, dts=0, a=0, b=0, cat=0):
    flags = (1 if cat else 0) | (2 if a else 0) | (4 if b else 0)
    out = bytes([typ, flags]) + (bytes([cat]) if cat else b"") + varint(name) + varint(dts << 1)
    return out + (varint(a) if a else b"") + (varint(b) if b else b"")


def block(tid, events):
    return varint(tid) + varint(len(events)) + b"".join(events)


def strings(table):
    return chunk(1, b"".join(varint(i) + text(t) for i, t in table.items()))


def steps(n, tid=1):
    """n steps of 1 ms on thread tid, as one EVENTS chunk."""
    ev = []
    for i in range(n):
        ev += [event(5, dts=10**9 if i == 0 else 1000, a=i), event(6, dts=10**6, a=i)]
    return chunk(2, block(tid, ev))


FOOTER = chunk(5, kvs([("events_written", "0")]))
ZEROS_8MIB = b"\0" * (8 << 20)


def craft(name):
    hdr = header([("program", name), ("pid", "1")])
    if name == "header_area_past_1mib":  # the length field alone is refused
        return MAGIC + struct.pack("<II", 2, (1 << 20) + 1) + b"\0" * 64
    if name == "chunk_past_256mib":  # corrupt: past the format's bound
        return hdr + chunk(200, b"\0" * 16, raw_len=300 << 20)[:20] + b"\0" * 16
    if name == "chunk_past_8mib":  # more than mlprof writes in one chunk
        return hdr + steps(2) + chunk(200, ZEROS_8MIB + b"\0", zstd=True) + FOOTER
    if name == "decompression_past_the_cap":  # 9 legal chunks, 72 MiB: past the fuzz run's 64 MiB
        return hdr + steps(2) + chunk(200, ZEROS_8MIB, zstd=True) * 9 + FOOTER
    if name == "range_nesting_past_4096":  # the analyzer keeps 4096 open ranges per thread
        ev = [event(1, 1, dts=10**9 if i == 0 else 1) for i in range(5000)]
        ev += [event(2, 1, dts=1) for _ in range(5000)]
        return hdr + strings({1: "deep"}) + steps(2) + chunk(2, block(2, ev), zstd=True) + FOOTER
    if name == "stack_depth_past_256":  # one stack of 300 frames: the chunk is skipped
        body = varint(1) + varint(1) + varint(300) + varint(2 * 0x400000) + varint(2) * 299
        return hdr + steps(2) + chunk(6, body) + FOOTER
    if name == "threads_30k":  # 30 000 thread ids, each a range and a counter
        ev = b"".join(block(t, [event(1, 1, dts=10**9, cat=1), event(4, 2, dts=1000, a=0x4059000000000000),
                                event(2, 1, dts=1000 * (t % 7 + 1))]) for t in range(1000, 31000))
        return hdr + strings({1: "work", 2: "cpuctr/cpu_ns"}) + steps(10) + chunk(2, ev, zstd=True) + FOOTER
    if name == "newlines_in_names":  # a name that would start lines of its own
        hdr = header([("program", "nl\nFAKE program"), ("pid", "1"), ("hostname", "h\nFAKE host")])
        ev = []
        for i in range(25):
            ev += [event(5, dts=10**9 if i == 0 else 1000, a=i), event(1, 1, dts=100, cat=1),
                   event(2, 1, dts=5 * 10**6 + (i % 5 == 4) * 10**7), event(6, dts=100, a=i)]
        thr = chunk(3, varint(1) + text("thr\nFAKE thread") + varint(0) + b"\0")
        return hdr + strings({1: "fwd\nFindings (0)\n  none"}) + thr + chunk(2, block(1, ev)) + FOOTER
    raise SystemExit("mlpt_tool.py: no crafted trace named '%s'" % name)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("raw", "fixcrc", "craft"):
        sys.stderr.write(__doc__)
        return 1
    if sys.argv[1] == "craft":
        data = craft(sys.argv[2])
        with open(sys.argv[3], "wb") as f:
            f.write(data)
        return 0
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    with open(sys.argv[3], "wb") as f:
        f.write(rewrite(data, sys.argv[1] == "raw"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
