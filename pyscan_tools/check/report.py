"""What the check prints: a table pattern x algorithm -> cases by status, coverage warnings, the failures."""

from __future__ import annotations


def summary_table(records, cases) -> list:
    rows = {}
    blank = {"ok": 0, "mismatch": 0, "error": 0, "skip": 0, "s": 0.0}
    for case in cases:  # the cases' order: pattern by pattern, algorithm by algorithm
        rows.setdefault((case.pattern, case.algorithm), dict(blank))
    for r in records:
        row = rows.setdefault((r["pattern"], r["algorithm"]), dict(blank))
        row[r["status"]] += 1
        row["s"] += r["seconds"]
    lines = [f"{'pattern':10s} {'algorithm':28s} {'cases':>5s} {'ok':>5s} {'mismatch':>8s} {'error':>5s} "
             f"{'skip':>4s} {'seconds':>8s}"]
    for (pattern, name), row in rows.items():
        total = row["ok"] + row["mismatch"] + row["error"] + row["skip"]
        if total == 0:
            lines.append(f"{pattern:10s} {name:28s} (no case ran)")
            continue
        lines.append(f"{pattern:10s} {name:28s} {total:5d} {row['ok']:5d} {row['mismatch']:8d} {row['error']:5d} "
                     f"{row['skip']:4d} {row['s']:8.2f}")
    return lines


def coverage(cases, records, kernels, *, filtered: bool) -> list:
    """Warnings: registered algorithms with no case that ran, kernel files that no case loaded."""
    import pyscan
    from pyscan.runtime.loader import kernel_files

    warnings = []
    ran = {(r["pattern"], r["algorithm"]) for r in records if r["status"] != "error"}
    wanted = {(c.pattern, c.algorithm) for c in cases}
    for pattern, registry in pyscan.REGISTRIES.items():
        for algorithm in registry:
            key = (pattern, algorithm.name)
            if key not in wanted:
                continue
            if key not in ran:
                warnings.append(f"{pattern} algorithm {algorithm.name!r}: no case ran without an error")
            missing = [k for k in algorithm.kernels if k not in kernels]
            if kernels and missing:
                warnings.append(f"{pattern} algorithm {algorithm.name!r} declares kernel files that no case loaded: "
                                f"{', '.join(missing)}")
    if kernels and not filtered:
        unused = [k for k in kernel_files() if k not in kernels]
        if unused:
            warnings.append("kernel files that no case loaded (not reachable through the registries' drivers): "
                            + ", ".join(unused))
    return warnings


def print_failures(records, limit=40) -> int:
    bad = [r for r in records if r["status"] in ("mismatch", "error")]
    for r in bad[:limit]:
        print(f"  {r['status'].upper():8s} {r['label']}: {r['detail']}")
    if len(bad) > limit:
        print(f"  ... and {len(bad) - limit} more")
    return len(bad)
