#!/usr/bin/env bash
# Install every agent harness the harness tests run (CI calls this before pytest): the Deep
# Agents environment from PyPI, pinned. Codex CLI and Pi are not installed: see docs/harnesses.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bash "$root/harness/deepagents/install.sh"
