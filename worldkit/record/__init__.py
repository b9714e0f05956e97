"""The execution record a run leaves, and the normalized result row every report is built from.

- `results`: `ResultRow`, one per (run, criterion), whatever it was read from;
- `execution`: `ExecutionRecord` (frozen inputs, digests, per-criterion outcomes), read and write;
- `stored`: a record kept in the store beside its run's event log.

Persisted formats only: imports the models, `canon`, `errors` and `store`; nothing that runs,
grades or reports.
"""
