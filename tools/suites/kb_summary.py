#!/usr/bin/env python3
"""A built suite's conversion figures as Markdown: per level, converted of problems, the TorchScript
route taken, and every problem not converted with its reason.

    kb_summary.py SUITE_DIR [--device "what built it"]
"""

import argparse
import collections
import datetime
import json
import pathlib
import platform


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("--device", default=f"{platform.node()} (CPU)")
    a = ap.parse_args()
    doc = json.loads((pathlib.Path(a.suite) / "suite.json").read_text())
    print(f"# KernelBench suite conversion ({doc['name']})\n")
    print(f"Built with `kernrl suite add kernelbench` on {a.device}, torch {doc['torch']}, "
          f"{datetime.date.today().isoformat()}; figures by `tools/suites/kb_summary.py`.\n")
    print("| level | problems | converted | rate | scripted | traced | seconds (median) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    routes = collections.Counter((c["id"].split("_")[0], c["reference"]) for c in doc["converted"])
    secs = collections.defaultdict(list)
    for c in doc["converted"]:
        secs[c["id"].split("_")[0]].append(c.get("seconds", 0))
    total = conv = 0
    for level, c in sorted(doc["by_level"].items()):
        lv = f"L{level}"
        s = sorted(secs[lv])
        med = s[len(s) // 2] if s else 0
        print(f"| {level} | {c['problems']} | {c['converted']} | {100 * c['converted'] / max(1, c['problems']):.0f}% "
              f"| {routes[(lv, 'script')]} | {routes[(lv, 'trace')]} | {med:.0f} |")
        total += c["problems"]
        conv += c["converted"]
    print(f"| all | {total} | {conv} | {100 * conv / max(1, total):.1f}% | | | |\n")
    if doc["not_converted"]:
        print("## Not converted\n")
        print("| problem | reason |")
        print("| --- | --- |")
        for r in doc["not_converted"]:
            reason = r["reason"].replace("|", "\\|").replace("\n", " ")
            print(f"| {r['file']} | {reason} |")


if __name__ == "__main__":
    main()
