"""Bulk background of the clinical-site world (Harbourview CRU during ALD-2207 start-up).

The loader calls `generate(world, rng)`. The hand-written story lines the tasks rest on live in
`data/stories/`; this module writes what a research unit accumulates around them: training
records and certificates, study CVs and registrations, SOPs, weekly operations minutes,
equipment calibration certificates, pharmacy temperature logs, HREB submissions and CTMS
milestones of the unit's other studies, the ALD-2207 pre-screening log, sponsor and safety
correspondence, staff files, routine mail and chat.

The long tables (the SOPs, the ISF's fixed background documents) are YAML banks in `gen/banks/`.

Determinism: every part draws from its own `random.Random` seeded from the world's seed and the
part's name; nothing reads the clock or the environment (only the world's own banks). Dates come
from fixed tables, so no item names a date later than its own (expiry dates inside a training
record are data, not events).

The training table below is also story: it carries the four delegation-log gaps of the
delegation-training-check task (see data/stories/delegation.yaml) and must stay consistent with it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from pathlib import Path
from typing import Any

import yaml

D = dt.date
BANKS = Path(__file__).resolve().parent / "gen" / "banks"  # the long tables: SOPs, fixed ISF documents
SNAPSHOT = D(2026, 4, 15)  # the start-up snapshot (world default_date); later content is dated after it


def _iso(d: D) -> str:
    return d.isoformat()


def _long(d: D) -> str:
    return f"{d.day} {d.strftime('%b %Y')}"


def _add_years(d: D, years: int) -> D:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 Feb
        return d.replace(year=d.year + years, day=28)


def _part_rng(seed: int, name: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _bank(file: str, name: str) -> Any:
    """The table `name` of this world's `gen/banks/<file>.yaml` (plain YAML values; dates are ISO strings)."""
    with open(BANKS / f"{file}.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)[name]


# --------------------------------------------------------------------------------------------
# People of the unit (ids as in data/org.yaml) and their study folders
# --------------------------------------------------------------------------------------------

STAFF = {
    "hmarsh": ("Helena Marsh", "DERM", "Consultant dermatologist", "clinician"),
    "sachebe": ("Samuel Achebe", "DERM", "Consultant dermatologist", "clinician"),
    "lberg": ("Lina Berg", "DERM", "Specialty registrar in dermatology", "clinician"),
    "ohaddad": ("Omar Haddad", "DERM", "Clinical research fellow", "clinician"),
    "gwhitfield": ("Grace Whitfield", "CRU", "CRU manager", "office"),
    "pnandakumar": ("Priya Nandakumar", "CRU-REG", "Regulatory and start-up coordinator", "office"),
    "dreyes": ("Daniel Reyes", "CRU-COORD", "Lead clinical research coordinator", "office"),
    "mtanaka": ("Mei Tanaka", "CRU-COORD", "Clinical research coordinator", "office"),
    "fgallagher": ("Fiona Gallagher", "CRU-COORD", "Senior research nurse", "nurse"),
    "twren": ("Tobias Wren", "CRU-COORD", "Research nurse", "nurse"),
    "rcoleman": ("Ruth Coleman", "CRU-COORD", "Data coordinator", "office"),
    "mbell": ("Marcus Bell", "CRU-QA", "CRU quality and training officer", "office"),
    "akarim": ("Aisha Karim", "IDS", "Research pharmacist", "pharmacy"),
    "lbrandt": ("Leo Brandt", "IDS", "Pharmacy technician", "pharmacy"),
    "npetrova": ("Nadia Petrova", "LAB", "Biomedical scientist", "lab"),
    "kobi": ("Kwame Obi", "LAB", "Laboratory quality manager", "lab"),
}

# On the ALD-2207 delegation log (ISF section 06 holds their study documents).
DELEGATED = ["hmarsh", "sachebe", "lberg", "ohaddad", "dreyes", "mtanaka", "fgallagher", "twren",
             "rcoleman", "akarim", "lbrandt", "npetrova", "pnandakumar"]

COURSES = {
    "GCP": ("Good Clinical Practice (ICH E6(R3)) — full course", 3),
    "CONS-101": ("HREB informed-consent course", None),
    "IWRS-ALD": ("Aldmere IWRS user training (ALD-2207)", None),
    "EDC-ALD": ("ALD-2207 EDC user training", None),
    "PASI-CERT": ("PASI/IGA rater certification (DermaRate)", 2),
    "ECG-CL12": ("CardioLine 12 ECG device training", None),
    "IATA-DG": ("IATA dangerous goods, category B (UN3373) packaging", 2),
    "FIRE": ("Fire safety (annual)", 1),
    "IG": ("Information governance and data protection (annual)", 1),
    "SAFE-L2": ("Safeguarding adults and children, level 2", 3),
    "MH": ("Manual handling", 2),
    "BLS": ("Basic life support", 1),
    "EDI": ("Equality, diversity and inclusion", 3),
}

# (person, course) -> completion dates in order; a renewal in progress is ("enrolled", date,
# status-date, status-text[, completion-date-after-snapshot]).
TRAINING: dict[str, dict[str, list[Any]]] = {
    "hmarsh": {"GCP": [D(2024, 6, 11)], "CONS-101": [D(2019, 3, 4)], "PASI-CERT": [D(2026, 3, 25)],
               "ECG-CL12": [D(2025, 11, 5)], "EDC-ALD": [D(2026, 3, 27)]},
    "sachebe": {"GCP": [D(2023, 1, 10), D(2026, 1, 15)], "CONS-101": [D(2023, 9, 12)],
                "PASI-CERT": [D(2026, 3, 26)], "ECG-CL12": [D(2025, 11, 5)], "EDC-ALD": [D(2026, 3, 27)]},
    "lberg": {"GCP": [D(2023, 5, 2)], "CONS-101": [D(2024, 2, 14)], "PASI-CERT": [D(2026, 3, 30)],
              "EDC-ALD": [D(2026, 3, 27)]},
    "ohaddad": {"GCP": [D(2025, 9, 18)], "CONS-101": [D(2025, 10, 2)], "PASI-CERT": [D(2026, 4, 10)]},
    "gwhitfield": {"GCP": [D(2024, 9, 9)], "CONS-101": [D(2021, 6, 1)]},
    "pnandakumar": {"GCP": [D(2025, 2, 17)]},
    "dreyes": {"GCP": [D(2024, 11, 4)], "CONS-101": [D(2022, 5, 10)], "EDC-ALD": [D(2026, 3, 25)]},
    "mtanaka": {"GCP": [D(2025, 3, 3)], "EDC-ALD": [D(2026, 3, 25)],
                "CONS-101": [("enrolled", D(2026, 3, 20), D(2026, 3, 20), "not started")]},
    "fgallagher": {"GCP": [D(2025, 1, 20)], "ECG-CL12": [D(2025, 11, 5)],
                   "PASI-CERT": [("enrolled", D(2026, 3, 18), D(2026, 4, 2), "exam postponed (vendor portal outage)", D(2026, 4, 13))]},
    "twren": {"GCP": [D(2023, 2, 28), ("enrolled", D(2026, 3, 30), D(2026, 4, 3), "in progress (module 2 of 4)", D(2026, 4, 20))],
              "ECG-CL12": [D(2025, 11, 5)]},
    "rcoleman": {"GCP": [D(2024, 8, 19)], "EDC-ALD": [D(2026, 3, 25)]},
    "mbell": {"GCP": [D(2025, 5, 12)], "CONS-101": [D(2020, 11, 3)]},
    "akarim": {"GCP": [D(2025, 6, 2)], "IWRS-ALD": [D(2026, 3, 31)]},
    "lbrandt": {"GCP": [D(2024, 10, 14)], "IWRS-ALD": [D(2026, 4, 1)]},
    "npetrova": {"GCP": [D(2024, 12, 9)],
                 "IATA-DG": [D(2024, 3, 31), ("enrolled", D(2026, 4, 2), D(2026, 4, 2), "booked: classroom session 28 Apr 2026", D(2026, 4, 28))]},
    "kobi": {"GCP": [D(2023, 10, 2)]},
}

MANDATORY = {"clinician": ["FIRE", "IG", "SAFE-L2", "BLS", "EDI"], "nurse": ["FIRE", "IG", "SAFE-L2", "MH", "BLS", "EDI"],
             "office": ["FIRE", "IG", "SAFE-L2", "EDI"], "pharmacy": ["FIRE", "IG", "MH", "EDI"],
             "lab": ["FIRE", "IG", "MH", "EDI"]}

OTHER_STUDIES = [
    ("BRX-301", "Brevanta Respiratory", "phase 3, severe eosinophilic asthma", "recruiting", 20, "sachebe"),
    ("KLM-118", "Kelmont Pharma", "phase 2, chronic spontaneous urticaria", "recruiting", 12, "lberg"),
    ("ORB-044", "Orbis Biologics", "phase 3, hidradenitis suppurativa", "follow-up", 9, "hmarsh"),
    ("NVT-210", "Novantis Dermatology (fictional)", "phase 2, vitiligo", "recruiting", 15, "hmarsh"),
    ("HRB-REG-02", "Harbourview (academic)", "registry, biologic safety in psoriasis", "recruiting", 150, "hmarsh"),
    ("CTX-509", "Cortexa Therapeutics", "phase 3, atopic dermatitis long-term extension", "follow-up", 18, "sachebe"),
    ("PLM-077", "Palmera Bio", "phase 1b, alopecia areata", "closed to recruitment", 8, "lberg"),
    ("SVR-330", "Silverline Vaccines", "phase 3, herpes zoster vaccine in immunomodulated adults", "start-up", 25, "sachebe"),
]


class _Out:
    def __init__(self) -> None:
        self.documents: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []

    def doc(self, id: str, system: str, path: str, visible_from: D, text: str | None = None, **kw: Any) -> None:
        item: dict[str, Any] = {"id": id, "system": system, "path": path, "visible_from": _iso(visible_from)}
        if text is not None:
            item["text"] = text
        item.update(kw)
        self.documents.append(item)

    def result(self) -> dict[str, list[dict[str, Any]]]:
        return {"documents": self.documents, "records": self.records, "messages": self.messages}


# --------------------------------------------------------------------------------------------
# Training: LMS records, GCP certificates, CVs and registrations
# --------------------------------------------------------------------------------------------

def _lms_record(out: _Out, person: str, course: str, entry: Any, seq: int) -> None:
    name, dept, _title, _kind = STAFF[person]
    cname, valid_years = COURSES[course]
    rid = f"LMS-{course}-{person}-{seq}"
    events: list[dict[str, Any]] = []
    if isinstance(entry, tuple):
        _tag, enrolled, status_day, status_text, *done = entry
        events.append({"date": _iso(enrolled), "kind": "created", "by": "mbell", "status": "enrolled",
                       "fields": {"person": name, "course": course, "course_title": cname}})
        if status_day != enrolled:
            events.append({"date": _iso(status_day), "kind": "status", "by": person, "status": status_text})
        elif status_text != "enrolled":
            events[0]["note"] = status_text
            events[0]["status"] = status_text
        if done:
            completed = done[0]
            fields: dict[str, Any] = {"completed": _iso(completed), "certificate": f"CERT-{course}-{completed:%y%m%d}-{person[:3].upper()}"}
            if valid_years:
                fields["expires"] = _iso(_add_years(completed, valid_years))
            events.append({"date": _iso(completed), "kind": "update", "by": person, "status": "completed", "fields": fields})
    else:
        completed = entry
        enrolled = completed - dt.timedelta(days=7 + (seq * 5) % 20)
        events.append({"date": _iso(enrolled), "kind": "created", "by": "mbell", "status": "enrolled",
                       "fields": {"person": name, "course": course, "course_title": cname}})
        fields = {"completed": _iso(completed), "certificate": f"CERT-{course}-{completed:%y%m%d}-{person[:3].upper()}"}
        if valid_years:
            expires = _add_years(completed, valid_years)
            fields["expires"] = _iso(expires)
        events.append({"date": _iso(completed), "kind": "update", "by": person, "status": "completed", "fields": fields})
        if valid_years and _add_years(completed, valid_years) <= D(2026, 6, 30):
            expires = _add_years(completed, valid_years)
            events.append({"date": _iso(expires), "kind": "status", "by": "mbell", "status": "expired",
                           "note": "Certificate validity ended; renewal required."})
    out.records.append({"id": rid, "system": "lms", "type": "training record", "title": f"{cname} — {name}",
                        "owner": person, "department": dept, "events": events})


def _mandatory_dates(rng: random.Random, course: str) -> list[D]:
    _cname, valid = COURSES[course]
    years = valid or 3
    last = D(2026, 3, 31) - dt.timedelta(days=rng.randint(20, 330 * years))
    first = _add_years(last, -years) + dt.timedelta(days=rng.randint(-20, 0))
    return [first, last] if rng.random() < 0.5 else [last]


def training(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "training")
    for person in STAFF:
        kind = STAFF[person][3]
        courses: dict[str, list[Any]] = {c: list(v) for c, v in TRAINING.get(person, {}).items()}
        for course in MANDATORY[kind]:
            courses.setdefault(course, _mandatory_dates(rng, course))
        for course in sorted(courses):
            for seq, entry in enumerate(courses[course], start=1):
                _lms_record(out, person, course, entry, seq)


def _gcp_dates(person: str) -> list[D]:
    return [e for e in TRAINING[person].get("GCP", []) if isinstance(e, D)]


CV_LINES = {
    "hmarsh": ["MB BS 2002; MD (dermatology) 2011", "Consultant dermatologist, Harbourview, since 2012",
               "PI on 9 industry studies in psoriasis and atopic dermatitis since 2014"],
    "sachebe": ["MB ChB 2006; specialty certificate in dermatology 2015", "Consultant dermatologist, Harbourview, since 2016",
                "Sub-investigator on 6 studies, PI on BRX-301 and CTX-509"],
    "lberg": ["MD 2016", "Specialty registrar in dermatology, Harbourview, since 2022", "Sub-investigator on KLM-118 and PLM-077"],
    "dreyes": ["BSc biomedical sciences 2012", "Clinical research coordinator since 2015; lead CRC since 2021",
               "Coordinated 14 industry studies"],
    "mtanaka": ["BSc psychology 2019", "Research assistant 2020–2023; clinical research coordinator since 2024"],
    "fgallagher": ["RN 2008; MSc clinical research 2016", "Senior research nurse, Harbourview CRU, since 2017"],
    "twren": ["RN 2014", "Ward nurse 2014–2020; research nurse, Harbourview CRU, since 2020"],
    "rcoleman": ["BSc mathematics 2010", "Data coordinator, Harbourview CRU, since 2018"],
    "akarim": ["MPharm 2009; clinical trials pharmacy certificate 2014", "Research pharmacist, Investigational Drug Service, since 2015"],
    "lbrandt": ["BTEC pharmaceutical science 2013", "Pharmacy technician (clinical trials) since 2017"],
    "npetrova": ["BSc biomedical science 2011; registered biomedical scientist 2012", "Research samples section, Clinical Laboratory, since 2019"],
    "pnandakumar": ["MSc regulatory affairs 2018", "Regulatory and start-up coordinator, Harbourview CRU, since 2021"],
}
CV_SIGNED = {"hmarsh": D(2025, 10, 14), "sachebe": D(2025, 11, 3), "lberg": D(2026, 3, 12), "dreyes": D(2025, 9, 1),
             "mtanaka": D(2026, 3, 20), "fgallagher": D(2024, 12, 2), "twren": D(2025, 2, 10), "rcoleman": D(2025, 6, 23),
             "akarim": D(2025, 4, 7), "lbrandt": D(2024, 11, 18), "npetrova": D(2025, 1, 13), "pnandakumar": D(2025, 3, 3)}
REGISTRATION = {"hmarsh": ("medical register", "4471902", D(2026, 1, 31)), "sachebe": ("medical register", "6120458", D(2026, 2, 28)),
                "lberg": ("medical register", "7390211", D(2026, 1, 31)), "ohaddad": ("medical register", "7783120", D(2026, 3, 31)),
                "fgallagher": ("nursing register", "08H1207E", D(2026, 3, 31)), "twren": ("nursing register", "14K0893W", D(2026, 3, 31)),
                "akarim": ("pharmacy register", "2093381", D(2025, 12, 31))}


def study_staff_files(out: _Out, seed: int) -> None:
    for person in DELEGATED:
        name, _dept, title, _kind = STAFF[person]
        folder = f"06 Staff/{name}"
        for gcp in _gcp_dates(person):
            expires = _add_years(gcp, 3)
            out.doc(f"ISF-GCP-{person}-{gcp:%Y%m%d}", "isf", f"{folder}/GCP certificate {name} {gcp:%d%b%Y}.md", gcp,
                    template="certificate.md.j2", department="CRU-COORD", title=f"GCP certificate — {name}",
                    vars={"name": name, "course": COURSES["GCP"][0], "provider": "Harbourview Research Academy",
                          "completed": _long(gcp), "validity": f"3 years (valid to {_long(expires)})",
                          "number": f"HRA-GCP-{gcp:%y%m%d}-{person[:3].upper()}"})
        if person in CV_SIGNED:
            signed = CV_SIGNED[person]
            out.doc(f"ISF-CV-{person}", "isf", f"{folder}/CV {name} signed {signed:%d%b%Y}.md", signed,
                    template="cv.md.j2", department="CRU-COORD", title=f"Study CV — {name}",
                    vars={"name": name, "title": title, "lines": CV_LINES[person], "signed": _long(signed)})
        if person in REGISTRATION:
            register, number, checked = REGISTRATION[person]
            out.doc(f"ISF-REG-{person}", "isf", f"{folder}/Registration check {name} {checked:%d%b%Y}.md", checked,
                    department="CRU-COORD", title=f"Registration check — {name}",
                    text=(f"# Professional registration check — {name}\n\n"
                          f"Register: {register} · Number: {number} · Status on {_long(checked)}: registered, no conditions.\n"
                          f"Checked by: M. Bell (CRU quality and training officer) on the public register.\n"))
        for course in ("PASI-CERT", "IATA-DG", "IWRS-ALD", "EDC-ALD", "CONS-101", "ECG-CL12"):
            for entry in TRAINING.get(person, {}).get(course, []):
                done = entry if isinstance(entry, D) else (entry[4] if len(entry) > 4 else None)
                if done is None or done > SNAPSHOT + dt.timedelta(days=60):
                    continue
                valid = COURSES[course][1]
                validity = f"{valid} years (valid to {_long(_add_years(done, valid))})" if valid else "no expiry"
                out.doc(f"ISF-CERT-{course}-{person}-{done:%Y%m%d}", "isf",
                        f"{folder}/Training certificate {course} {name} {done:%d%b%Y}.md", done,
                        template="certificate.md.j2", department="CRU-COORD", title=f"{course} certificate — {name}",
                        vars={"name": name, "course": COURSES[course][0],
                              "provider": {"PASI-CERT": "DermaRate Ltd", "IATA-DG": "Freightsafe Training",
                                           "IWRS-ALD": "Aldmere Therapeutics", "EDC-ALD": "Aldmere Therapeutics",
                                           "CONS-101": "Harbourview Health Research Ethics Board",
                                           "ECG-CL12": "CardioLine Medical"}[course],
                              "completed": _long(done), "validity": validity,
                              "number": f"{course}-{done:%y%m%d}-{person[:3].upper()}"})


# --------------------------------------------------------------------------------------------
# CRU drive: SOPs, minutes, calibration certificates, other studies
# --------------------------------------------------------------------------------------------

# Research devices by model: (description, calibration vendor, asset numbers), in asset order.
ASSETS = [
    ("CardioLine 12 electrocardiograph", "CardioLine Medical", ["ECG-01", "ECG-02"]),
    ("Refrigerated centrifuge RC-4", "Labtech Services", ["CEN-01", "CEN-02"]),
    ("-80 °C freezer UF-700", "ColdChain Engineering", ["FZ-01", "FZ-02"]),
    ("Sample refrigerator 2–8 °C", "ColdChain Engineering", ["FR-CRU-01"]),
    ("Patient scale PS-200", "Weighright", ["SCL-01"]),
    ("Automated blood pressure monitor", "Vitalis Devices", ["BP-01", "BP-02"]),
    ("Digital thermometer", "Vitalis Devices", ["THM-01"]),
    ("Stadiometer", "Weighright", ["STD-01"]),
]


def cru_drive(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "cru")
    for code, sop in _bank("cru_drive", "cru_sops").items():
        title, version, effective, steps = sop["title"], sop["version"], D.fromisoformat(sop["effective"]), sop["steps"]
        out.doc(f"SOP-{code}", "cru-drive", f"SOPs/{code} v{version} {title}.md", effective, template="sop.md.j2",
                department="CRU-QA", title=f"{code} {title}",
                vars={"code": code, "title": title, "version": version, "effective": _long(effective),
                      "review": _long(_add_years(effective, 2)), "steps": steps})
    for desc, vendor, assets in ASSETS:
        for asset in assets:
            base = D(2024, 3, 1) + dt.timedelta(days=rng.randint(0, 300))
            for year in (0, 1, 2):
                day = _add_years(base, year)
                if day > D(2026, 6, 30):
                    continue
                result = "pass" if not (asset == "BP-02" and year == 1) else "pass after adjustment"
                out.doc(f"CAL-{asset}-{day:%Y%m%d}", "cru-drive", f"Equipment/Calibration/{asset}/{asset} calibration certificate {day:%Y-%m-%d}.md",
                        day, template="calibration.md.j2", department="CRU-QA", title=f"{asset} calibration {day:%Y-%m-%d}",
                        vars={"asset": asset, "desc": desc, "vendor": vendor, "date": _long(day), "due": _long(_add_years(day, 1)),
                              "result": result, "cert": f"{vendor.split()[0][:3].upper()}-{day:%y%m%d}-{asset}",
                              "reading": f"{rng.uniform(-0.4, 0.4):+.2f}"})
    for code, sponsor, design, status, target, pi in OTHER_STUDIES:
        start = D(2024, 9, 1) + dt.timedelta(days=rng.randint(0, 360))
        out.doc(f"STUDY-{code}", "cru-drive", f"Studies/{code}/{code} study summary.md", start, department="CRU",
                title=f"{code} study summary",
                text=(f"# {code} — study summary\n\nSponsor: {sponsor}\nDesign: {design}\nPI: {STAFF[pi][0]}\n"
                      f"Site target: {target} participants\nStatus: {status}\nCRU lead coordinator: "
                      f"{STAFF[rng.choice(['dreyes', 'mtanaka'])][0]}\n"))
    minutes(out, rng)


ALD_LINES = [
    (D(2026, 1, 5), "HREB initial application SUB-2026-011 submitted 5 Jan; board meeting 27 Jan. CTA in negotiation."),
    (D(2026, 2, 3), "HREB requested modifications (ICF placebo wording, patient advice contact, pre-screening). Priya revising the ICF to v2.0."),
    (D(2026, 2, 17), "ICF v2.0 resubmitted 17 Feb. CTA budget schedule v2 back from Aldmere."),
    (D(2026, 3, 10), "HREB favourable opinion 10 Mar (protocol v1.0, ICF-S-2.0, pre-screening). Pre-screening of clinic lists can start."),
    (D(2026, 3, 23), "Aldmere issued amendment 1 (liver tests, ICF master v3.0) on 20 Mar: we will be activated on amendment 1, so HREB must approve it first. Spanish ICF submitted 19 Mar."),
    (D(2026, 3, 30), "CTA fully executed 30 Mar. Amendment 1 submission being prepared for 2 Apr."),
    (D(2026, 4, 6), "Amendment 1 (SUB-2026-058) submitted 2 Apr; HREB full board 21 Apr. FR-07 excursion 6 Apr (empty fridge), requalification planned. SIV Wednesday."),
    (D(2026, 4, 13), "SIV held 8 Apr; follow-up letter today with outstanding items. Aldmere wants activation on 20 Apr — Grace to reply against the checklist."),
    (D(2026, 4, 20), "Awaiting HREB decision on amendment 1 (board 21 Apr). Outstanding site documents being chased."),
    (D(2026, 4, 27), "Amendment 1 and ICF-S-3.0 approved 22 Apr. Re-consent plan not needed (no participants yet). Filing lab documents and Dr Haddad's CV."),
    (D(2026, 5, 4), "Site activated 4 May on protocol v2.0. First IP shipment expected 7 May."),
    (D(2026, 5, 11), "First participants booked for screening on 13 May."),
]


def minutes(out: _Out, rng: random.Random) -> None:
    enrol = {s[0]: rng.randint(0, max(1, s[4] // 3)) for s in OTHER_STUDIES}
    day = D(2026, 1, 5)
    number = 1
    while day <= D(2026, 5, 25):
        ald = [text for when, text in ALD_LINES if when <= day][-1]
        rows = []
        for code, _sponsor, _design, status, target, _pi in OTHER_STUDIES:
            if status == "recruiting" and enrol[code] < target and rng.random() < 0.45:
                enrol[code] += rng.randint(1, 2 if target < 50 else 4)
            rows.append(f"| {code} | {status} | {min(enrol[code], target)} / {target} |")
        absent = rng.sample(sorted(STAFF), 2)
        out.doc(f"MIN-CRU-{day:%Y%m%d}", "cru-drive", f"Meetings/Operations/{day:%Y}/CRU operations meeting {day:%Y-%m-%d}.md", day,
                department="CRU", title=f"CRU operations meeting {day:%Y-%m-%d}",
                text=(f"# CRU weekly operations meeting — {_long(day)} (no. {number})\n\n"
                      f"Chair: Grace Whitfield · Apologies: {STAFF[absent[0]][0]}, {STAFF[absent[1]][0]}\n\n"
                      f"## ALD-2207 (start-up)\n\n{ald}\n\n## Portfolio\n\n| Study | Status | Enrolled / target |\n|---|---|---|\n"
                      + "\n".join(rows) + "\n"))
        day += dt.timedelta(days=7)
        number += 1


# --------------------------------------------------------------------------------------------
# ISF background, pharmacy, staff files
# --------------------------------------------------------------------------------------------

def isf_background(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "isf")
    for path, item in _bank("isf", "isf_background").items():
        ident = "ISF-BG-" + hashlib.sha256(path.encode()).hexdigest()[:10]
        out.doc(ident, "isf", path, D.fromisoformat(item["filed"]), text=item["text"], title=item["title"], department="CRU-REG")
    for investigator in ("hmarsh", "sachebe", "lberg", "ohaddad"):
        name = STAFF[investigator][0]
        day = {"hmarsh": D(2026, 3, 2), "sachebe": D(2026, 3, 2), "lberg": D(2026, 3, 4), "ohaddad": D(2026, 4, 10)}[investigator]
        out.doc(f"ISF-FDF-{investigator}", "isf", f"05 Regulatory/Financial disclosure {name} {day:%d%b%Y}.md", day,
                department="CRU-REG", title=f"Financial disclosure — {name}", classification="confidential",
                text=(f"# Investigator financial disclosure — ALD-2207\n\nInvestigator: {name}\nSigned: {_long(day)}\n"
                      "Significant payments, equity or proprietary interest in Aldmere Therapeutics: none declared.\n"))
    # Safety letters: quarterly SUSAR line listings and monthly sponsor newsletters.
    quarters = [(D(2025, 7, 15), "Q2 2025"), (D(2025, 10, 15), "Q3 2025"), (D(2026, 1, 15), "Q4 2025"), (D(2026, 4, 14), "Q1 2026")]
    for day, label in quarters:
        n = rng.randint(0, 3)
        out.doc(f"ISF-SUSAR-{day:%Y%m}", "isf", f"13 Safety/SUSAR line listing ravonetide {label}.md", day, department="CRU-REG",
                title=f"SUSAR line listing {label}",
                text=(f"# Aldmere — six-monthly/quarterly SUSAR line listing, ravonetide programme, {label}\n\n"
                      f"SUSARs in the period: {n}." + ("" if n == 0 else " " + "; ".join(
                          rng.choice(["cellulitis at injection site (ALD-2103)", "acute pancreatitis (ALD-2105)", "hepatitis, drug-induced (ALD-2103)",
                                      "anaphylactic reaction (ALD-2105)", "herpes zoster, disseminated (ALD-2103)"]) for _ in range(n)) + ".")
                      + "\nInvestigator action: file in ISF section 13; forward to the HREB per its reporting policy.\n"))
    topics = ["enrolment plan across 42 sites", "EDC go-live and completion guidelines", "central laboratory kit ordering",
              "IWRS user access requests", "amendment 1 overview", "activation wave planning"]
    for i, month in enumerate([D(2025, 11, 10), D(2025, 12, 8), D(2026, 1, 12), D(2026, 2, 9), D(2026, 3, 9), D(2026, 4, 13)]):
        out.doc(f"ISF-NEWS-{month:%Y%m}", "isf", f"12 Correspondence/Aldmere study newsletter {i + 1:02d} {month:%b%Y}.md", month,
                department="CRU-REG", title=f"Study newsletter {i + 1}",
                text=(f"# LUMEN-2 newsletter no. {i + 1} — {month:%B %Y}\n\nTopic of the month: {topics[i]}.\n"
                      f"Sites activated so far: {[0, 0, 0, 3, 9, 14][i]} of 42. Participants randomised: {[0, 0, 0, 2, 11, 29][i]}.\n"))
    pre_screening(out, rng)


REASONS = ["PASI below 12 at last clinic visit", "prior IL-17 inhibitor failure", "ALT above 2 × ULN in last bloods",
           "age over 75", "guttate psoriasis only", "pregnancy planned within the study period", "declined research contact (clinic note)",
           "current biologic with good response", "active latent TB treatment"]


def pre_screening(out: _Out, rng: random.Random) -> None:
    day = D(2026, 3, 11)
    lines = ["prescreen_no,date_reviewed,reviewer,age_band,source,outcome,reason"]
    n = 0
    while day <= D(2026, 4, 14):
        if day.weekday() < 5:
            for _ in range(rng.randint(0, 2)):
                n += 1
                reviewer = rng.choice(["dreyes", "mtanaka", "fgallagher"])
                eligible = rng.random() < 0.4
                reason = "" if eligible else rng.choice(REASONS)
                outcome = "potentially eligible — approach after activation" if eligible else "not eligible"
                band = rng.choice(["18–29", "30–44", "45–59", "60–75"])
                source = rng.choice(["psoriasis clinic list", "biologics clinic list", "GP referral letter"])
                pid = f"PS-114-{n:03d}"
                out.records.append({"id": pid, "system": "ctms", "type": "pre-screening entry", "title": f"ALD-2207 pre-screen {pid}",
                                    "owner": reviewer, "department": "CRU-COORD",
                                    "events": [{"date": _iso(day), "kind": "created", "by": reviewer, "status": outcome,
                                                "fields": {"study": "ALD-2207", "age_band": band, "source": source,
                                                           **({"reason": reason} if reason else {})}}]})
                lines.append(f"{pid},{_iso(day)},{STAFF[reviewer][0]},{band},{source},{outcome},{reason}")
        day += dt.timedelta(days=1)
    out.doc("ISF-PRESCREEN-LOG", "isf", "11 Screening/Pre-screening log ALD-2207 (export 14Apr2026).csv", D(2026, 4, 14),
            department="CRU-COORD", title="Pre-screening log export", text="\n".join(lines) + "\n")


def pharmacy(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "pharmacy")
    units = [("FR-07", "ALD-2207", 2.0, 8.0), ("FR-08", "BRX-301 and KLM-118", 2.0, 8.0), ("FZ-IDS-02", "CTX-509", -25.0, -15.0)]
    for unit, use, lo, hi in units:
        month = D(2026, 1, 1)
        while month <= D(2026, 4, 1):
            rows = ["date,min_c,max_c,checked_by,comment"]
            day = month
            while day.month == month.month and day < SNAPSHOT:
                mid = (lo + hi) / 2
                mn, mx = round(mid - rng.uniform(0.8, 1.6), 1), round(mid + rng.uniform(0.6, 1.5), 1)
                comment = ""
                if unit == "FR-07" and day == D(2026, 4, 6):
                    mx, comment = 9.1, "EXCURSION 02:10-03:25 door seal; unit empty; see excursion report"
                if unit == "FR-07" and day == D(2026, 4, 7):
                    comment = "out of service; seal replaced"
                rows.append(f"{_iso(day)},{mn},{mx},{rng.choice(['akarim', 'lbrandt'])},{comment}")
                day += dt.timedelta(days=1)
            last = day - dt.timedelta(days=1)
            out.doc(f"PH-TEMP-{unit}-{month:%Y%m}", "pharmacy-drive", f"Temperature logs/{unit}/{unit} temperature log {month:%Y-%m}.csv",
                    last, department="IDS", title=f"{unit} temperature log {month:%Y-%m} ({use})", text="\n".join(rows) + "\n")
            month = D(month.year + (month.month // 12), month.month % 12 + 1, 1)
    for code, *_rest in OTHER_STUDIES[:6]:
        out.doc(f"PH-IPRECEIPT-{code}", "pharmacy-drive", f"{code}/IP receipts/{code} IP receipt log.csv", D(2026, 3, 31), department="IDS",
                title=f"{code} IP receipt log",
                text="date,shipment,kits,temperature_logger,received_by\n" + "\n".join(
                    f"{_iso(D(2025, 10, 1) + dt.timedelta(days=30 * i + rng.randint(0, 9)))},SH-{code}-{i + 1:03d},{rng.randint(4, 16)},in range,{rng.choice(['akarim', 'lbrandt'])}"
                    for i in range(6)) + "\n")


def staff_files(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "staff")
    for person, (name, dept, title, _kind) in STAFF.items():
        if dept not in ("CRU", "CRU-REG", "CRU-COORD", "CRU-QA"):
            continue
        for year in (2024, 2025):
            day = D(year + 1, 1, 20) + dt.timedelta(days=rng.randint(0, 40))
            out.doc(f"STAFF-APPR-{person}-{year}", "staff-files", f"Appraisals/{name}/{name} appraisal {year}.md", day,
                    department="CRU", classification="confidential", title=f"Appraisal {year} — {name}",
                    text=(f"# Annual appraisal {year} — {name}, {title}\n\nObjectives met: {rng.randint(3, 5)} of 5.\n"
                          f"Development: {rng.choice(['lead a study start-up', 'complete the MSc module in research governance', 'mentor a new coordinator', 'take on sponsor audits'])}.\n"))
    out.doc("STAFF-ONB-ohaddad", "staff-files", "Onboarding/Omar Haddad/Onboarding checklist.md", D(2026, 4, 9), department="CRU",
            classification="confidential", title="Onboarding checklist — Omar Haddad",
            text=("# Onboarding checklist — Dr Omar Haddad (research fellow, start 6 Apr 2026)\n\n"
                  "- [x] Honorary research contract\n- [x] IT and EDC account request\n- [x] Financial disclosure form (ALD-2207) sent to Aldmere 10 Apr\n"
                  "- [ ] Signed study CV for the ISF\n- [ ] ALD-2207 protocol training (missed the SIV)\n- [ ] PI sign-off on the delegation log\n"))


# --------------------------------------------------------------------------------------------
# Systems of record: HREB submissions and CTMS milestones of the other studies
# --------------------------------------------------------------------------------------------

def other_records(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "records")
    n = 12
    for code, _sponsor, design, status, _target, pi in OTHER_STUDIES:
        for kind in ("annual progress report", "substantial amendment", "non-substantial amendment"):
            if rng.random() < 0.3:
                continue
            n += 1
            sub = D(2025, 9, 1) + dt.timedelta(days=rng.randint(0, 220))
            decided = sub + dt.timedelta(days=rng.randint(12, 45))
            rid = f"SUB-{sub:%Y}-{n:03d}" if sub.year == 2026 else f"SUB-{sub:%Y}-{200 + n:03d}"
            events = [{"date": _iso(sub), "kind": "created", "by": "pnandakumar", "status": "submitted",
                       "fields": {"study": code, "documents": kind}}]
            events.append({"date": _iso(decided), "kind": "approval" if kind != "annual progress report" else "status",
                           "by": "sgrant", "status": "approved" if kind != "annual progress report" else "acknowledged"})
            out.records.append({"id": rid, "system": "hreb-portal", "type": kind, "title": f"{code} {kind}",
                                "owner": "pnandakumar", "department": "CRU-REG", "events": events})
        for label, offset in (("site activation", 0), ("first participant in", 30), ("last participant in", 240)):
            start = D(2024, 6, 1) + dt.timedelta(days=rng.randint(0, 500))
            planned = start + dt.timedelta(days=offset)
            events = [{"date": _iso(start - dt.timedelta(days=60)), "kind": "created", "by": "gwhitfield", "status": "planned",
                       "fields": {"study": code, "planned": _iso(planned)}}]
            if planned <= D(2026, 6, 30) and status != "start-up":
                events.append({"date": _iso(planned + dt.timedelta(days=rng.randint(0, 20))), "kind": "status", "by": "gwhitfield", "status": "achieved"})
            out.records.append({"id": f"MS-{code}-{label.replace(' ', '-')}", "system": "ctms", "type": "milestone",
                                "title": f"{code} {label}", "owner": "gwhitfield", "department": "CRU", "events": events})


# --------------------------------------------------------------------------------------------
# Routine mail and chat
# --------------------------------------------------------------------------------------------

def comms(out: _Out, seed: int) -> None:
    rng = _part_rng(seed, "comms")
    n = 0

    def mail(day: D, sender: str, to: list[str], subject: str, body: str, cc: list[str] | None = None) -> None:
        nonlocal n
        n += 1
        out.messages.append({"id": f"MAIL-G-{n:04d}", "kind": "mail", "date": _iso(day), "time": f"{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}",
                             "sender": sender, "to": to, "cc": cc or [], "subject": subject, "body": body})

    # Training reminders: 30 days before each expiry that falls in Jan–Jun 2026.
    for person, courses in TRAINING.items():
        for course, entries in courses.items():
            for entry in entries:
                if not isinstance(entry, D) or not COURSES[course][1]:
                    continue
                expires = _add_years(entry, COURSES[course][1])
                if D(2026, 1, 1) <= expires <= D(2026, 6, 30):
                    mail(expires - dt.timedelta(days=30), "mbell", [person], f"Training renewal due: {course}",
                         f"Hello {STAFF[person][0].split()[0]},\n\n"
                         f"Your {COURSES[course][0]} certificate expires on {_long(expires)}. Please book the renewal in the LMS; "
                         "an expired GCP or shipping certificate suspends the related delegated research work (CRU-SOP-003).\n\nMarcus\n")
    # Weekly unit notices and HREB bulletins.
    day = D(2026, 1, 9)
    notices = ["the CRU office move to level 3 is on the 30th", "the freezer alarm test is on Thursday", "the archive pick-up is on Friday",
               "the new EDC password policy applies from Monday", "parking permits for research participants are at reception",
               "the quarterly fire drill is on Wednesday", "please update your out-of-office for the bank holiday"]
    while day <= D(2026, 5, 29):
        mail(day, "gwhitfield", ["list-cru"], f"CRU weekly notice {day:%d %b}", f"Hi all,\n\nThis week: {rng.choice(notices)}.\n\nGrace\n")
        if day.day <= 7:
            mail(day, "sgrant", ["list-cru"], f"HREB bulletin {day:%B %Y}",
                 f"Board meetings this month: {_long(day + dt.timedelta(days=12))}. Submission deadline 14 days before each meeting.\n"
                 "Reminder: amendments may not be implemented before written approval.\n\nHREB office\n")
        day += dt.timedelta(days=7)
    # CRA scheduling mail for the other studies.
    for code, *_rest in OTHER_STUDIES:
        for _ in range(2):
            d = D(2026, 1, 12) + dt.timedelta(days=rng.randint(0, 90))
            mail(d, "dreyes", ["mtanaka"], f"{code} monitoring visit",
                 f"Mei, the {code} CRA has booked a monitoring visit for {_long(d + dt.timedelta(days=rng.randint(7, 21)))}. "
                 "Can you book the small meeting room and pull the source notes?\n\nDaniel\n")
    # Chat in #cru-general.
    chatter = ["Who has the spare ECG leads?", "Coffee in the CRU kitchen is fixed.", "Reminder: freezer FZ-02 defrost Friday.",
               "Clinic room 4 booked for research all Thursday.", "Anyone free to cover the BRX-301 visit at 2pm?",
               "The courier now comes at 15:00 instead of 16:00.", "New label printer in the lab office."]
    people = ["dreyes", "mtanaka", "fgallagher", "twren", "rcoleman", "pnandakumar", "gwhitfield", "mbell"]
    k = 0
    day = D(2026, 1, 6)
    while day <= D(2026, 5, 20):
        if day.weekday() < 5 and rng.random() < 0.35:
            k += 1
            out.messages.append({"id": f"CHAT-G-{k:04d}", "kind": "chat", "channel": "chan-cru", "date": _iso(day),
                                 "time": f"{rng.randint(8, 17):02d}:{rng.randint(0, 59):02d}", "sender": rng.choice(people),
                                 "body": rng.choice(chatter)})
        day += dt.timedelta(days=1)


def generate(world: Any, rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    seed = rng.getrandbits(64)
    out = _Out()
    training(out, seed)
    study_staff_files(out, seed)
    cru_drive(out, seed)
    isf_background(out, seed)
    pharmacy(out, seed)
    staff_files(out, seed)
    other_records(out, seed)
    comms(out, seed)
    return out.result()
