#!/usr/bin/python3
"""Extracts "Pride and Prejudice" from Debian's r-cran-janeaustenr package into
demo/gpt/pride-and-prejudice.txt, the text that train_char_gpt.py trains on.

The package (MIT; the novels themselves are public domain, from Project Gutenberg) keeps
the six novels as R character vectors in an R lazy-load database (data/Rdata.rdb, indexed
by data/Rdata.rdx). Reading it needs no R: the index is a gzip'd R serialization that gives
each object's (offset, length) in the .rdb; an entry is a 4-byte big-endian length and a
zlib stream holding an XDR serialization of a STRSXP (one CHARSXP per line of the book).
    apt-get install r-cran-janeaustenr    (or: apt-get download + dpkg-deb -x into a folder)
    /usr/bin/python3 demo/gpt/extract_austen.py [package root, default /]
"""
import gzip
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "usr/lib/R/site-library/janeaustenr/data"
BOOK = "prideprejudice"


class XdrReader:
    """Just enough of R's XDR serialization (format 3) for the index list and a STRSXP."""

    def __init__(self, raw):
        if raw[:2] != b"X\n":
            raise ValueError("not an XDR R serialization")
        self.raw, self.pos = raw, 2
        version = self.int()
        self.int(), self.int()  # writer and minimal reader versions
        if version == 3:
            self.bytes(self.int())  # native encoding name
        self.symbols = []

    def int(self):
        (v,) = struct.unpack_from(">i", self.raw, self.pos)
        self.pos += 4
        return v

    def bytes(self, n):
        b = self.raw[self.pos:self.pos + n]
        self.pos += n
        return b

    def item(self):
        flags = self.int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind == 0xFE:  # NILVALUE_SXP
            return None
        if kind == 0xFF:  # REFSXP: an earlier symbol
            return self.symbols[(flags >> 8) - 1]
        if kind == 1:  # SYMSXP
            name = self.item()
            self.symbols.append(name)
            return name
        if kind == 9:  # CHARSXP
            n = self.int()
            return None if n == -1 else self.bytes(n).decode("utf-8")
        if kind == 2:  # LISTSXP (pairlist: attributes)
            attrs = self.item() if has_attr else None
            tag = self.item() if has_tag else None
            head = self.item()
            rest = self.item()
            return [(tag, head)] + (rest or [])
        if kind in (10, 13, 16, 19):  # LGLSXP, INTSXP, STRSXP, VECSXP
            n = self.int()
            if kind in (10, 13):
                out = list(struct.unpack_from(f">{n}i", self.raw, self.pos))
                self.pos += 4 * n
            else:
                out = [self.item() for _ in range(n)]
            attrs = dict(self.item()) if has_attr else {}
            return (out, attrs) if attrs else out
        raise ValueError(f"unhandled R SEXP type {kind}")


def read_book(root, name):
    folder = os.path.join(root, DATA)
    with open(os.path.join(folder, "Rdata.rdx"), "rb") as f:
        index = XdrReader(gzip.decompress(f.read())).item()
    lists = dict(zip(index[1]["names"], index[0]))
    variables, names = lists["variables"]
    offset, length = dict(zip(names["names"], variables))[name]
    with open(os.path.join(folder, "Rdata.rdb"), "rb") as f:
        f.seek(offset)
        entry = f.read(length)
    (size,) = struct.unpack(">I", entry[:4])
    raw = zlib.decompress(entry[4:])
    assert len(raw) == size, "truncated entry"
    return XdrReader(raw).item()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "/"
    lines = read_book(root, BOOK)
    text = "\n".join(line or "" for line in lines).strip() + "\n"
    out = os.path.join(HERE, "pride-and-prejudice.txt")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{out}: {len(lines)} lines, {len(text)} characters, {len(set(text))} distinct")


if __name__ == "__main__":
    main()
