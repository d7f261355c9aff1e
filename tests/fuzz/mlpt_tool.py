#!/usr/bin/env python3
"""mlpt_tool.py — rewrite .mlpt traces for fuzzing (docs/trace-format.md).

  mlpt_tool.py raw IN OUT      every zstd chunk stored uncompressed (RAW codec)
                               so the fuzzer mutates the payloads themselves
  mlpt_tool.py fixcrc IN OUT   recompute the header and chunk checksums

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


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("raw", "fixcrc"):
        sys.stderr.write(__doc__)
        return 1
    with open(sys.argv[2], "rb") as f:
        data = f.read()
    with open(sys.argv[3], "wb") as f:
        f.write(rewrite(data, sys.argv[1] == "raw"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
