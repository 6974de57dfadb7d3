"""A dependency-free PNG timeline of who led (zlib + struct only, a built-in 3x5 pixel font).

timeline_png(path, rows, faults, overlaps, t0, t1, title)
  rows     [(label, [(start, end, colour)])]   bars, e.g. one row per agent plus "no leader"
  faults   [(start, end, kind)]                drawn in a row of their own, coloured by kind
  overlaps [(start, end)]                      magenta bands across every row
Long runs are cut into strips of at most `strip` seconds, one under the other.
"""

import struct
import zlib

FONT = {
    "0": "### #.# #.# #.# ###", "1": ".#. ##. .#. .#. ###", "2": "### ..# ### #.. ###",
    "3": "### ..# ### ..# ###", "4": "#.# #.# ### ..# ..#", "5": "### #.. ### ..# ###",
    "6": "### #.. ### #.# ###", "7": "### ..# ..# .#. .#.", "8": "### #.# ### #.# ###",
    "9": "### #.# ### ..# ###", "A": ".#. #.# ### #.# #.#", "B": "##. #.# ##. #.# ##.",
    "C": ".## #.. #.. #.. .##", "D": "##. #.# #.# #.# ##.", "E": "### #.. ##. #.. ###",
    "F": "### #.. ##. #.. #..", "G": ".## #.. #.# #.# .##", "H": "#.# #.# ### #.# #.#",
    "I": "### .#. .#. .#. ###", "J": "..# ..# ..# #.# .#.", "K": "#.# #.# ##. #.# #.#",
    "L": "#.. #.. #.. #.. ###", "M": "#.# ### ### #.# #.#", "N": "##. #.# #.# #.# #.#",
    "O": ".#. #.# #.# #.# .#.", "P": "##. #.# ##. #.. #..", "Q": ".#. #.# #.# ##. .##",
    "R": "##. #.# ##. #.# #.#", "S": ".## #.. .#. ..# ##.", "T": "### .#. .#. .#. .#.",
    "U": "#.# #.# #.# #.# ###", "V": "#.# #.# #.# #.# .#.", "W": "#.# #.# ### ### #.#",
    "X": "#.# #.# .#. #.# #.#", "Y": "#.# #.# .#. .#. .#.", "Z": "### ..# .#. #.. ###",
    "-": "... ... ### ... ...", ":": "... .#. ... .#. ...", ".": "... ... ... ... .#.",
    "/": "..# ..# .#. #.. #..", "_": "... ... ... ... ###", "=": "... ### ... ### ...",
    "(": ".#. #.. #.. #.. .#.", ")": ".#. ..# ..# ..# .#.", "%": "#.# ..# .#. #.. #.#",
    ",": "... ... ... .#. #..", "+": "... .#. ### .#. ...", " ": "... ... ... ... ...",
    ">": "#.. .#. ..# .#. #..", "<": "..# .#. #.. .#. ..#", "#": "#.# ### #.# ### #.#",
}

PALETTE = [(31, 119, 180), (44, 160, 44), (255, 127, 14), (148, 103, 189), (140, 86, 75),
           (23, 190, 207), (188, 189, 34), (127, 127, 127), (214, 39, 40), (227, 119, 194)]
FAULT_COLOURS = {
    "kill": (214, 39, 40), "stop": (148, 103, 189), "term": (255, 127, 14),
    "apiserver-restart": (31, 119, 180), "etcd-restart": (23, 190, 207),
    "apiserver-pause": (44, 160, 44), "partition": (0, 0, 0), "latency": (140, 86, 75),
    "drip": (188, 189, 34), "reset": (227, 119, 194), "conflicts": (127, 127, 127),
    "isolate-leasehold": (90, 0, 90),
}
WHITE, BLACK, GREY, LIGHT = (255, 255, 255), (0, 0, 0), (170, 170, 170), (235, 235, 235)
MAGENTA, RED = (255, 0, 255), (230, 60, 60)


class Canvas:
    def __init__(self, w, h, bg=WHITE):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def rect(self, x0, y0, x1, y1, c):
        x0, x1 = max(0, int(x0)), min(self.w, int(x1))
        y0, y1 = max(0, int(y0)), min(self.h, int(y1))
        if x1 <= x0 or y1 <= y0:
            return
        row = bytes(c) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(row)] = row

    def text(self, x, y, s, c=BLACK, scale=2):
        for ch in s.upper():
            g = FONT.get(ch, FONT["#"]).split()
            for ry, bits in enumerate(g):
                for rx, b in enumerate(bits):
                    if b == "#":
                        self.rect(x + rx * scale, y + ry * scale, x + (rx + 1) * scale,
                                  y + (ry + 1) * scale, c)
            x += 4 * scale
        return x

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(kind, data):
            c = struct.pack(">I", len(data)) + kind + data
            return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
            f.write(chunk(b"IEND", b""))


def _tick_step(seconds, width):
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600):
        if seconds / step * 60 <= width:
            return step
    return 1200


def timeline_png(path, rows, faults, overlaps, t0, t1, title="", strip=300.0, width=1500):
    left, row_h, gap = 150, 16, 3
    total = max(1e-3, t1 - t0)
    nstrips = max(1, -(-int(total * 1000) // int(strip * 1000)))
    # Faults that overlap in time go to separate lanes of the fault row.
    lanes, lane_end = [], []
    for a, b, kind in sorted(faults):
        for i, e in enumerate(lane_end):
            if a >= e:
                lane_end[i] = b
                lanes.append((a, b, kind, i))
                break
        else:
            lane_end.append(b)
            lanes.append((a, b, kind, len(lane_end) - 1))
    nlanes = max(1, len(lane_end))
    lane_h = max(4, (row_h - 2) // nlanes)
    span = total if nstrips == 1 else strip
    nrows = len(rows) + 1
    strip_h = 24 + nrows * (row_h + gap) + 22
    legend_h = 30 + 14 * ((len(FAULT_COLOURS) + 3) // 4)
    H = 30 + nstrips * strip_h + legend_h
    W = left + width + 20
    cv = Canvas(W, H)
    cv.text(10, 8, title[:200], BLACK, 2)
    scale = width / span
    for k in range(nstrips):
        s0 = t0 + k * span
        s1 = min(t1, s0 + span)
        y = 30 + k * strip_h + 10

        def X(t):
            return left + (t - s0) * scale
        step = _tick_step(span, width)
        tt = (int((s0 - t0) // step) + 1) * step if (s0 - t0) % step else (s0 - t0)
        ytop, ybot = y, y + nrows * (row_h + gap)
        while t0 + tt <= s1 + 1e-9:
            x = X(t0 + tt)
            cv.rect(x, ytop, x + 1, ybot, LIGHT)
            cv.text(x - 6, ybot + 4, f"{int(tt)}S", GREY, 2)
            tt += step
        for r, (label, bars) in enumerate(rows):
            yy = y + r * (row_h + gap)
            cv.text(8, yy + 3, label[:17], BLACK, 2)
            cv.rect(left, yy + row_h - 1, X(s1), yy + row_h, LIGHT)
            for a, b, c in bars:
                if b < s0 or a > s1:
                    continue
                xa, xb = X(max(a, s0)), X(min(b, s1))
                cv.rect(xa, yy, max(xb, xa + 1), yy + row_h - 2, c)
        yy = y + len(rows) * (row_h + gap)
        cv.text(8, yy + 3, "FAULTS", BLACK, 2)
        for a, b, kind, lane in lanes:
            if b < s0 or a > s1:
                continue
            c = FAULT_COLOURS.get(kind, GREY)
            xa, xb = X(max(a, s0)), X(min(b, s1))
            cv.rect(xa, yy + lane * lane_h, max(xb, xa + 2), yy + (lane + 1) * lane_h, c)
            cv.rect(xa, ytop, xa + 1, yy, (200, 200, 200))
        for a, b in overlaps:
            if b < s0 or a > s1:
                continue
            xa, xb = X(max(a, s0)), X(min(b, s1))
            cv.rect(xa - 1, ytop, max(xb, xa + 1) + 1, ybot, MAGENTA)
    y = 30 + nstrips * strip_h + 8
    cv.text(8, y, "FAULTS:", BLACK, 2)
    for i, (kind, c) in enumerate(FAULT_COLOURS.items()):
        xx = left + (i % 4) * 330
        yy = y + (i // 4) * 14
        cv.rect(xx, yy, xx + 20, yy + 10, c)
        cv.text(xx + 26, yy, kind, BLACK, 2)
    cv.png(path)
