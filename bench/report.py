"""Render the benchmark's raw results as ``RESULTS.md``."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

Metric = tuple[str, str, Callable[[dict[str, Any]], "float | None"]]
NAMES = {"ccwire": "ccwire", "ref": "reference", "floor": "floor"}


def _med(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "n/a"
    if abs(v) >= 1000:
        text = f"{v:,.0f}"
    elif abs(v) >= 100:
        text = f"{v:.0f}"
    elif abs(v) >= 10:
        text = f"{v:.1f}"
    else:
        text = f"{v:.2f}"
    return f"{text} {unit}".strip()


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _values(raw: dict[str, Any], scenario: str, impl: str, fn: Callable[..., Any]) -> list[float]:
    vals = []
    for r in raw["results"].get(scenario, {}).get(impl, []):
        if r.get("ok"):
            try:
                vals.append(fn(r))
            except (KeyError, TypeError, ZeroDivisionError):
                pass
    return [v for v in vals if v is not None]


def _metric(raw: dict[str, Any], scenario: str, impl: str, fn: Callable[..., Any]) -> Any:
    return _med(_values(raw, scenario, impl, fn))


def _share_within(
    raw: dict[str, Any], scenario: str, ref: float | None, factor: float, fn: Callable[..., Any]
) -> str:
    vals = _values(raw, scenario, "ccwire", fn)
    if not vals or ref is None:
        return "n/a"
    return f"{sum(v <= factor * ref for v in vals)}/{len(vals)}"


def spread(raw: dict[str, Any], metrics: dict[str, list[Metric]], names: Sequence[str]) -> str:
    """Quantiles of every run of the ``names`` scenarios (one row per implementation)."""
    rows = []
    for name in names:
        if name not in raw["results"]:
            continue
        fn = metrics["handshake"][0][2]
        for impl in ("ccwire", "ref", "floor"):
            vals = sorted(_values(raw, name, impl, fn))
            if not vals:
                continue
            q = [vals[min(len(vals) - 1, int(p * len(vals)))] for p in (0.1, 0.25)]
            q += [statistics.median(vals)]
            q += [vals[min(len(vals) - 1, int(p * len(vals)))] for p in (0.75, 0.9)]
            rows.append([name, NAMES[impl], str(len(vals)), *(_fmt(v) for v in q)])
    header = ["scenario", "implementation", "runs", "p10", "p25", "median", "p75", "p90"]
    return _table(header, rows) if rows else "No handshake runs."


def _failures(raw: dict[str, Any], scenario: str, impl: str) -> list[str]:
    runs = raw["results"].get(scenario, {}).get(impl, [])
    return [str(r.get("error", "failed")) for r in runs if not r.get("ok")]


def _met(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**yes**" if ok else "**no**")


def targets(raw: dict[str, Any], metrics: dict[str, list[Metric]]) -> list[list[str]]:
    """Rows: target, measured, met."""
    rows: list[list[str]] = []
    imp = {k: _med(v) for k, v in raw["imports"].items()}
    c, r, a = imp.get("ccwire"), imp.get("ref"), imp.get("anyio")
    ratio = _ratio(r, c)
    rows.append(
        [
            "import: at most 1/7 of the reference",
            f"ccwire {_fmt(c and c * 1000, 'ms')}, reference {_fmt(r and r * 1000, 'ms')}: "
            f"1/{_fmt(ratio)}",
            _met(None if ratio is None else ratio >= 7),
        ]
    )
    ratio = _ratio(c, a)
    rows.append(
        [
            "import: within 2x of `import anyio`",
            f"anyio {_fmt(a and a * 1000, 'ms')}: {_fmt(ratio)}x",
            _met(None if ratio is None else ratio <= 2),
        ]
    )

    def m(scenario: str, impl: str, idx: int, kind: str | None = None) -> Any:
        fn = metrics[kind or scenario][idx][2]
        return _metric(raw, scenario, impl, fn)

    hs, hf = m("handshake", "ccwire", 0), m("handshake", "floor", 0)
    ratio = _ratio(hs, hf)
    within = _share_within(raw, "handshake", hf, 1.2, metrics["handshake"][0][2])
    rows.append(
        [
            "handshake (spawn to first result): within 1.2x of the floor",
            f"ccwire {_fmt(hs, 'ms')}, floor {_fmt(hf, 'ms')}: {_fmt(ratio)}x "
            f"({within} of ccwire's runs within 1.2x of the floor's median)",
            _met(None if ratio is None else ratio <= 1.2),
        ]
    )
    tc, tr, tf = (m("tools_seq", i, 0) for i in ("ccwire", "ref", "floor"))
    ratio = _ratio(tr, tc)
    rows.append(
        [
            "tools/call sequential, p50: at least 10x lower than the reference",
            f"ccwire {_fmt(tc, 'us')}, reference {_fmt(tr, 'us')}, floor {_fmt(tf, 'us')}: "
            f"{_fmt(ratio)}x lower",
            _met(None if ratio is None else ratio >= 10),
        ]
    )
    qc, qr = m("tools_conc", "ccwire", 0), m("tools_conc", "ref", 0)
    ratio = _ratio(qc, qr)
    rows.append(
        [
            "tools/call throughput, 16 in flight: at least 15x the reference",
            f"ccwire {_fmt(qc, 'calls/s')}, reference {_fmt(qr, 'calls/s')}: {_fmt(ratio)}x",
            _met(None if ratio is None else ratio >= 15),
        ]
    )
    mc, mr, mf = (m("messages", i, 0) for i in ("ccwire", "ref", "floor"))
    ratio = _ratio(mc, mr)
    rows.append(
        [
            "messages: at least 2x the reference",
            f"ccwire {_fmt(mc, 'msgs/s')}, reference {_fmt(mr, 'msgs/s')}: {_fmt(ratio)}x",
            _met(None if ratio is None else ratio >= 2),
        ]
    )
    ratio = _ratio(mf, mc)
    rows.append(
        [
            "messages: within 1.3x of the floor",
            f"floor {_fmt(mf, 'msgs/s')}: ccwire takes {_fmt(ratio)}x the floor's time",
            _met(None if ratio is None else ratio <= 1.3),
        ]
    )
    for name in ("big_1MB", "big_10MB", "big_100MB"):
        if name not in raw["results"]:
            continue
        size = raw["results"][name]["ccwire"][0]["spec"]["size"]
        fails = _failures(raw, name, "ccwire")
        rows.append(
            [
                f"{name}: succeeds with default settings",
                "every run succeeded" if not fails else f"{len(fails)} failed: {fails[0][:100]}",
                _met(not fails),
            ]
        )
        bt, bf = m(name, "ccwire", 0, "big"), m(name, "floor", 0, "big")
        ratio = _ratio(bt, bf)
        rows.append(
            [
                f"{name}: time within 1.3x of the floor",
                f"ccwire {_fmt(bt, 'ms')}, floor {_fmt(bf, 'ms')}: {_fmt(ratio)}x",
                _met(None if ratio is None else ratio <= 1.3),
            ]
        )
        rss = m(name, "ccwire", 1, "big")
        ratio = _ratio(rss, size / 1e6)
        rows.append(
            [
                f"{name}: peak RSS within 3x of the message size",
                f"peak RSS growth {_fmt(rss, 'MB')} = {_fmt(ratio)}x the size",
                _met(None if ratio is None else ratio <= 3),
            ]
        )
    return rows


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def details(raw: dict[str, Any], metrics: dict[str, list[Metric]], scenarios: Any) -> str:
    impls = [i for i in ("ccwire", "ref", "floor") if i in raw["impls"]]
    rows = []
    for sc in scenarios:
        if sc.name not in raw["results"]:
            continue
        for label, unit, fn in metrics[sc.driver_scenario]:
            vals = {i: _metric(raw, sc.name, i, fn) for i in impls}
            row = [sc.name, f"{label} ({unit})"]
            for i in impls:
                fails = _failures(raw, sc.name, i)
                cell = _fmt(vals[i])
                if fails:
                    cell = f"{cell} ({len(fails)} failed)" if vals[i] is not None else "failed"
                row.append(cell)
            if "ref" in impls:
                row.append(_fmt(_ratio(vals["ccwire"], vals["ref"])))
            row.append(_fmt(_ratio(vals["ccwire"], vals.get("floor"))))
            rows.append(row)
    header = ["scenario", "metric", *[NAMES[i] for i in impls]]
    if "ref" in impls:
        header.append("ccwire / reference")
    header.append("ccwire / floor")
    return _table(header, rows)


def failures(raw: dict[str, Any]) -> str:
    lines = []
    for name, per_impl in raw["results"].items():
        for impl, runs in per_impl.items():
            errs = [r.get("error", "") for r in runs if not r.get("ok")]
            if errs:
                lines.append(
                    f"- {name}, {NAMES[impl]}: {len(errs)} of {len(runs)} runs failed: "
                    f"`{errs[0][:160]}`"
                )
    return "\n".join(lines) or "- none"


def profiles(raw: dict[str, Any]) -> str:
    profs = raw.get("profiles") or {}
    if not profs:
        return "Not profiled in this run (`bench/run.py --profile`; `make bench` does)."
    parts = []
    for name, prof in profs.items():
        if "error" in prof:
            parts.append(f"**{name}**: profiling failed: `{prof['error'][:200]}`")
            continue
        parts.append(
            f"**{name}** ({prof['command']}; {prof['duration_s']:.2f} s sampled), "
            "self time by area:\n\n"
            + _table(
                ["area", "share of time"],
                [[area, f"{share:.1f}%"] for area, share in prof["areas"]],
            )
            + "\n\nTop functions by self time:\n\n"
            + _table(
                ["function", "share"], [[f"`{fn}`", f"{share:.1f}%"] for fn, share in prof["top"]]
            )
        )
    return "\n\n".join(parts)


def render(raw: dict[str, Any], metrics: dict[str, list[Metric]], scenarios: Any) -> str:
    mach = raw["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in raw["versions"].items())
    imp_rows = [
        [name, _fmt((_med(v) or 0) * 1000, "ms"), ", ".join(f"{x * 1000:.0f}" for x in v)]
        for name, v in raw["imports"].items()
    ]
    smoke = "\n\n**SMOKE RUN (tiny sizes): these numbers mean nothing.**" if raw["smoke"] else ""
    return f"""# Benchmark results{smoke}

Generated by `bench/run.py` on {raw["date"]} ({raw["duration_s"]:.0f} s).

- Machine: {mach["nproc"]} CPUs ({mach["cpu"] or "unknown model"}), {mach["memory"]} RAM,
  {mach["platform"]}, Python {mach["python"]}.
- Versions: {versions}.
- Implementations: {", ".join(NAMES[i] for i in raw["impls"])}; {raw["rounds"]} rounds,
  interleaved (the order rotates every round), medians of the rounds; ratios are from
  this same run.
- Command: `make bench`, which runs
  `{" ".join(raw["argv"])}`.
  Each measurement is one process:
  `PY bench/driver.py --impl IMPL --scenario S --cli CLI --spec JSON --sessions K`
  (PY is `.venv/bin/python` for ccwire and the floor, `bench/.venv-ref/bin/python` for
  the reference); CLI is a shell wrapper running `bench/fake_cli.py` with `python -I -S`.

See `bench/README.md` for what each scenario does and how to read this page.

## Targets

{_table(["target", "measured (medians)", "met"], targets(raw, metrics))}

## All measurements (medians)

{details(raw, metrics, scenarios)}

Import time (`python -X importtime -c "import ..."`, cumulative, ms), per round:

{_table(["import", "median", "rounds"], imp_rows)}

`floor` is `import asyncio, json`.

Spread of the handshake, spawn to first result (ms), every run. `handshake` is the
first connect of a fresh process; `handshake_warm` the second (one untimed session ran
first in the same process); `handshake_real` the first connect of a fresh process to
the real Claude Code CLI (`--real-cli`), offline, answered by ccwire's scripted model:

{spread(raw, metrics, ["handshake", "handshake_warm", "handshake_real"])}

## Failures

{failures(raw)}

## Where the time goes (ccwire, sampled with pyinstrument)

{profiles(raw)}
"""
