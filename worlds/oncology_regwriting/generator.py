"""Bulk content of the `oncology_regwriting` world (Kestrel Bioscience, fictional).

`generate(world, rng)` returns the routine documents, records and mail a regulatory writing team
accumulates around one application: HARRIER-1 patient narratives, subgroup tables, monitoring
reports and CSR sections; weekly regulatory team minutes, earlier information requests and their
responses, module 1 documents; Drug Safety case summaries, weekly reviews and case records; SOPs
and newsletters; CMC documents. Nothing here touches the ILD or label story the tasks rest on
(those items are hand-written under data/); no generated item mentions ILD or pneumonitis.
Deterministic: only `rng` decides, and no item is dated after its own date.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

DCO1, DCO2 = dt.date(2025, 6, 30), dt.date(2025, 12, 31)
TASK_DATE = dt.date(2026, 4, 20)

SITES = [
    (1001, "Harbourside Cancer Centre", "Norland"), (1002, "St Aldric University Hospital", "Norland"),
    (1003, "Corvin Oncology Institute", "Valdoria"), (1004, "Lake Mira Medical Centre", "Valdoria"),
    (1005, "Eastgate Thoracic Unit", "Norland"), (1006, "Brennick General Hospital", "Ostmark"),
    (1007, "Kellan Lung Institute", "Ostmark"), (1008, "Ravensholm Clinic", "Ostmark"),
    (1009, "Pellin University Hospital", "Valdoria"), (1010, "Marrow Bay Cancer Centre", "Norland"),
    (1011, "Tessaly Regional Hospital", "Isterra"), (1012, "Quillon Medical School Hospital", "Isterra"),
    (1013, "Dunmere Oncology", "Isterra"), (1014, "Hallow Cross Hospital", "Norland"),
    (1015, "Vireo Cancer Institute", "Valdoria"), (1016, "Northreach Chest Hospital", "Ostmark"),
    (1017, "Arden Vale University Hospital", "Isterra"), (1018, "Solace Point Medical Centre", "Norland"),
    (1019, "Gravesend Thoracic Oncology", "Valdoria"), (1020, "Ironbridge Cancer Centre", "Ostmark"),
]
PIS = ["Dr A. Lindgren", "Dr M. Ferrand", "Prof. K. Osterhout", "Dr L. Ventura", "Dr S. Aaltonen",
       "Dr P. Brannigan", "Prof. H. Iwata", "Dr R. Castellano", "Dr J. Mbeki", "Dr E. Sorensen"]
CRAS = ["Hanna Roth", "Milo Caruso", "Yara Demir", "Felix Ahlberg"]

AES = [
    ("diarrhoea", "The patient reported up to six loose stools daily; loperamide was started and oral intake maintained."),
    ("vomiting", "Repeated vomiting over two days required intravenous fluids and antiemetics."),
    ("alanine aminotransferase increased", "ALT rose to 6.2 times the upper limit of normal at the scheduled liver test; bilirubin stayed normal."),
    ("pulmonary embolism", "CT angiography showed segmental emboli; low-molecular-weight heparin was started."),
    ("febrile neutropenia", "Temperature 38.9 °C with an absolute neutrophil count of 0.7 × 10⁹/L; broad-spectrum antibiotics were given."),
    ("peripheral oedema", "Bilateral ankle oedema progressed to the knees; furosemide was started."),
    ("dehydration", "Poor oral intake after nausea led to acute kidney injury that resolved with fluids."),
    ("syncope", "A single episode of syncope at home; ECG and telemetry showed no arrhythmia."),
    ("hyponatraemia", "Serum sodium fell to 124 mmol/L; fluid restriction corrected it over four days."),
    ("atrial fibrillation", "New-onset atrial fibrillation with rapid ventricular response was rate-controlled."),
    ("sepsis", "Urinary source sepsis was treated with intravenous antibiotics on the ward."),
    ("pleural effusion", "Increasing effusion on the side of the primary tumour was drained; cytology was positive for malignancy."),
    ("fatigue", "Grade 3 fatigue limited self-care for ten days."),
    ("rash maculopapular", "A maculopapular rash covering about 35% of body surface area responded to topical steroids."),
    ("hepatic function abnormal", "AST and ALT rose with a normal bilirubin; the event resolved after interruption."),
]
ACTIONS = ["Dose not changed", "Drug interrupted; resumed at 120 mg once daily", "Drug interrupted; resumed at 80 mg once daily",
           "Dose reduced to 80 mg once daily", "Drug interrupted; resumed at 40 mg once daily"]
OUTCOMES = ["recovered", "recovered", "recovered", "recovering", "recovered with sequelae", "not recovered"]


def _cp(x: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval by bisection on the binomial tail (exact, no dependency)."""

    def tail_ge(p: float) -> float:
        return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(x, n + 1))

    def tail_le(p: float) -> float:
        return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(0, x + 1))

    def solve(f, target: float, increasing: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if (f(mid) < target) == increasing:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = 0.0 if x == 0 else solve(tail_ge, 0.025, True)
    upper = 1.0 if x == n else solve(tail_le, 0.025, False)
    return lower, upper


def _orr_row(level: str, n: int, r: int) -> dict[str, Any]:
    lo, hi = _cp(r, n)
    return {"level": level, "n": n, "r": r, "orr": f"{100 * r / n:.1f}", "lo": f"{100 * lo:.1f}", "hi": f"{100 * hi:.1f}"}


def _clinical(rng, out: dict[str, list]) -> None:
    docs = out["documents"]
    subgroups = [
        ("age", ["< 65 years", "≥ 65 years"]), ("sex", ["Female", "Male"]),
        ("ECOG performance status", ["0", "1"]), ("region", ["Norland and Isterra", "Valdoria and Ostmark"]),
        ("smoking history", ["Never smoker", "Former or current smoker"]), ("number of prior lines", ["1", "≥ 2"]),
        ("prior immunotherapy", ["Yes", "No"]), ("TLX2 fusion partner", ["EML6-TLX2", "Other partner"]),
        ("baseline liver metastases", ["Yes", "No"]), ("histology", ["Adenocarcinoma", "Other"]),
        ("race", ["White", "Other or not reported"]), ("body weight", ["< 70 kg", "≥ 70 kg"]),
        ("tumour burden (sum of diameters)", ["< median", "≥ median"]), ("time since diagnosis", ["< 18 months", "≥ 18 months"]),
        ("baseline bone metastases", ["Yes", "No"]), ("country of enrolment", ["Norland", "Other countries"]),
    ]
    for index, (variable, levels) in enumerate(subgroups):
        n1 = rng.randint(38, 104)
        r1_dco2 = max(1, min(n1 - 1, round(n1 * 61 / 142 + rng.randint(-6, 6))))
        r1_dco2 = min(r1_dco2, 61 - 1)
        r1_dco1 = max(0, min(r1_dco2, round(r1_dco2 * 59 / 61)))
        for label, dco, r_total, r1, when in (("1", DCO1, 59, r1_dco1, dt.date(2025, 8, 22)), ("2", DCO2, 61, r1_dco2, dt.date(2026, 2, 20))):
            folder = "DCO1 2025-06-30" if label == "1" else "DCO2 2025-12-31"
            table = f"14.2.{10 + index}"
            docs.append({
                "id": f"D-TSG-{label}-{index:02d}", "system": "clin-drive", "department": "BIOS",
                "path": f"HARRIER-1/TLF/{folder}/t-{table.replace('.', '-')} ORR by {variable}.md",
                "title": f"Table {table} ORR by BICR by {variable} (DCO{label})", "template": "clinical/subgroup.md.j2",
                "visible_from": when,
                "vars": {"table": table, "variable": variable, "dco_label": label, "dco": dco.isoformat(),
                         "rows": [_orr_row(levels[0], n1, r1), _orr_row(levels[1], 142 - n1, r_total - r1)]},
            })
    writers, reviewers = ["lfontaine", "bosei", "icarvalho"], ["rkoenig", "tlindqvist"]
    patients = set()
    for index in range(56):
        site, _, country = SITES[rng.randrange(len(SITES))]
        while True:
            patient = f"{site}-{rng.randint(1, 28):03d}"
            if patient not in patients:
                patients.add(patient)
                break
        term, course = AES[rng.randrange(len(AES))]
        grade = rng.choice([3, 3, 3, 4, 2])
        first = dt.date(2024, 3, 1) + dt.timedelta(days=rng.randint(0, 390))
        day = rng.randint(8, 300)
        onset = first + dt.timedelta(days=day)
        dco = DCO1 if onset <= DCO1 else DCO2
        written = max(onset, dco) + dt.timedelta(days=rng.randint(20, 50))
        if written >= TASK_DATE:
            written = TASK_DATE - dt.timedelta(days=rng.randint(5, 30))
            dco = DCO2
        if onset > DCO2:
            continue
        docs.append({
            "id": f"D-NARR-{index:03d}", "system": "clin-drive", "department": "CLIN",
            "path": f"HARRIER-1/CSR/Narratives/DCO{1 if dco == DCO1 else 2}/Narrative {patient} {term}.md",
            "title": f"Patient narrative {patient} ({term})", "template": "clinical/narrative.md.j2", "visible_from": written,
            "vars": {"patient": patient, "site": site, "country": country, "dco": dco.isoformat(), "age": rng.randint(38, 81),
                     "sex": rng.choice(["woman", "man"]), "ecog": rng.choice([0, 1, 1]), "prior": rng.choice([1, 1, 2, 3]),
                     "platinum": rng.random() < 0.78, "first_dose": first.isoformat(), "day": day, "term": term, "grade": grade,
                     "serious": grade >= 3, "criterion": rng.choice(["hospitalisation", "hospitalisation", "medically important"]),
                     "course": course, "action": rng.choice(ACTIONS), "outcome": rng.choice(OUTCOMES),
                     "causality": rng.choice(["related", "not related", "related"]), "writer": rng.choice(writers),
                     "reviewer": rng.choice(reviewers)},
        })
    findings_pool = [
        "Two informed consent forms signed on the correct version but the time of signature was missing; site to annotate.",
        "Drug accountability reconciled: no discrepancy.",
        "One tumour assessment performed 9 days outside the window; protocol deviation recorded.",
        "Temperature log of the pharmacy refrigerator complete; no excursion.",
        "Scans for two patients not yet uploaded to the central imaging vendor; reminder given.",
        "Delegation log updated with a new sub-investigator.",
        "Concomitant medication for one patient not transcribed; query raised.",
        "Serious adverse event reported to the sponsor within 24 hours as required.",
        "Laboratory normal ranges expired; updated certificate requested.",
        "Patient diaries complete and consistent with dispensing records.",
    ]
    for index in range(40):
        site, name, country = SITES[index % len(SITES)]
        visit = index // len(SITES) + 4
        date = dt.date(2025, 1, 13) + dt.timedelta(days=rng.randint(0, 440))
        if date >= TASK_DATE:
            date = TASK_DATE - dt.timedelta(days=rng.randint(3, 60))
        docs.append({
            "id": f"D-MVR-{index:03d}", "system": "clin-drive", "department": "CLIN",
            "path": f"HARRIER-1/Monitoring/Site {site}/MVR site {site} visit {visit}.md",
            "title": f"Monitoring visit report, site {site}, visit {visit}", "template": "clinical/monitoring.md.j2",
            "visible_from": date,
            "vars": {"site": site, "visit": visit, "site_name": name, "country": country, "pi": PIS[index % len(PIS)],
                     "date": date.isoformat(), "cra": CRAS[index % len(CRAS)], "enrolled": rng.randint(3, 14),
                     "on_treatment": rng.randint(0, 6), "sdv": rng.choice([80, 90, 100, 100]), "queries": rng.randint(0, 17),
                     "findings": rng.sample(findings_pool, 3), "next_weeks": rng.choice([6, 8, 10, 12])},
        })
    sections = [
        ("11.1 Disposition of patients", "Of 181 patients screened, 168 received telvorasib (safety population); 142 had measurable disease by BICR and a centrally confirmed TLX2 fusion (primary efficacy population)."),
        ("11.2 Demographics and baseline characteristics", "Median age 61 years (range 34 to 84); 54% women; 71% never smokers; 78% had received platinum-based chemotherapy."),
        ("11.4 Exposure", "Median duration of treatment 8.7 months at DCO1 and 12.4 months at DCO2; median relative dose intensity 94%."),
        ("12.2 Common adverse events", "Diarrhoea, nausea, fatigue, peripheral oedema and increased ALT were reported in at least 20% of patients."),
        ("12.5 Laboratory abnormalities", "Grade 3 or 4 ALT increase in 7% of patients, mostly within the first 8 weeks."),
        ("9.7 Statistical methods", "ORR with Clopper-Pearson exact 95% CI; DOR by Kaplan-Meier; the primary analysis was by BICR per RECIST v1.1."),
    ]
    for index, (section, body) in enumerate(sections):
        for label, dco, when in (("DCO1", DCO1, dt.date(2025, 9, 12)), ("DCO2", DCO2, dt.date(2026, 2, 24))):
            docs.append({
                "id": f"D-CSR-{label}-{index}", "system": "clin-drive", "department": "CLIN",
                "path": f"HARRIER-1/CSR/{label}/CSR section {section}.md", "title": f"CSR {section} ({label})",
                "template": "clinical/csr_section.md.j2", "visible_from": when,
                "vars": {"section": section, "dco": dco.isoformat(), "version": "1.0" if label == "DCO1" else "2.0",
                         "body": body, "author": rng.choice(["lfontaine", "bosei"]), "qc": rng.choice(["mokafor", "kdrummond"])},
            })


def _regulatory(rng, out: dict[str, list]) -> None:
    docs, records = out["documents"], out["records"]
    start = dt.date(2025, 10, 6)
    statuses = [
        (dt.date(2025, 11, 28), "Submitted 30 Sep 2025; validation ongoing."),
        (dt.date(2026, 2, 27), "Under review since 28 Nov 2025 (clock start); 120-day safety update in preparation (DCO2)."),
        (dt.date(2026, 4, 10), "120-day safety update submitted 27 Feb 2026; awaiting the label comments."),
        (dt.date(2026, 5, 15), "IR-2026-011 (label) received 10 Apr 2026; response due 30 Apr; action date 15 May 2026."),
        (dt.date(2026, 12, 31), "Approved 15 May 2026 (conditional); PAC-01 opened."),
    ]
    items_pool = [
        "Translation vendor confirmed for the patient leaflet.", "Companion test partner to share the final test name.",
        "Pre-approval inspection readiness: no inspection announced.", "Packaging artwork drafts under CMC review.",
        "Periodic safety report schedule to be agreed after approval.", "Risk management plan v1.1 comments consolidated.",
        "Publication plan for HARRIER-1 DCO2 held until the decision.", "Orphan designation maintenance report due in June.",
    ]
    for index in range(30):
        date = start + dt.timedelta(weeks=index)
        status = next(text for until, text in statuses if date < until)
        docs.append({
            "id": f"D-RAMIN-{index:02d}", "system": "reg-drive", "department": "RA",
            "path": f"Orvanza/Team/Weekly minutes/RA team minutes {date.isoformat()}.md",
            "title": f"Orvanza regulatory team minutes {date.isoformat()}", "template": "regulatory/team_minutes.md.j2",
            "visible_from": date,
            "vars": {"date": date.isoformat(), "present": rng.sample(["Helena Schafer", "Declan Morrow", "Ines Carvalho", "Jonah Vance", "Bernard Osei", "Owen Harlan"], 4),
                     "status": status, "entries": rng.sample(items_pool, 3),
                     "actions": [f"{rng.choice(['Priya', 'Declan', 'Jonah', 'Bernard'])}: {rng.choice(['circulate the draft', 'confirm dates with the vendor', 'update the submission tracker', 'book the review meeting'])} by {(date + dt.timedelta(days=7)).isoformat()}"]},
        })
    topics = [
        ("IR-2025-031", "module 3 specifications", "3.2.P.5", [("Q1", "Justify the acceptance criterion for the largest unspecified impurity."), ("Q2", "Provide dissolution data for the 40 mg dose-strength tablets used after dose reduction.")]),
        ("IR-2025-036", "BICR charter", "2.7.3", [("Q1", "Provide the BICR charter and the concordance between BICR and investigator assessments."), ("Q2", "Clarify how non-measurable lesions were handled.")]),
        ("IR-2025-040", "central TLX2 testing", "2.7.1", [("Q1", "Describe the analytical validation of the central TLX2 fusion assay."), ("Q2", "State the number of patients enrolled on local test results.")]),
        ("IR-2026-002", "hepatotoxicity", "2.7.4", [("Q1", "Present time to onset and resolution of Grade 3 or 4 ALT increases."), ("Q2", "Discuss cases meeting Hy's law criteria.")]),
        ("IR-2026-005", "exposure-response", "2.7.2", [("Q1", "Provide the exposure-response analysis for ORR and Grade 3 adverse events."), ("Q2", "Justify the 120 mg dose over 80 mg.")]),
        ("IR-2026-007", "risk management plan", "1.8.2", [("Q1", "Add hepatotoxicity as an important identified risk."), ("Q2", "Describe the planned drug utilisation study.")]),
        ("IR-2026-009", "GMP certificates", "3.2.P.3", [("Q1", "Provide the current GMP certificate of the tablet manufacturer."), ("Q2", "Confirm the batch release site.")]),
    ]
    for index, (ir, topic, section, items) in enumerate(topics):
        received = dt.date(2025, 12, 2) + dt.timedelta(days=17 * index)
        answered = received + dt.timedelta(days=rng.randint(14, 24))
        for kind, date, suffix in (("Question", received, "questions"), ("Response", answered, "response")):
            texts = [{"id": q, "text": t if kind == "Question" else f"{rng.choice(['The applicant provides', 'Please find', 'We submit'])} the requested information in an updated section {section}: {t.lower().rstrip('.')} — see the attached analysis."} for q, t in items]
            docs.append({
                "id": f"D-{ir}-{suffix}", "system": "reg-drive", "department": "RA",
                "path": f"Orvanza/Authority correspondence/{ir} {topic} ({suffix}).md", "title": f"{ir} {topic} — {suffix}",
                "template": "regulatory/ir.md.j2", "visible_from": date,
                "vars": {"kind": kind, "ir": ir, "topic": topic, "date": date.isoformat(), "entries": texts, "author": rng.choice(["pnatarajan", "jvance", "icarvalho"])},
            })
        records.append({
            "id": f"RIM-{ir}", "system": "rim", "type": "information_request", "title": f"{ir} — {topic}",
            "owner": "pnatarajan", "department": "RA", "links": ["RIM-MAA-ORV-2025-001"],
            "events": [
                {"date": received.isoformat(), "kind": "created", "by": "pnatarajan", "status": "open", "fields": {"received": received.isoformat(), "section": section}},
                {"date": answered.isoformat(), "kind": "status", "by": "hschafer", "status": "responded"},
            ],
        })
    m1 = [("1.2 Application form", "Applicant Kestrel Bioscience Inc., Marlowe Park. Legal basis: full application, conditional authorisation requested."),
          ("1.3.1 Product information — patient leaflet draft", "Patient leaflet aligned with label draft v0.9; readability testing completed with 20 participants."),
          ("1.3.2 Mock-ups", "Carton and blister mock-ups for 30-tablet packs; Braille on the carton."),
          ("1.4 Information about the experts", "Clinical, nonclinical and quality expert statements signed."),
          ("1.5 Specific requirements", "Conditional authorisation justification: unmet need in TLX2 fusion-positive NSCLC after prior therapy."),
          ("1.6 Environmental risk assessment", "PEC surface water below the action limit; phase I only."),
          ("1.7 Orphan market exclusivity", "Orphan designation held; similarity report attached."),
          ("1.8.1 Pharmacovigilance system", "Summary of the pharmacovigilance system master file; QPPV named."),
          ("1.8.2 Risk management plan summary", "Important identified risks: ILD/pneumonitis, hepatotoxicity. Missing information: use in severe hepatic impairment."),
          ("1.9 Clinical trials outside the region", "HARRIER-1 sites in Norland, Valdoria, Ostmark and Isterra; GCP statements."),
          ("1.10 Paediatric plan", "Product-specific waiver granted for all subsets."),
          ("1.2 Annex — manufacturer list", "Drug substance and tablet manufacturers with addresses and responsibilities.")]
    for index, (title, body) in enumerate(m1):
        docs.append({
            "id": f"D-M1-{index:02d}", "system": "reg-drive", "department": "RA", "path": f"Orvanza/MAA/Module 1/{title}.md",
            "title": title, "template": "regulatory/country.md.j2", "visible_from": dt.date(2025, 9, 15) + dt.timedelta(days=index),
            "vars": {"title": title, "version": "1.0", "body": body, "owner": rng.choice(["pnatarajan", "jvance", "bosei"])},
        })


def _safety(rng, out: dict[str, list]) -> None:
    docs, records = out["documents"], out["records"]
    for index in range(60):
        term, course = AES[rng.randrange(len(AES))]
        site = SITES[rng.randrange(len(SITES))][0]
        patient = f"{site}-{rng.randint(1, 28):03d}"
        received = dt.date(2024, 6, 3) + dt.timedelta(days=rng.randint(0, 640))
        if received >= TASK_DATE:
            received = TASK_DATE - dt.timedelta(days=rng.randint(2, 40))
        grade = rng.choice([1, 2, 2, 3, 3, 4])
        case = f"KST-{received.year}-9{index:04d}"
        outcome = rng.choice(OUTCOMES)
        action = rng.choice(ACTIONS)
        day = rng.randint(5, 400)
        docs.append({
            "id": f"D-CASE-{index:03d}", "system": "safety-drive", "department": "SAF", "classification": "confidential",
            "path": f"Orvanza/Case summaries/{received.year}/{case} {term}.md", "title": f"Case summary {case} ({term})",
            "template": "safety/case.md.j2", "visible_from": received + dt.timedelta(days=5),
            "vars": {"case": case, "term": term, "study": "HARRIER-1", "patient": patient, "received": received.isoformat(),
                     "seriousness": "serious" if grade >= 3 else "non-serious", "grade": grade, "day": day, "course": course,
                     "action": action.lower(), "outcome": outcome, "causality": rng.choice(["related", "not related"]),
                     "expected": rng.choice(["listed", "listed", "unlisted"]), "processor": rng.choice(["nquaye", "tlindqvist"])},
        })
        records.append({
            "id": case, "system": "safetydb", "type": "icsr", "title": f"ICSR {case} — HARRIER-1 patient {patient} {term}",
            "owner": "nquaye", "department": "SAF", "classification": "confidential",
            "events": [
                {"date": received.isoformat(), "kind": "created", "by": "nquaye", "status": "received",
                 "fields": {"study": "HARRIER-1", "patient": patient, "reported_term": term, "onset_study_day": day,
                            "ctcae_grade": grade, "seriousness": "serious" if grade >= 3 else "non-serious", "action_taken": action.lower()}},
                {"date": (received + dt.timedelta(days=14)).isoformat(), "kind": "update", "by": "tlindqvist", "status": "closed",
                 "fields": {"outcome": outcome}},
            ],
        })
    terms = ["diarrhoea", "ALT increased", "peripheral oedema", "QT prolongation", "visual disturbance", "bradycardia", "rash", "fatigue"]
    for index in range(34):
        date = dt.date(2025, 9, 1) + dt.timedelta(weeks=index)
        docs.append({
            "id": f"D-SAFREV-{index:02d}", "system": "safety-drive", "department": "SAF",
            "path": f"Orvanza/Weekly review/Safety review {date.isoformat()}.md", "title": f"Drug Safety weekly review {date.isoformat()}",
            "template": "safety/review.md.j2", "visible_from": date,
            "vars": {"date": date.isoformat(), "new_cases": rng.randint(0, 9), "serious": rng.randint(0, 3), "terms": rng.sample(terms, 3),
                     "signals": rng.choice(["no new signal.", "QT prolongation kept under monitoring (no new case).", "bradycardia: cumulative review scheduled.", "no change to the reference safety information."]),
                     "literature": rng.choice(["no relevant publication.", "one class-effect review noted (hepatotoxicity of kinase inhibitors).", "no case report found."]),
                     "next": (date + dt.timedelta(weeks=1)).isoformat()},
        })


def _shared(rng, out: dict[str, list]) -> None:
    docs = out["documents"]
    sops = [
        ("SOP-RA-004", "Preparation of the proposed label", "RA-WRIT", ["Draft the label from the approved clinical outputs only; cite table numbers in the review copy.", "Report efficacy as assessed by the primary assessment of the pivotal study (for HARRIER-1: BICR per RECIST v1.1).", "Give percentages to one decimal and 95% confidence intervals in parentheses.", "Keep a change log of every figure replaced, outside the label text.", "Have every figure checked against its source table by a second person."]),
        ("SOP-RA-007", "Responses to authority requests", "RA", ["Log the request in RIM on receipt.", "Agree positions in the responsible working group and record them in minutes.", "Only the Head of Regulatory Affairs signs off and sends communications to an authority.", "Keep the comment tracker current until submission."]),
        ("SOP-RA-011", "Document review and quality control", "RA-WRIT", ["Quality control of numbers against source outputs.", "Review by the content owner.", "Formatting check against the style guide."]),
        ("SOP-SAF-002", "Case processing", "SAF", ["Enter the case within one working day.", "Medical review within 5 working days for serious cases.", "Follow-up requests at day 7 and day 30."]),
        ("SOP-SAF-006", "Signal management", "SAF", ["Screen cases weekly.", "Evaluate potential signals within 30 days.", "Document conclusions in a signal evaluation report."]),
        ("SOP-SAF-009", "Adjudication of events of special interest", "SAF", ["Send cases of events of special interest to the adjudication committee.", "Count only adjudicated cases in aggregate figures for labels and reports.", "Cases from expanded access and compassionate use are reported separately."]),
        ("SOP-CLIN-003", "Clinical study report writing", "CLIN", ["Use the final TLF outputs of the data cut-off.", "Keep narratives for all serious adverse events, deaths and discontinuations."]),
        ("SOP-BIO-005", "Statistical outputs for regulatory documents", "BIOS", ["Final outputs carry the program name and run date.", "Draft outputs are not used in regulatory documents."]),
        ("SOP-QA-001", "Document control", "EXEC", ["Controlled documents carry a version and an effective date.", "Superseded versions are archived."]),
        ("SOP-QA-004", "Training", "EXEC", ["Read-and-understand training for new SOP versions within 30 days."]),
        ("SOP-RA-013", "Style guide for regulatory documents", "RA-WRIT", ["Use the international non-proprietary name after the first mention of the brand name.", "Write numbers with a full stop as decimal separator.", "Write dates as 31 December 2025 in label text."]),
        ("SOP-MED-002", "Scientific communication before approval", "MED", ["No promotion before approval.", "Medical information answers questions on request only."]),
    ]
    for index, (number, title, dept, steps) in enumerate(sops):
        docs.append({
            "id": f"D-SOP-{index:02d}", "system": "shared-drive", "department": dept,
            "path": f"Quality System/SOPs/{number} {title}.md", "title": f"{number} {title}", "template": "shared/sop.md.j2",
            "visible_from": dt.date(2024, 5, 6) + dt.timedelta(days=21 * index),
            "vars": {"number": number, "version": rng.choice([2, 3, 4]), "title": title, "effective": (dt.date(2024, 5, 6) + dt.timedelta(days=21 * index)).isoformat(),
                     "purpose": f"How Kestrel staff handle {title.lower()}.", "steps": steps, "records": "Records are kept in the document management system for the life of the product plus 10 years."},
        })
    news = [("Welcome", "New colleagues joined Biostatistics and Drug Safety."), ("Site", "The Marlowe Park car park works finish next month."),
            ("Science", "HARRIER-1 DCO2 outputs were completed on time; thanks to the programming team."), ("People", "The annual engagement survey opens on Monday."),
            ("IT", "Document management system upgrade planned for a weekend."), ("Community", "The charity run raised funds for the regional hospice."),
            ("Regulatory", "The 120-day safety update was submitted on schedule."), ("Training", "Refresher on SOP-RA-007 for everyone who drafts authority correspondence.")]
    for index in range(16):
        month = dt.date(2025, 1, 1) + dt.timedelta(days=31 * index)
        month = month.replace(day=1)
        if month >= TASK_DATE:
            break
        docs.append({
            "id": f"D-NEWS-{index:02d}", "system": "shared-drive", "department": "EXEC", "path": f"News/Kestrel news {month.strftime('%Y-%m')}.md",
            "title": f"Kestrel news {month.strftime('%B %Y')}", "template": "shared/news.md.j2", "visible_from": month,
            "vars": {"month": month.strftime("%B %Y"), "entries": [{"head": h, "body": b} for h, b in rng.sample(news, 3)]},
        })


def _cmc(rng, out: dict[str, list]) -> None:
    docs = out["documents"]
    sections = [("3.2.S.1", "General information (drug substance)"), ("3.2.S.2", "Manufacture (drug substance)"), ("3.2.S.4", "Control of drug substance"),
                ("3.2.S.7", "Stability (drug substance)"), ("3.2.P.1", "Description and composition of the drug product"), ("3.2.P.2", "Pharmaceutical development"),
                ("3.2.P.3", "Manufacture (drug product)"), ("3.2.P.5", "Control of drug product"), ("3.2.P.7", "Container closure system"), ("3.2.P.8", "Stability (drug product)")]
    for index, (section, title) in enumerate(sections):
        for version in (1, 2):
            docs.append({
                "id": f"D-CMC-{index:02d}-{version}", "system": "cmc-drive", "department": "RA-CMC",
                "path": f"Orvanza/Module 3/{section} {title} v{version}.md", "title": f"{section} {title} v{version}", "template": "cmc/cmc.md.j2",
                "visible_from": dt.date(2025, 7, 1) + dt.timedelta(days=30 * version + index),
                "vars": {"title": f"{section} {title}", "section": section, "version": version,
                         "body": rng.choice(["Batch data from three registration batches meet the proposed specification.", "No change from the previous version except editorial corrections.", "Updated after IR-2025-031 (impurity limit justified with toxicological qualification).", "Stability data to 18 months at 25 °C/60% RH support a 24-month shelf life."])},
            })


def _mail(rng, out: dict[str, list]) -> None:
    messages = out["messages"]
    subjects = [("dmorrow", ["icarvalho", "bosei"], "Writing team priorities this week", "Label response first, then the CSR addendum. Bernard covers the narratives QC."),
                ("abello", ["list-safety"], "Case processing backlog", "Backlog is at two days; thanks all. Serious cases remain within timelines."),
                ("hschafer", ["pnatarajan", "jvance"], "Submission calendar", "Please keep the calendar in RIM current; I review it every Monday."),
                ("rkoenig", ["list-lwg"], "Investigator meeting follow-up", "Slides are on the Clinical drive; please note the investigator numbers are not the BICR numbers."),
                ("mokafor", ["kdrummond"], "Program validation", "Please finish the independent programming of the subgroup tables by Friday.")]
    for index in range(24):
        sender, to, subject, body = subjects[index % len(subjects)]
        date = dt.date(2025, 11, 3) + dt.timedelta(days=7 * index + rng.randint(0, 4))
        if date >= TASK_DATE:
            continue
        messages.append({"id": f"MAIL-GEN-{index:03d}", "kind": "mail", "date": date.isoformat(), "time": f"{rng.randint(8, 17):02d}:{rng.choice(['00', '15', '30', '45'])}",
                         "sender": sender, "to": to, "subject": subject, "body": body + "\n"})


def generate(world: Any, rng) -> dict[str, list]:
    out: dict[str, list] = {"documents": [], "records": [], "messages": []}
    _clinical(rng, out)
    _regulatory(rng, out)
    _safety(rng, out)
    _shared(rng, out)
    _cmc(rng, out)
    _mail(rng, out)
    for item in out["documents"]:
        item["visible_from"] = item["visible_from"].isoformat() if isinstance(item["visible_from"], dt.date) else item["visible_from"]
    return out
