#!/usr/bin/env python3
"""Summarizes bench/trust.sh's bundles (standard library only).

Usage: trust_summary.py MODEL OLD_BUNDLE_DIR NEW_BUNDLE_DIR

OLD_BUNDLE_DIR / NEW_BUNDLE_DIR are unzipped `qreport runall` bundles (--keep-dir) of the same
pair made by a binary from before the pair verification (issue 20) and by the current one. Prints
for each: pairs total / verified / UNVERIFIED (summary.json "match" and match_table.csv's status
column; the old binary has neither: "not checked"), the verdict's "first drops below" layer, the
advisor's main finding (the first finding of summary.json, which the terminal summary also calls
"main") and whether the pair each of them is built on is one the current binary verified. Then the
rows whose pairing differs between the two binaries, with the current binary's note on them (the
distance of the old value with every quantizer off), and the analysis values the current binary
left unmatched without a reason. Exit 1 when the current bundle has an UNVERIFIED pair, a
mis-pairing (a row whose analysis value it did not verify) or an unmatched analysis value without
a reason; 0 otherwise.
"""
import csv
import json
import os
import sys


def load(d):
    with open(os.path.join(d, "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(d, "match_table.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(d, "compare_per_layer_out.csv"), newline="") as f:
        layers = list(csv.DictReader(f))
    return s, rows, layers


def pairs(rows):
    """baseline node -> (analysis tensor, status, note) of the matched rows."""
    return {r["baseline_node"]: (r["analysis_tensor"], r.get("status", ""), r["note"])
            for r in rows if r["method"] != "unmatched" and r["baseline_node"]}


def worst_local(layers):
    ok = [r for r in layers if r.get("local_Cosine") not in (None, "", "nan")]
    if not ok:
        return "-"
    r = min(ok, key=lambda r: float(r["local_Cosine"]))
    return f"{r['mod_name']} (local Cosine {float(r['local_Cosine']):.4f})"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    model, dold, dnew = sys.argv[1:]
    sold, rold, lold = load(dold)
    snew, rnew, lnew = load(dnew)
    pold, pnew = pairs(rold), pairs(rnew)
    bad = 0

    def verified_new(bnode, atensor=None):
        """Whether baseline node bnode's pair (with analysis value atensor: the old binary's) is one
        the current binary verified."""
        if bnode not in pnew:
            return "no counterpart in the current match table"
        t, st, note = pnew[bnode]
        if atensor is not None and atensor != t:
            why = f" ({note})" if note.startswith("moved from") else ""
            return f"NO: paired with '{atensor}', the verified pair is '{t}'{why}"
        return "yes (verified)" if st == "verified" else f"NO ({st or 'no status'})"

    print(f"== {model}")
    for tag, s, rows, layers, pm in (("old", sold, rold, lold, pold), ("new", snew, rnew, lnew, pnew)):
        m = s.get("match", {})
        total = sum(1 for r in rows if r["method"] != "unmatched" and r["baseline_node"])
        if m.get("verification_ran"):
            st = [r.get("status", "") for r in rows if r["method"] != "unmatched" and r["baseline_node"]]
            ver = f"verified {m['verified']} (status column: {st.count('verified')}), UNVERIFIED {m['unverified']} " \
                  f"(status column: {st.count('UNVERIFIED')}), moved to the equivalent value " \
                  f"{sum(1 for r in rows if r['note'].startswith('moved from'))}"
        else:
            ver = "verification: not checked (this binary predates it)"
        un = [r for r in rows if r["method"] == "unmatched"]
        print(f"  {tag}: pairs {total} of {m.get('baseline_values')} baseline values; {ver}; analysis values "
              f"unmatched {len(un)} ({sum(1 for r in un if not r['note'].strip())} without a reason)")
        fd = s["verdict"].get("first_drop")
        print(f"  {tag}: first drops below the Cosine threshold at: {fd or 'none'}"
              + (f" -> pair verified by the current binary: {verified_new(fd, pm[fd][0] if fd in pm else None)}"
                 if fd else ""))
        adv = s.get("advisor") or []
        if adv:
            a0 = adv[0]
            bn = a0.get("baseline_node") or (a0["node"] if a0["node"] in pm else None)
            pv = (f" -> pair verified by the current binary: {verified_new(bn, pm[bn][0] if bn in pm else None)}"
                  if bn else " (not a layer pair)")
            print(f"  {tag}: advisor main finding: {a0['kind']} on {a0['node']}" +
                  (f" [baseline {a0['baseline_node']}]" if a0.get("baseline_node") else "") + pv)
        print(f"  {tag}: lowest local Cosine: {worst_local(layers)}")
        if tag == "new":
            nv = [b for b, (t, st, _) in pm.items() if st != "verified"]
            nr = [r for r in un if not r["note"].strip()]
            for b in nv:
                print(f"  new: NOT VERIFIED: {b} -> {pm[b][0]} ({pm[b][1]}; {pm[b][2]})")
            for r in nr:
                print(f"  new: unmatched without a reason: {r['analysis_node']} ({r['analysis_tensor']})")
            bad += len(nv) + len(nr)
    diff = [b for b in pold if b in pnew and pold[b][0] != pnew[b][0]]   # match-table order
    gone = [b for b in pold if b not in pnew]
    print(f"  rows whose old pairing differs from the current one: {len(diff)} of {len(pold)}"
          + (f" ({len(gone)} old rows without a current row)" if gone else ""))
    for b in diff:
        print(f"    {b}: old '{pold[b][0]}' -> new '{pnew[b][0]}' [{pnew[b][1]}] {pnew[b][2]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
