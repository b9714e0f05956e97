#!/usr/bin/env bash
# Install the Deep Agents harness (paper Table 7) into .harness/deepagents/ from PyPI, pinned by
# requirements.txt beside this script. It gets its own environment because its MCP adapter
# (langchain-mcp-adapters) needs the 1.x MCP SDK while worldkit runs on 2.x. worldkit finds it
# there (or at $WORLDKIT_DEEPAGENTS_PYTHON). Safe to run again: an installed, matching
# environment is left as it is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.harness/deepagents"
python="${PYTHON:-python3}"
stamp="$venv/.installed"
if [[ -f "$stamp" ]] && cmp -s "$stamp" "$here/requirements.txt"; then
    echo "deepagents harness: already installed in $venv"
    exit 0
fi
"$python" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q --no-deps -r "$here/requirements.txt"
"$venv/bin/pip" check
cp "$here/requirements.txt" "$stamp"
echo "deepagents harness: $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("deepagents"))') installed in $venv"
