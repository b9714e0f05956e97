"""The staged-package attacks of issue 11, many times each: attempts and how many were caught.

Stages one overlay of the demo world (`--overlay`), then for each attack makes `--n` tampered
copies (at different, seeded-random places) and counts a copy as caught when `verify_workspace`
or `verify_frozen` (what `verify --workspace`, `serve` and `run` gate on) refuses it. Prints one
JSON line per attack: attempts, caught, and the item kinds that caught it.

    python bench/staged_attacks.py [--overlay qualification-sweep] [--n 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import stat
import tempfile
from collections import Counter
from pathlib import Path

from worldkit.frozen.staged import verify_frozen
from worldkit.frozen.workspace import verify_workspace
from worldkit.overlay import apply_overlay
from worldkit.verify.inject import rehash_package


def _files(pkg: Path, under: str) -> list[Path]:
    return sorted(p for p in (pkg / under).rglob("*") if p.is_file() and p.name != "manifest.json")


def _dirs(pkg: Path, under: str) -> list[Path]:
    return sorted([pkg / under, *(p for p in (pkg / under).rglob("*") if p.is_dir())])


def rehashed(pkg: Path, rng: random.Random) -> None:
    where = rng.choice(["projection/files", "projection/records", "projection/mail", "workspace", "projection/files/x"])
    rehash_package(pkg, f"{where}/smuggled-{rng.randrange(10**6)}.md", os.urandom(rng.randrange(1, 200)))


def dir_symlink(pkg: Path, rng: random.Random) -> None:
    parent = rng.choice(_dirs(pkg, "candidate"))
    target = rng.choice([pkg / "verifier", pkg / "verifier" / "reference", Path("/etc"), pkg.parent])
    (parent / f"link{rng.randrange(10**6)}").symlink_to(target, target_is_directory=True)


def file_symlink(pkg: Path, rng: random.Random) -> None:
    victim = rng.choice(_files(pkg, "candidate"))
    outside = pkg.parent / f"copy-{rng.randrange(10**6)}"
    outside.write_bytes(victim.read_bytes())
    victim.unlink()
    victim.symlink_to(outside)


def fifo(pkg: Path, rng: random.Random) -> None:
    if rng.random() < 0.5:
        victim = rng.choice([*_files(pkg, "candidate"), pkg / "candidate" / "manifest.json"])
        victim.unlink()
        os.mkfifo(victim)
    else:
        os.mkfifo(rng.choice(_dirs(pkg, "candidate")) / f"pipe{rng.randrange(10**6)}")


def unix_socket(pkg: Path, rng: random.Random) -> None:
    path = rng.choice(_dirs(pkg, "candidate")) / f"s{rng.randrange(10**4)}"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
    except OSError:  # a path too long for a socket address: a short one in the workspace instead
        sock.bind(str(pkg / "candidate" / "workspace" / "s"))
    sock.close()


def device(pkg: Path, rng: random.Random) -> None:
    os.mknod(rng.choice(_dirs(pkg, "candidate")) / f"null{rng.randrange(10**4)}", 0o600 | stat.S_IFCHR, os.makedev(1, 3))


def mode(pkg: Path, rng: random.Random) -> None:
    rng.choice(_files(pkg, "candidate")).chmod(rng.choice([0o4777, 0o4644, 0o2644, 0o1644, 0o000, 0o200, 0o755, 0o744]))


def empty_dir(pkg: Path, rng: random.Random) -> None:
    (rng.choice(_dirs(pkg, "candidate/projection")) / f"empty{rng.randrange(10**6)}").mkdir()


ATTACKS = {"rehashed-package": rehashed, "directory-symlink": dir_symlink, "file-symlink": file_symlink,
           "fifo": fifo, "socket": unix_socket, "device": device, "mode": mode, "empty-directory": empty_dir}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--overlay", default="qualification-sweep")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="worldkit-attacks-") as scratch:
        staged = apply_overlay(args.overlay, Path(scratch) / "staged").out
        assert verify_workspace(staged).status == "pass" and verify_frozen(staged).status == "pass"
        for name, attack in ATTACKS.items():
            caught, kinds = 0, Counter()
            for index in range(args.n):
                pkg = Path(scratch) / f"{name}-{index}"
                shutil.copytree(staged, pkg, symlinks=True)
                attack(pkg, rng)
                found = [i.kind for check in (verify_workspace(pkg), verify_frozen(pkg)) for i in check.items]
                caught += bool(found)
                kinds.update(set(found))
                shutil.rmtree(pkg, ignore_errors=True)
            print(json.dumps({"attack": name, "attempts": args.n, "caught": caught, "kinds": dict(sorted(kinds.items()))}),
                  flush=True)


if __name__ == "__main__":
    main()
