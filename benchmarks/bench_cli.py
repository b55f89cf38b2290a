"""End-to-end timing of the interactive commands of issue 10's table, as a user runs them (a fresh process each).

Each command runs in a new interpreter (``python -m sufficientdp.cli ...``), so the time includes start-up and
imports; wall time is the median of ``--repeats`` runs and CPU time (user + system of the child) is shown beside it,
because on a shared, loaded machine CPU time is the steadier number. Two baselines are measured in the same run:

* ``python -c "import numpy"`` — the floor of any command that computes (interpreter and numpy start-up);
* with ``--base REV``, the same commands from a git worktree of revision REV (the previous implementation), run
  by the same interpreter with ``PYTHONPATH`` pointing at its sources — the ratio ``base / now`` is the speed-up.

Both trees are byte-compiled before the runs (as an installed package is). Usage:
``.venv/bin/python benchmarks/bench_cli.py [--repeats 3] [--base REV] [--only account] [--skip rounds]`` (``--only``:
the rows whose label contains that text; ``--skip``: all but those). Prints a markdown table (paste it into docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# (label, arguments, target wall seconds from issue 10)
COMMANDS: list[tuple[str, list[str], float]] = [
    ("`--version`", ["--version"], 0.3),
    ("`calibrate --bits 40 --population 1e7 --epsilon 2 --eta 0.001`",
     ["calibrate", "--bits", "40", "--population", "10000000", "--epsilon", "2", "--eta", "0.001"], 1.0),
    ("`calibrate --bits 5 --population 1000 --epsilon 0.693147 --eta 0.001`",
     ["calibrate", "--bits", "5", "--population", "1000", "--epsilon", "0.693147", "--eta", "0.001"], 0.3),
    ("`tail --bits 40 --population 1e7 --q 0.3509 --epsilon 2`",
     ["tail", "--bits", "40", "--population", "10000000", "--q", "0.3509", "--epsilon", "2"], 0.5),
    ("`tail --bits 16 --population 1e5 --q 0.32 --epsilon 1`",
     ["tail", "--bits", "16", "--population", "100000", "--q", "0.32", "--epsilon", "1"], 0.5),
    ("`calibrate --bits 40 --population 1e4 --epsilon 2 --eta 0.001 --max-weight 25`",
     ["calibrate", "--bits", "40", "--population", "10000", "--epsilon", "2", "--eta", "0.001", "--max-weight", "25"],
     2.0),
    ("`calibrate --method exact` (L = 5, N = 1000)",
     ["calibrate", "--bits", "5", "--population", "1000", "--epsilon", "0.693147", "--eta", "0.001", "--method",
      "exact"], 5.0),
    ("`account --mechanism shuffled-rr --population 1e6 --q 0.25 --epsilon 0.01`",
     ["account", "--mechanism", "shuffled-rr", "--population", "1000000", "--q", "0.25", "--epsilon", "0.01"], 1.0),
    # not in issue 10's table: the first command a user runs, and the non-default method it compares with
    # (target: the standards' "a progress bar over 2 s", i.e. interactive)
    ("`demo` (L = 16, N = 1e5: proven and homogeneous calibrations, randomize, estimate)",
     ["demo", "--seed", "1"], 2.0),
    ("`calibrate --method homogeneous --bits 16 --population 1e5 --epsilon 1 --eta 0.001`",
     ["calibrate", "--bits", "16", "--population", "100000", "--epsilon", "1", "--eta", "0.001", "--method",
      "homogeneous"], 2.0),
    # large L (issue 10: "calibrate and tail work at L = 128 and 256, with progress bars for anything over 2 s"; the
    # same "(2)" target as above) and a small target eta at moderate L
    ("`calibrate --bits 256 --population 1e5 --epsilon 1 --eta 0.001` (large L)",
     ["calibrate", "--bits", "256", "--population", "100000", "--epsilon", "1", "--eta", "0.001"], 2.0),
    ("`calibrate --bits 128 --population 1e7 --epsilon 1 --eta 0.001` (large L)",
     ["calibrate", "--bits", "128", "--population", "10000000", "--epsilon", "1", "--eta", "0.001"], 2.0),
    ("`calibrate --bits 200 --population 1e6 --epsilon 2 --eta 0.001` (large L)",
     ["calibrate", "--bits", "200", "--population", "1000000", "--epsilon", "2", "--eta", "0.001"], 2.0),
    ("`calibrate --bits 1 --population 1e5 --epsilon 0.5 --eta 0.001` (one bit, large crowd)",
     ["calibrate", "--bits", "1", "--population", "100000", "--epsilon", "0.5", "--eta", "0.001"], 2.0),
    ("`calibrate --bits 96 --population 1e6 --epsilon 1 --eta 1e-6` (small eta)",
     ["calibrate", "--bits", "96", "--population", "1000000", "--epsilon", "1", "--eta", "0.000001"], 2.0),
    # one bit for every larger crowd: what the collector calibrates a one-bit campaign with
    ("`calibrate --bits 1 --population 1e5 --epsilon 0.5 --eta 0.001 --larger-crowds` (one bit, larger crowds)",
     ["calibrate", "--bits", "1", "--population", "100000", "--epsilon", "0.5", "--eta", "0.001", "--larger-crowds"],
     2.0),
    ("`calibrate --bits 1 --population 1e6 --epsilon 1 --eta 0.001 --larger-crowds` (one bit, larger crowds)",
     ["calibrate", "--bits", "1", "--population", "1000000", "--epsilon", "1", "--eta", "0.001", "--larger-crowds"],
     2.0),
    # k reports per person, T rounds (the proven bound composed: dominating curves of every pair type)
    ("`calibrate --bits 16 --population 1e5 --epsilon 1 --eta 0.001 --reports 3` (k reports)",
     ["calibrate", "--bits", "16", "--population", "100000", "--epsilon", "1", "--eta", "0.001", "--reports", "3"],
     2.0),
    ("`calibrate --bits 40 --population 1e7 --epsilon 2 --eta 0.001 --reports 2` (k reports)",
     ["calibrate", "--bits", "40", "--population", "10000000", "--epsilon", "2", "--eta", "0.001", "--reports", "2"],
     2.0),
    ("`calibrate --bits 128 --population 1e7 --epsilon 1 --eta 0.001 --reports 2` (k reports, large L)",
     ["calibrate", "--bits", "128", "--population", "10000000", "--epsilon", "1", "--eta", "0.001", "--reports",
      "2"], 2.0),
    # a slow corner (session 22): a small epsilon split over two reports; each bound's lattices reach 2^16-2^19 cells
    ("`calibrate --bits 5 --population 1e6 --epsilon 0.02 --eta 0.001 --reports 2 --max-weight 4` (k reports, small "
     "epsilon)",
     ["calibrate", "--bits", "5", "--population", "1000000", "--epsilon", "0.02", "--eta", "0.001", "--reports", "2",
      "--max-weight", "4"], 2.0),
    ("`calibrate --bits 40 --population 1e6 --epsilon 2 --eta 0.001 --rounds 4` (T rounds)",
     ["calibrate", "--bits", "40", "--population", "1000000", "--epsilon", "2", "--eta", "0.001", "--rounds", "4"],
     2.0),
    ("`account --rounds 4 --bits 40 --population 1e6 --q 0.4004 --epsilon 2` (T rounds, one bound)",
     ["account", "--rounds", "4", "--bits", "40", "--population", "1000000", "--q", "0.4004", "--epsilon", "2"],
     2.0),
    # one release's guarantee at the calibrated q (session 23: T = 1 was every pair type's composed curves)
    ("`account --mechanism campaign --bits 40 --population 1e7 --q 0.3751 --epsilon 2` (one release)",
     ["account", "--mechanism", "campaign", "--bits", "40", "--population", "10000000", "--q", "0.3751",
      "--epsilon", "2"], 1.0),
    ("`account --mechanism campaign --bits 40 --population 1e7 --q 0.3789 --epsilon 2 --reports 2` (one release, "
     "k reports)",
     ["account", "--mechanism", "campaign", "--bits", "40", "--population", "10000000", "--q", "0.3789",
      "--epsilon", "2", "--reports", "2"], 2.0),
    # the other first commands: every approach side by side, and two whose start-up was scipy.stats' import
    ("`compare --bits 16 --population 1e5 --epsilon 1 --delta 1e-6` (every approach)",
     ["compare", "--bits", "16", "--population", "100000", "--epsilon", "1", "--delta", "1e-6"], 2.0),
    # the homogeneous bound at the size, and the commands that calibrate it beside the others
    ("`calibrate --method homogeneous --bits 40 --population 1e7 --epsilon 2 --eta 0.001` (homogeneous, large N)",
     ["calibrate", "--bits", "40", "--population", "10000000", "--epsilon", "2", "--eta", "0.001", "--method",
      "homogeneous"], 2.0),
    ("`compare --bits 40 --population 1e7 --epsilon 2 --delta 1e-6` (every approach, large N)",
     ["compare", "--bits", "40", "--population", "10000000", "--epsilon", "2", "--delta", "1e-6"], 2.0),
    ("`report design --bits 40 --population 1e7 --epsilon 2` (the reviewer's page)",
     ["report", "design", "--bits", "40", "--population", "10000000", "--epsilon", "2", "--quiet", "--output",
      os.path.join(tempfile.gettempdir(), "sdp-bench-design-report.html")], 2.0),
    ("`account --mechanism rr --q 0.25 --epsilon 1` (start-up)",
     ["account", "--mechanism", "rr", "--q", "0.25", "--epsilon", "1"], 1.0),
    ("`interpret --epsilon 1` (start-up)", ["interpret", "--epsilon", "1"], 1.0),
]


def _run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[float, float, bool]:
    """(wall s, child CPU s, ok) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout,
                              check=False)
        ok = proc.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, ok


def _measure(argv: list[str], env: dict[str, str], repeats: int, timeout: float) -> tuple[float, float, bool]:
    walls, cpus, oks = [], [], []
    for _ in range(repeats):
        w, c, ok = _run(argv, env, timeout)
        walls.append(w)
        cpus.append(c)
        oks.append(ok)
    return statistics.median(walls), statistics.median(cpus), all(oks)


def _measure_pair(argv: list[str], env: dict[str, str], base_env: dict[str, str] | None, repeats: int,
                  timeout: float) -> tuple[tuple[float, float, bool], tuple[float, float, bool] | None]:
    """:func:`_measure` for the current tree and (if given) the base tree, their runs alternating so that a change
    of load on the shared machine hits both alike."""
    if base_env is None:
        return _measure(argv, env, repeats, timeout), None
    runs: dict[str, list[tuple[float, float, bool]]] = {"now": [], "base": []}
    for _ in range(repeats):
        runs["now"].append(_run(argv, env, timeout))
        runs["base"].append(_run(argv, base_env, timeout))

    def summary(rs: list[tuple[float, float, bool]]) -> tuple[float, float, bool]:
        return statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs), all(r[2] for r in rs)

    return summary(runs["now"]), summary(runs["base"])


def _worktree(rev: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="sdp-bench-base-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), rev], check=True)
    return path


def run(repeats: int = 3, base: str | None = None, only: str | None = None, timeout: float = 300.0,
        skip: str | None = None) -> str:
    """Measure and return a markdown section headed ``## Interactive commands end to end``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1", TQDM_DISABLE="1")
    base_tree = _worktree(base) if base else None
    base_env = dict(env, PYTHONPATH=str(base_tree / "src")) if base_tree else None
    py = sys.executable
    t0 = time.perf_counter()
    rows = []
    # byte-compile both trees first, as an installed package is: with PYTHONDONTWRITEBYTECODE set (as on the shared
    # machine) a tree whose sources changed since its last compile would otherwise recompile them on every run
    for tree in [ROOT] + ([base_tree] if base_tree else []):
        subprocess.run([py, "-m", "compileall", "-q", str(tree / "src" / "sufficientdp")], env=env,
                       stdout=subprocess.DEVNULL, check=False)
    try:
        floor = _measure([py, "-c", "import numpy"], env, max(repeats, 5), timeout)
        for label, cli_args, target in COMMANDS:
            if (only and only not in label) or (skip and skip in label):
                continue
            argv = [py, "-m", "sufficientdp.cli", *cli_args]
            now, before = _measure_pair(argv, env, base_env, repeats, timeout)
            rows.append((label, target, now, before))
            print(f"  {label}: {now[0]:.2f} s", file=sys.stderr)
    finally:
        if base_tree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)], check=False)
    load = os.getloadavg()[0]
    out = ["## Interactive commands end to end (issue 10's table)", "",
           f"`benchmarks/bench_cli.py`: each command in a fresh interpreter, start-up and imports included. Machine: "
           f"{cpu_model()}, nproc = {os.cpu_count()}, Python {platform.python_version()}; load average {load:.1f} at "
           f"the end; {repeats} runs per command (median wall, median child CPU; current and base runs alternate); whole benchmark "
           f"{time.perf_counter() - t0:.0f} s. Floor, `python -c \"import numpy\"`: {floor[0]:.2f} s wall, "
           f"{floor[1]:.2f} s CPU.", ""]
    head = "| command | target s | now wall s | now CPU s | now / target | now / numpy floor |"
    sep = "|---|---:|---:|---:|---:|---:|"
    if base_env:
        head += f" base ({base}) wall s | base CPU s | base / now (wall) |"
        sep += "---:|---:|---:|"
    out += [head, sep]
    for label, target, now, before in rows:
        flag = "" if now[2] else " (failed)"
        line = (f"| {label}{flag} | {target:g} | {now[0]:.2f} | {now[1]:.2f} | {now[0] / target:.2f} | "
                f"{now[0] / floor[0]:.1f} |")
        if before is not None:
            bflag = "" if before[2] else " (failed)"
            line += f" {before[0]:.2f}{bflag} | {before[1]:.2f} | {before[0] / now[0]:.2f} |"
        out.append(line)
    return "\n".join(out)


def main() -> str:
    """The section with the defaults (what ``run_all.py`` calls)."""
    return run()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base", default=None, help="git revision of the previous implementation")
    parser.add_argument("--only", default=None, help="run only the commands whose label contains this")
    parser.add_argument("--skip", default=None, help="skip the commands whose label contains this")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    print(run(args.repeats, args.base, args.only, args.timeout, args.skip))
