"""The command-level rows of issue 19's speed table, one JSON line each, with their baselines.

Rows: `startup` (`worldkit --version`), `materialize-seat` (one PharmaCo seat), `verify`
(`worldkit verify --world pharmaco_demo`), `mutations` (`verify --mutations N`), `demo`
(`make demo`, venv ready, run as a user runs it: at a terminal, in a fresh copy of the tree with
its own `.worldkit/cache`, first and later runs) and `test` (`make test`'s pytest command). Each line carries the figure
the issue measured before the work (`issue_baseline`), the target, the value measured now, and —
with `--baseline-tree DIR` (a checkout of the old code, e.g. `git worktree add /tmp/base dda14ee`)
— the same command run from that tree in the same run, and the ratio (on a shared machine only
ratios taken in one run mean much). The other rows are printed by `materialize.py` (100k and 10k
files vs `cp -r`), `score.py` (Structure Score), `mcp.py` (read_file vs the reference server,
replay) and `eventlog.py`.

    python bench/speed.py [--rows startup,materialize-seat,verify] [--baseline-tree DIR] [--mutations 200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORLD = "pharmaco_demo"
SEAT = ["--rev", "r2", "--date", "2026-03-02", "--seat", "EMP-QC-001"]

ROWS = {
    "startup": {"issue_baseline": "1.81 s wall, 88 MB", "target_s": 0.2},
    "materialize-seat": {"issue_baseline": "4.72 s wall (1,276 files)", "target_s": 1.5},
    "verify": {"issue_baseline": "113-118 s, silent", "target_s": 15.0},
    "mutations": {"issue_baseline": "about 20 min for 200 (0.17 mutations/s)", "target_s": 120.0},
    "demo": {"issue_baseline": "1 min 54 s", "target_s": 30.0},
    "test": {"issue_baseline": "12 min 49 s for 1,107 tests", "target_s": 360.0},
}


def _env(tree: Path, cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "WORLDKIT_CACHE": str(cache)}


_CPU: list[float] = []
"""CPU seconds (user + system, the command and every process it waited for) of each `_timed` run."""


def _timed(argv: list[str], env: dict[str, str], cwd: Path, check: bool = True) -> tuple[float, float, str]:
    """Wall seconds, the child's peak RSS in MB (as reported by /usr/bin/time if present) and stdout.

    The run's CPU time (load-independent, unlike wall time on a shared machine) goes to `_CPU`."""
    timer = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    prefix = [timer, "-f", "wk-bench %M %U %S"] if timer else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([*prefix, *argv], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    rss = 0.0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if timer:
        last = [line.split() for line in done.stderr.strip().splitlines() if line.startswith("wk-bench ")]
        if last:
            rss = int(last[-1][1]) / 1024
            cpu = float(last[-1][2]) + float(last[-1][3])
    _CPU.append(cpu)
    return wall, rss, done.stdout


def _cli(tree: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "worldkit", *args]


def row_startup(tree: Path, cache: Path, scratch: Path, repeats: int) -> dict:
    runs = [_timed(_cli(tree, "--version"), _env(tree, cache), scratch) for _ in range(max(5, repeats))]
    bare = [_timed([sys.executable, "-c", "pass"], _env(tree, cache), scratch) for _ in range(max(5, repeats))]
    return {"value_s": statistics.median(r[0] for r in runs), "peak_rss_mb": max(r[1] for r in runs),
            "bare_python_s": round(statistics.median(b[0] for b in bare), 3)}


def row_materialize_seat(tree: Path, cache: Path, scratch: Path, repeats: int) -> dict:
    env = _env(tree, cache)
    out = scratch / f"seat-{tree.name}"
    walls = []
    for n in range(max(1, repeats) + 1):  # the first run fills the world cache
        wall, rss, _ = _timed(_cli(tree, "materialize", "--world", WORLD, *SEAT, "--out", str(out), "--force"), env, scratch)
        walls.append(wall)
    return {"value_s": statistics.median(walls[1:]), "cold_s": round(walls[0], 3), "peak_rss_mb": rss}


def row_verify(tree: Path, cache: Path, scratch: Path, repeats: int) -> dict:
    """`verify` twice over one cache: cold (only the world cache filled, as any earlier command does;
    office bytes and texts rendered and read for the first time) and warm (what a second verify, or
    one after `make demo`'s materialize, finds). `value_s` is the warm run; both CPU times are given."""
    env = _env(tree, cache)
    _timed(_cli(tree, "world", "show", WORLD), env, scratch)
    cold, _, out = _timed(_cli(tree, "verify", "--world", WORLD, "--json"), env, scratch)
    cold_cpu = _CPU[-1]
    wall, rss, out = _timed(_cli(tree, "verify", "--world", WORLD, "--json"), env, scratch)
    body = json.loads(out)
    return {"value_s": wall, "cold_s": cold, "cold_cpu_s": cold_cpu, "status": body["status"],
            "checks": len(body["checks"]), "passed": sum(c["status"] == "pass" for c in body["checks"]),
            "peak_rss_mb": rss}


def row_mutations(tree: Path, cache: Path, scratch: Path, repeats: int, count: int = 200) -> dict:
    env = _env(tree, cache)
    _timed(_cli(tree, "world", "show", WORLD), env, scratch)
    wall, rss, out = _timed(_cli(tree, "verify", "--world", WORLD, "--json", "--only", "revision-digests",
                                 "--mutations", str(count)), env, scratch)
    body = json.loads(out)["mutations"]
    return {"value_s": wall, "mutations": body["attempted"], "mutations_per_s": round(body["attempted"] / wall, 3),
            "target_mutations_per_s": 2.0,  # the issue: 200 in <= 2 min, >= 2 mutations/s
            "cpu_s_per_mutation": round(_CPU[-1] / max(1, body["attempted"]), 3),
            "projection_changing_rate": body["projection_changing_rate"], "peak_rss_mb": rss,
            "target_s_for_n": round(ROWS["mutations"]["target_s"] * count / 200, 1)}


def _fresh_copy(tree: Path, dest: Path) -> Path:
    """The tree's files as a fresh clone has them (tracked files, working-tree contents; no
    `.venv`, `.worldkit` or `out`), so a run finds no cache and writes nothing into `tree`."""
    listed = subprocess.run(["git", "-C", str(tree), "ls-files", "-z"], capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        for rel in filter(None, listed.stdout.decode().split("\0")):
            source = tree / rel
            if source.is_file() and not source.is_symlink():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / rel)
            elif source.is_symlink():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.readlink(source), dest / rel)
    else:  # an exported tree (`git archive`): every file but the run's own state
        shutil.copytree(tree, dest, symlinks=True,
                        ignore=shutil.ignore_patterns(".venv", ".worldkit", "out", "__pycache__", ".git"))
    return dest


def _timed_on_a_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of `argv` run with stdin, stdout and stderr on a
    pseudo-terminal, as a user at a terminal runs it (progress bars drawn, whatever a TTY changes)."""
    import pty
    import select

    timer = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        master, slave = pty.openpty()
        t0 = time.perf_counter()
        proc = subprocess.Popen([timer, "-o", stats.name, "-f", "%M %U %S", *argv], env=env, cwd=cwd,
                                stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        output = bytearray()
        while True:  # drain the terminal, or the command blocks once its buffer is full
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer closed its end
                    break
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
        code = proc.wait()
        wall = time.perf_counter() - t0
        os.close(master)
        if code != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({code}): {output[-2000:].decode(errors='replace')}")
        rss, user, system = stats.read().split()[-3:]
    cpu = float(user) + float(system)
    _CPU.append(cpu)
    return wall, cpu, int(rss) / 1024


def row_demo(tree: Path, cache: Path, scratch: Path, repeats: int) -> dict:
    """`make demo` with the venv ready, as a user runs it: at a terminal (a pseudo-terminal here),
    in a fresh copy of the tree, with the repository's own `.worldkit/cache` (no WORLDKIT_CACHE).
    The first run finds the cache empty (`cold_s`); `value_s` is the median of the runs after it.
    The venv's stamp is taken as up to date (`make -o`), and BIN is this interpreter's folder,
    with PYTHONPATH on the copy, so the copy's code is what runs."""
    bindir = Path(sys.executable).parent
    copy = _fresh_copy(tree, Path(tempfile.mkdtemp(prefix=f"demo-{tree.name}-", dir=scratch)) / "clone")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    env.pop("WORLDKIT_CACHE", None)
    argv = ["make", "-s", "-C", str(copy), "demo", f"BIN={bindir}", "-o", ".venv/.installed"]
    runs = [_timed_on_a_terminal(argv, env, copy) for _ in range(1 + max(1, repeats))]
    warm = runs[1:]
    middle = sorted(warm)[len(warm) // 2]
    _CPU.append(middle[1])
    return {"value_s": middle[0], "cold_s": runs[0][0], "cold_cpu_s": runs[0][1], "warm_s": [round(r[0], 2) for r in warm],
            "warm_cpu_s": [round(r[1], 2) for r in warm], "peak_rss_mb": max(r[2] for r in runs)}


def row_test(tree: Path, cache: Path, scratch: Path, repeats: int) -> dict:
    """`make test` (the whole suite, in parallel, slow tests included, its scratch where the Makefile
    puts it), with this interpreter's folder as BIN and PYTHONPATH on `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("WORLDKIT_CACHE", None)
    argv = ["make", "-s", "-C", str(tree), "test", f"BIN={Path(sys.executable).parent}", "-o", ".venv/.installed"]
    wall, rss, out = _timed(argv, env, tree, check=False)
    summary = next((s for s in reversed(out.splitlines()) if " passed" in s or " failed" in s), "")
    return {"value_s": wall, "summary": summary.strip("= ")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="startup,materialize-seat,verify,demo")
    parser.add_argument("--baseline-tree", type=Path, default=None, help="A checkout of the code before the work.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mutations", type=int, default=200)
    args = parser.parse_args()
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        raise SystemExit(f"unknown rows {unknown}; choose from {sorted(ROWS)}")
    with tempfile.TemporaryDirectory(prefix="wk-speed-") as tmp:
        scratch = Path(tmp)
        for name in rows:
            measure = globals()[f"row_{name.replace('-', '_')}"]
            kwargs = {"count": args.mutations} if name == "mutations" else {}
            trees = [("now", REPO)] + ([("baseline_tree", args.baseline_tree.resolve())] if args.baseline_tree else [])
            line: dict = {"bench": "speed", "row": name, **ROWS[name], "load_avg_1m": round(os.getloadavg()[0], 2)}
            for label, tree in trees:
                cache = scratch / f"cache-{label}"
                _CPU.clear()
                found = measure(tree, cache, scratch, args.repeats, **kwargs)
                found["cpu_s_last_run"] = _CPU[-1] if _CPU else 0.0
                found = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in found.items()}
                found["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
                if label == "now":
                    line.update(found)
                else:
                    line[label] = found
            target = ROWS[name]["target_s"]
            if name == "mutations":
                target = line["target_s_for_n"]
            line["meets_target"] = line["value_s"] <= target
            if "baseline_tree" in line and line["value_s"]:
                line["speedup_vs_baseline_tree"] = round(line["baseline_tree"]["value_s"] / line["value_s"], 2)
                if line.get("cpu_s_last_run"):
                    line["cpu_ratio_vs_baseline_tree"] = round(line["baseline_tree"]["cpu_s_last_run"] / line["cpu_s_last_run"], 2)
            line["cpu_children_s"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime, 1)
            line["load_avg_1m_after"] = round(os.getloadavg()[0], 2)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
