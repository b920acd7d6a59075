#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks of noclobber's pictures, for tests/pictures.sh (stdlib only).

  pictures.py svg FILE        well-formed SVG: its namespace, a size, no
                              script or outside reference, text of 10 px
                              or more, a <title> on every mark, labels
                              apart in each column
  pictures.py size FILE       prints the SVG's width and height
  pictures.py html FILE       the report: a page whose inline SVGs pass
                              the same checks, nothing outside referred to
  pictures.py png FILE W H    a PNG of W x H pixels that is not blank:
                              its rows decoded (zlib, the five filters)
Exit 0 when it holds; otherwise 1 and the reason on stderr.
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def fail(why):
    sys.stderr.write("pictures.py: %s\n" % why)
    sys.exit(1)


def check_svg(root, name):
    if root.tag != SVG + "svg":
        fail("%s: the root is %s, not an SVG element" % (name, root.tag))
    for a in ("width", "height", "viewBox"):
        if a not in root.attrib:
            fail("%s: no %s" % (name, a))
    size = float(root.get("font-size", "0"))
    if size < 10:
        fail("%s: text of %s px" % (name, size))
    cols = {}
    for el in root.iter():
        tag = el.tag.replace(SVG, "")
        if tag in ("script", "foreignObject", "image", "use", "a"):
            fail("%s: a <%s> element" % (name, tag))
        for k, v in el.attrib.items():
            if "href" in k or k.startswith("on"):
                fail("%s: attribute %s" % (name, k))
            for ref in re.findall(r"url\(([^)]*)\)", v):
                if not ref.startswith("#"):
                    fail("%s: an outside reference %s" % (name, ref))
        if "font-size" in el.attrib and float(el.get("font-size")) < 10:
            fail("%s: text of %s px" % (name, el.get("font-size")))
        if tag == "rect" and el.get("fill") != "#fff" and \
                el.find(SVG + "title") is None and \
                float(el.get("width", "0")) == 150:
            fail("%s: a mapping's mark without a <title>" % name)
        if tag == "text" and el.get("x") in ("150", "334"):
            cols.setdefault(el.get("x"), []).append(float(el.get("y")))
    # Labels of one column are one line (13 px) apart at least.
    for x, ys in cols.items():
        ys.sort()
        for a, b in zip(ys, ys[1:]):
            if b - a < 12.9:
                fail("%s: labels at x=%s overlap (y %s and %s)" %
                     (name, x, a, b))
    return root


def svg(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail("%s: not well-formed XML: %s" % (path, e))
    check_svg(root, path)


def size(path):
    root = ET.parse(path).getroot()
    print(root.get("width"), root.get("height"))


def html(path):
    text = open(path, encoding="utf-8").read()
    if not text.startswith("<!DOCTYPE html>"):
        fail("%s: no HTML5 doctype" % path)
    if re.search(r"<script|<link|<img|<iframe|src=", text, re.I):
        fail("%s: a script or an outside reference" % path)
    svgs = re.findall(r"<svg .*?</svg>", text, re.S)
    for i, s in enumerate(svgs):
        try:
            check_svg(ET.fromstring(s), "%s, picture %d" % (path, i + 1))
        except ET.ParseError as e:
            fail("%s, picture %d: not well-formed: %s" % (path, i + 1, e))
    ids = re.findall(r' id="([^"]*)"', text)
    if len(ids) != len(set(ids)):
        fail("%s: an id given twice" % path)
    print(len(svgs))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png(path, want_w, want_h):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: not a PNG" % path)
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if (w, h) != (int(want_w), int(want_h)):
        fail("%s: %dx%d, not %sx%s" % (path, w, h, want_w, want_h))
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail("%s: depth %d, colour type %d: not read here" %
             (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours, inked = set(), 0
    # The rows of the head and the start of the column: enough to see.
    for y in range(min(h, 500)):
        f = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 255
        elif f == 2:
            row = bytearray((a + b) & 255 for a, b in zip(row, prev))
        elif f == 3:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + paeth(left, prev[i], up_left)) & 255
        for x in range(0, stride, bpp * 4):
            px = bytes(row[x:x + 3])
            colours.add(px)
            inked += px != b"\xff\xff\xff"
        prev = row
    if inked < 200 or len(colours) < 4:
        fail("%s: blank (%d pixels inked, %d colours)" %
             (path, inked, len(colours)))


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"svg": svg, "size": size, "html": html, "png": png}[cmd](*args)


if __name__ == "__main__":
    main()
