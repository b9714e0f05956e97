"""What was frozen, and whether a staged folder is it.

`index` reads the frozen index `worldkit freeze` wrote under `manifests/<world>/`; `workspace`
checks a staged folder against the manifest it carries (`staged-workspace`); `staged` checks it
against the frozen manifests or a re-derivation from the world (`frozen-workspace`). They sit
below `mcp` and `run`, which refuse to serve or run a folder that fails them, and below `verify`,
which reports them. Results are `worldkit.check_result.CheckResult`s.
"""
