"""A synthetic world of any size, for benchmarks and scale tests.

Writes a world package whose bulk comes from a generator module (fixed seed), so a 100,000-file
world is a few kilobytes of source. Documents vary in template, department, size and text.
"""

from __future__ import annotations

from pathlib import Path

import yaml

_GENERATOR = '''"""Bulk documents for the synthetic world (deterministic: seeded rng, no clock)."""

import datetime as dt

N_FILES = {n_files}
DEPTS = ["QA", "QC", "MSAT", "RA", "ENG"]
TOPICS = ["cleaning validation", "media fill", "filter integrity", "stopper supplier", "overwrap",
          "stability pull", "batch record review", "environmental monitoring", "CAPA effectiveness",
          "change control impact", "calibration", "training matrix"]
VERBS = ["reviewed", "approved", "revised", "trended", "escalated", "closed", "opened", "assessed"]


def generate(world, rng):
    start = dt.date(2024, 1, 1)
    docs = []
    for i in range(N_FILES):
        dept = DEPTS[i % len(DEPTS)]
        topic = TOPICS[rng.randrange(len(TOPICS))]
        sentences = [
            f"The {{topic}} item {{i}} was {{VERBS[rng.randrange(len(VERBS))]}} by {{dept}} on day {{rng.randrange(1, 700)}}."
            for _ in range(rng.randrange(3, 12))
        ]
        docs.append({{
            "id": f"DOC-{{i:06d}}",
            "path": f"{{dept}}/{{topic.replace(' ', '-')}}/{{i // 1000:03d}}/note-{{i:06d}}.md",
            "system": "site-drive",
            "template": "note.md.j2",
            "title": f"{{topic.title()}} note {{i}}",
            "department": dept,
            "visible_from": (start + dt.timedelta(days=i % 600)).isoformat(),
            "vars": {{"topic": topic, "sentences": sentences}},
        }})
    return {{"documents": docs}}
'''

_TEMPLATE = """# {{ doc.title }}

Department: {{ world.departments[doc.department].name }}
Topic: {{ doc.vars.topic }}

{% for s in doc.vars.sentences %}
- {{ s }}
{% endfor %}
"""


def write_synthetic_world(root: Path, n_files: int, *, world_id: str = "synthetic") -> Path:
    """Write a world package with `n_files` generated documents visible to its one seat."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    depts = ["QA", "QC", "MSAT", "RA", "ENG"]
    world = {
        "schema_version": 1,
        "id": world_id,
        "default_date": "2026-01-01",
        "company": {
            "id": "synth",
            "name": "Synthetic Co",
            "departments": [{"id": d, "name": f"Department {d}"} for d in depts],
            "systems": [{"id": "site-drive", "name": "Site drive", "kind": "drive", "mount": "Site"}],
        },
        "revisions": [{"name": "r1"}],
        "generator": {"module": "generator.py", "seed": 20260101},
    }
    data = {
        "roles": [{"id": "employee", "name": "Employee"}],
        "people": [{"id": "P-1", "name": "Sam Example", "title": "Scientist", "department": "QC", "roles": ["employee"]}],
        "seats": [{"id": "EMP-1", "person": "P-1"}],
        "permissions": [{"id": "ALL", "description": "everyone reads the site drive", "subject": {"everyone": True},
                         "resource": {"systems": ["site-drive"]}}],
    }
    (root / "world.yaml").write_text(yaml.safe_dump(world, sort_keys=True), encoding="utf-8")
    (root / "data" / "base.yaml").write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")
    (root / "generator.py").write_text(_GENERATOR.format(n_files=n_files), encoding="utf-8")
    (root / "templates" / "note.md.j2").write_text(_TEMPLATE, encoding="utf-8")
    return root
