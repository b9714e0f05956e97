"""A newcomer's world, written the way docs/authoring.md says: a municipal building-permits office.

Four seats, documents on three drives and a personal folder, a records system with dated events
and links, mail and chat, two revisions and one task with six criteria. It holds the shapes that
once made `verify` blame a valid world:

- the world's first dated item (the office charter) is alone on its first day;
- the clerk's records tools appear with the clerk's first record (BP-26-0104, alone on its day);
- a verifier-only document (the review decision) shares its date with the best probe (BP-26-0101);
  the other approved permit (BP-25-0090) shares its day with a mail every seat sees.

`write_permits(root)` writes `root/worlds/permits/` and `root/overlays/permits/plan-review.yaml`
(pinned to its projection). Nothing here is shipped; tests generate it in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

WORLD_YAML = """\
schema_version: 1
id: permits
default_date: 2026-02-02
company:
  id: northbridge-permits
  name: Northbridge Building Permits Office (fictional)
  departments:
    - {id: INTAKE, name: Permit intake}
    - {id: PLAN, name: Plan review}
    - {id: INSP, name: Inspections}
    - {id: ADMIN, name: Office administration}
  systems:
    - {id: drive, name: Shared drive, kind: drive, mount: Shared}
    - {id: plans, name: Plan review drive, kind: drive, mount: Plans}
    - {id: desk, name: Personal folders, kind: personal, mount: Desk}
    - {id: permits, name: Permit register, kind: records}
    - {id: mail, name: Mail, kind: mail}
    - {id: chat, name: Chat, kind: chat}
revisions:
  - name: r1
    description: The office as first written.
  - name: r2
    parent: r1
    description: The fee schedule's typo corrected.
    update:
      documents:
        - id: D-FEES
          set:
            text: "# Fee schedule\\n\\nResidential permits: $250 base fee plus $2 per $1,000 of declared valuation.\\n"
"""

ORG_YAML = """\
roles:
  - {id: clerk, name: Permit clerk}
  - {id: plan_reviewer, name: Plan reviewer}
  - {id: inspector, name: Building inspector}
  - {id: chief, name: Chief building official, implies: [plan_reviewer, inspector]}
people:
  - {id: P-CLERK, name: Casey Clerk, title: Permit clerk, department: INTAKE, roles: [clerk], manager: P-CHIEF}
  - {id: P-REVIEWER, name: Rena Reviewer, title: Plan reviewer, department: PLAN, roles: [plan_reviewer], manager: P-CHIEF}
  - {id: P-INSPECTOR, name: Ian Inspector, title: Building inspector, department: INSP, roles: [inspector], manager: P-CHIEF}
  - {id: P-CHIEF, name: Chris Chief, title: Chief building official, department: ADMIN, roles: [chief]}
groups:
  - {id: list-office, name: office@northbridge.example, kind: mailing_list, member_departments: [INTAKE, PLAN, INSP, ADMIN]}
  - {id: chan-intake, name: "#intake", kind: chat_channel, member_departments: [INTAKE, PLAN]}
seats:
  - {id: S-CLERK, person: P-CLERK}
  - {id: S-REVIEWER, person: P-REVIEWER}
  - {id: S-INSPECTOR, person: P-INSPECTOR}
  - {id: S-CHIEF, person: P-CHIEF}
permissions:
  - {id: R-SHARED, description: everyone reads the shared drive, subject: {everyone: true}, resource: {systems: [drive]}}
  - {id: R-PLANS, description: plan reviewers read the plan review drive, subject: {roles: [plan_reviewer]}, resource: {systems: [plans]}}
  - {id: R-INSP-GUIDES, description: inspections reads its folder of the plan drive, subject: {departments: [INSP]},
     resource: {systems: [plans], path_prefixes: [Inspections/]}}
  - {id: R-DESK, description: each person reads their own folder, subject: {owner: true}, resource: {systems: [desk]}}
  - {id: R-PERMITS, description: reviewers and inspectors read the permit register, subject: {roles: [plan_reviewer, inspector]},
     resource: {systems: [permits]}}
  - {id: R-PERMITS-INTAKE, description: clerks read intake's permits, subject: {roles: [clerk]},
     resource: {systems: [permits], departments: [INTAKE]}}
"""

CONTENT_YAML = """\
documents:
  - {id: D-CHARTER, path: Office/charter.md, system: drive, template: charter.md.j2, vars: {founded: 1987},
     visible_from: 2025-07-01}
  - {id: D-FEES, path: Office/fee schedule.md, system: drive, visible_from: 2025-09-01,
     text: "# Fee schedule\\n\\nResidential permits: $250 base fee plus $2 per $1000 of declared valuation.\\n"}
  - {id: D-CHECKLIST, path: Checklists/residential checklist.md, system: plans, department: PLAN, visible_from: 2025-10-01,
     text: "# Residential plan review checklist\\n\\n1. Setbacks per the zoning memo.\\n2. Fee paid in full.\\n"}
  - {id: D-FOOTING, path: Inspections/footing guide.md, system: plans, department: INSP, visible_from: 2025-10-15,
     text: "# Footing inspection guide\\n\\nInspect before the pour.\\n"}
  - {id: D-CLERK-NOTES, path: P-CLERK/notes.md, system: desk, owner: P-CLERK, visible_from: 2025-11-03,
     text: "# Notes\\n\\nChase the fee for BP-25-0090.\\n"}
  - {id: D-SETBACK, path: Memos/setback memo.md, system: plans, department: PLAN, visible_from: 2025-12-01,
     readable_by: {people: [P-CLERK]}, text: "# Setbacks\\n\\nSide setbacks are 1.5 m in the R1 zone.\\n"}
  - {id: D-DECISION, path: Reviews/BP-26-0101 decision.md, system: plans, department: PLAN, visible_from: 2026-01-12,
     verifier_only: true, text: "# Decision on BP-26-0101\\n\\nApproved as submitted.\\n"}
records:
  - id: BP-25-0090
    system: permits
    type: residential_permit
    title: Rear addition, 14 Alder Row
    department: PLAN
    events:
      - {date: 2025-10-06, kind: created, status: submitted, by: P-CLERK, fields: {address: 14 Alder Row, valuation: 85000}}
      - {date: 2025-10-20, kind: status, status: in_review, by: P-REVIEWER}
      - {date: 2025-11-14, kind: approval, status: approved, by: P-CHIEF}
  - id: BP-26-0101
    system: permits
    type: plan_approval
    title: Plan approval, 3 Cedar Court
    department: PLAN
    events:
      - {date: 2026-01-12, kind: created, status: approved, by: P-CHIEF}
  - id: BP-26-0104
    system: permits
    type: residential_permit
    title: New garage, 22 Birch Lane
    department: INTAKE
    links: [BP-25-0090]
    events:
      - {date: 2026-01-20, kind: created, status: submitted, by: P-CLERK, fields: {address: 22 Birch Lane, valuation: 80000}}
  - id: INS-26-0007
    system: permits
    type: inspection
    title: Footing inspection, 14 Alder Row
    department: INSP
    links: [BP-25-0090]
    events:
      - {date: 2026-01-26, kind: created, status: scheduled, by: P-INSPECTOR}
      - {date: 2026-02-10, kind: status, status: passed, by: P-INSPECTOR}
messages:
  - {id: M-1, kind: mail, date: 2025-10-06, sender: P-CLERK, to: [list-office], subject: New application BP-25-0090,
     body: "BP-25-0090 is logged for review.\\n"}
  - {id: CH-1, kind: chat, date: 2026-01-21, time: "10:05", sender: P-CLERK, channel: chan-intake,
     body: BP-26-0104 is logged; the applicant paid the fee in full.}
  - {id: M-2, kind: mail, date: 2026-01-22, sender: P-CHIEF, to: [P-REVIEWER], subject: Review BP-26-0104,
     body: "Rena, please write review.md for BP-26-0104: its address, the fee it owes per the fee schedule, and whether the permit it is linked to is approved. Mail me when it is done; do not mail the whole office.\\n"}
"""

CHARTER = "# Office charter\n\nThe office has issued building permits since {{ doc.vars.founded }}.\n"

OVERLAY_YAML = """\
schema_version: 1
id: plan-review
title: Review BP-26-0104
world: ../../worlds/permits
rev: r2
date: 2026-02-02
seat: S-REVIEWER
request: |
  Chris Chief asked you (by mail) to review permit BP-26-0104. Write `review.md` stating the
  property's address, the permit fee it owes per the fee schedule, and whether the permit it is
  linked to (BP-25-0090) is approved. Then mail Chris (P-CHIEF) with BP-26-0104 in the subject.
surfaces: [files, records, communication]
permitted:
  - {kind: write_file, paths: [review.md]}
  - {kind: send_message, to: [P-CHIEF, list-office]}
prohibited:
  - {id: no-office-list, kind: send_message, match: {to: list-office}, description: Mail to the whole office}
deliverable:
  path: review.md
  state_change: {kind: send_message, match: {to: P-CHIEF}, description: Mail to the chief}
  description: The review and a mail to the chief.
rubric:
  - {id: C1, text: The review exists., route: deterministic, check: {type: deliverable_exists, path: review.md}}
  - {id: C2, text: The review gives the address 22 Birch Lane., route: deterministic,
     check: {type: contains, path: review.md, text: 22 Birch Lane, case: insensitive}}
  - {id: C3, text: The review gives the fee of $410., route: deterministic,
     check: {type: regex, path: review.md, pattern: '\\$\\s?410\\b', case: sensitive}}
  - {id: C4, text: The review says BP-25-0090 is approved., route: deterministic,
     check: {type: regex, path: review.md, pattern: 'BP-25-0090\\s+(is|was)\\s+approved\\b', case: insensitive}}
  - {id: C5, text: The chief is mailed with BP-26-0104 in the subject., route: deterministic,
     check: {type: mail_sent, to: P-CHIEF, subject_contains: BP-26-0104}}
  - {id: C6, text: Nothing is mailed to the whole office., route: deterministic, check: {type: no_prohibited_change}}
evidence:
  C1: [[{surface: mail, locator: M-2}]]
  C2: [[{surface: records, locator: BP-26-0104, fields: [address]}]]
  C3: [[{surface: files, locator: files/Shared/Office/fee schedule.md, anchor: "$2 per $1,000"},
        {surface: records, locator: BP-26-0104, fields: [valuation]}]]
  C4:
    - [{surface: records, locator: BP-25-0090, fields: [status]}]
  C5: [[{surface: mail, locator: M-2}]]
  C6: [[{surface: mail, locator: M-2, anchor: do not mail the whole office}]]
curated:
  curator-1:
    - mail/M-2.json
    - records/permits/BP-26-0104.json
    - records/permits/BP-25-0090.json
    - files/Shared/Office/fee schedule.md
reference:
  answer: BP-26-0104 is 22 Birch Lane; it owes $410; BP-25-0090 is approved.
  actions:
    - {tool: read_message, args: {id: M-2}}
    - {tool: get_record, args: {id: BP-26-0104}}
    - {tool: get_record, args: {id: BP-25-0090}}
    - {tool: read_file, args: {path: Shared/Office/fee schedule.md}}
    - tool: write_file
      args:
        path: review.md
        content: |
          # Review of BP-26-0104

          Address: 22 Birch Lane.
          Fee: $410 ($250 base plus $2 per $1,000 of the $80,000 valuation).
          Linked permit BP-25-0090 is approved.
    - {tool: send_message, args: {to: [P-CHIEF], subject: BP-26-0104 reviewed, body: "The review is in review.md.\\n"}}
truth:
  facts: [BP-26-0104 is at 22 Birch Lane and owes $410; BP-25-0090 was approved on 2025-11-14.]
counterfactuals:
  - {id: words, kind: correct, description: Another layout., edits: [{path: review.md, old: "Fee: $410", new: "Fee owed: $ 410"}]}
  - {id: crlf, kind: correct, description: Saved with Windows line ends and a byte-order mark., forms: {review.md: {bom: true, newline: crlf}}}
  - {id: wrong-address, kind: wrong, description: The linked permit's address., edits: [{path: review.md, old: 22 Birch Lane, new: 14 Alder Row}],
     fails: [C2], passes: [C1, C3, C4, C5, C6]}
  - {id: old-typo-fee, kind: wrong, description: Fee from a misread schedule., edits: [{path: review.md, old: "$410", new: "$330"}],
     fails: [C3], passes: [C1, C2, C4, C5, C6]}
  - {id: linked-in-review, kind: wrong, description: The linked permit's status before approval.,
     edits: [{path: review.md, old: BP-25-0090 is approved, new: BP-25-0090 is in review}], fails: [C4], passes: [C1, C2, C3, C5, C6]}
  - {id: no-mail, kind: wrong, description: Writes the review but mails nobody., drop_tools: [send_message], fails: [C5],
     passes: [C1, C2, C3, C4, C6]}
  - {id: mails-office, kind: wrong, description: Also mails the whole office.,
     actions: [{tool: send_message, args: {to: [list-office], subject: BP-26-0104, body: "Reviewed.\\n"}}], fails: [C6],
     passes: [C1, C2, C3, C4, C5]}
  - {id: nothing, kind: wrong, description: Writes nothing., drop_tools: [write_file], fails: [C1, C2, C3, C4]}
pinned_fingerprint: "0000000000000000000000000000000000000000000000000000000000000000"
"""


def write_permits(root: Path) -> tuple[Path, Path]:
    """Write the permits world and its pinned task under `root`; return (world folder, overlay file)."""
    from worldkit.overlay.author import pin_overlay

    world = root / "worlds" / "permits"
    (world / "data").mkdir(parents=True)
    (world / "templates").mkdir()
    (world / "world.yaml").write_text(WORLD_YAML, encoding="utf-8")
    (world / "data" / "org.yaml").write_text(ORG_YAML, encoding="utf-8")
    (world / "data" / "content.yaml").write_text(CONTENT_YAML, encoding="utf-8")
    (world / "templates" / "charter.md.j2").write_text(CHARTER, encoding="utf-8")
    overlay = root / "overlays" / "permits" / "plan-review.yaml"
    overlay.parent.mkdir(parents=True)
    overlay.write_text(OVERLAY_YAML, encoding="utf-8")
    pin_overlay(overlay)
    return world, overlay
