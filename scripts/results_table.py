#!/usr/bin/env python3
"""Markdown table of a trace file of graded solutions: per problem status, kernel and baseline
medians (PyTorch, and the reference kernel where timed), speedup over each, the baseline the
record's speedup is over, speed-of-light fractions and throughput. Usage: results_table.py TRACE.jsonl"""
import json
import sys
from collections import Counter


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def main(path):
    recs = []
    for line in open(path):
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    recs.sort(key=lambda r: (r.get("level") or 0, int((r.get("problem") or "L0_0").split("_")[1])))
    dev = next((r["device"]["name"] for r in recs if r.get("device")), "no GPU")
    print(f"Device: {dev}; {len(recs)} records; " + ", ".join(f"{k}: {v}" for k, v in Counter(r["status"] for r in recs).items()))
    print()
    print("| problem | status | kernel ms | PyTorch ms | ref kernel ms | speedup | over | over PyTorch | kernel SOL | PyTorch SOL | throughput | note |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for r in recs:
        t = r.get("timing") or {}
        k = (t.get("kernel") or {}).get("median_ms")
        b = (t.get("baseline") or {}).get("median_ms")
        kb = (t.get("kernel_baseline") or {}).get("median_ms")
        base = r.get("baseline") or {}
        over = {"kernel": "ref kernel", "torch": "PyTorch"}.get(base.get("kind"), "PyTorch" if k else "-")
        vs_torch = (base.get("speedups") or {}).get("torch", r.get("speedup"))
        tp = r.get("throughput") or {}
        nat = tp.get("natural")
        unit = {"gb_s": "GB/s", "tflop_s": "TFLOP/s"}.get(nat, (tp.get("unit") or "units") + "/s")
        rate = f"{tp[nat]:.4g} {unit}" if nat in tp else "-"
        note = ""
        if r["status"] != "correct":
            note = ((r.get("error") or {}).get("message") or "")[:120].replace("|", "/").replace("\n", " ")
        elif r.get("suspicious"):
            note = "suspicious: faster than the speed of light"
        print(f"| {r.get('problem')} | {r['status']} | {fmt(k, '.4f')} | {fmt(b, '.4f')} | {fmt(kb, '.4f')} | "
              f"{fmt(r.get('speedup'), '.2f')} | {over} | {fmt(vs_torch, '.2f')} | "
              f"{fmt(r.get('sol_fraction'), '.2f')} | {fmt(r.get('baseline_sol_fraction'), '.2f')} | {rate} | {note} |")


if __name__ == "__main__":
    main(sys.argv[1])
