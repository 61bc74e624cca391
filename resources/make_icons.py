"""Draws the MemStrata app icon (stacked strata layers) as SVG, PNGs, .ico and .icns.

    python resources/make_icons.py          (needs Pillow; writes into resources/)

The SVG and the bitmaps come from the same geometry below, on a 256-unit canvas. The
bitmaps are drawn at 8x and downsampled, so edges are anti-aliased at every size.
"""

from __future__ import annotations

import io
import math
import struct
from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
SIZES = (16, 32, 48, 64, 128, 256)           # PNGs written to icons/
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_TYPES = {                               # OSType -> pixel size (PNG payloads)
    "icp4": 16, "icp5": 32, "icp6": 64, "ic07": 128, "ic08": 256, "ic09": 512, "ic10": 1024,
    "ic11": 32, "ic12": 64, "ic13": 256, "ic14": 512,
}

BACKGROUND = "#17212e"
LAYERS = (  # bottom to top: (centre y, fill)
    (160, "#1f6f8b"),
    (128, "#2fa3bf"),
    (96, "#7fe0cf"),
)
CX, HALF_W, HALF_H = 128, 84, 40   # each layer is a flat diamond (an isometric slab)
GAP = 7                            # background-coloured margin between layers
BOX = (16, 16, 240, 240)
RADIUS = 52


def diamond(cy: float, scale: float = 1.0) -> list[tuple[float, float]]:
    w, h = HALF_W * scale, HALF_H * scale
    return [(CX, cy - h), (CX + w, cy), (CX, cy + h), (CX - w, cy)]


def gap_scale() -> float:
    # distance from a diamond's centre to its edges; grow it by GAP along the normals
    d = HALF_W * HALF_H / math.hypot(HALF_W, HALF_H)
    return 1 + GAP / d


def svg() -> str:
    def pts(p):
        return " ".join(f"{x:.2f},{y:.2f}" for x, y in p)

    x0, y0, x1, y1 = BOX
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" '
        'viewBox="0 0 256 256">',
        "  <title>MemStrata</title>",
        f'  <rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="{RADIUS}" '
        f'fill="{BACKGROUND}"/>',
    ]
    for cy, fill in LAYERS:
        parts.append(f'  <polygon points="{pts(diamond(cy, gap_scale()))}" '
                     f'fill="{BACKGROUND}"/>')
        parts.append(f'  <polygon points="{pts(diamond(cy))}" fill="{fill}"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def render(size: int) -> Image.Image:
    ss = 8
    big = size * ss
    k = big / 256
    img = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    x0, y0, x1, y1 = BOX
    d.rounded_rectangle((x0 * k, y0 * k, x1 * k, y1 * k), radius=RADIUS * k, fill=BACKGROUND)
    for cy, fill in LAYERS:
        d.polygon([(x * k, y * k) for x, y in diamond(cy, gap_scale())], fill=BACKGROUND)
        d.polygon([(x * k, y * k) for x, y in diamond(cy)], fill=fill)
    return img.resize((size, size), Image.LANCZOS)


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def icns(images: dict[int, Image.Image]) -> bytes:
    """An .icns of PNG payloads (macOS 10.7+ reads these for every type used here)."""
    chunks = b""
    for ostype, px in ICNS_TYPES.items():
        data = png_bytes(images[px])
        chunks += ostype.encode("ascii") + struct.pack(">I", len(data) + 8) + data
    return b"icns" + struct.pack(">I", len(chunks) + 8) + chunks


def main() -> None:
    (HERE / "memstrata.svg").write_text(svg())
    icons = HERE / "icons"
    icons.mkdir(exist_ok=True)
    images = {px: render(px) for px in {*SIZES, *ICO_SIZES, *ICNS_TYPES.values()}}
    for px in SIZES:
        images[px].save(icons / f"memstrata-{px}.png", optimize=True)
    images[256].save(HERE / "memstrata.ico", sizes=[(s, s) for s in ICO_SIZES],
                     append_images=[images[s] for s in ICO_SIZES if s != 256])
    (HERE / "memstrata.icns").write_bytes(icns(images))
    print("wrote memstrata.svg, memstrata.ico, memstrata.icns, icons/memstrata-{"
          + ",".join(map(str, SIZES)) + "}.png")


if __name__ == "__main__":
    main()
