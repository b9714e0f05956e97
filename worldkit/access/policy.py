"""Access decisions from explicit rules over a graph of people, roles, departments, groups.

Every decision names the rule (or ownership, share, addressing) that granted it; nothing here is
hidden in templates. Pure: no I/O. Default is deny.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from worldkit.world.models import Document, Message, PermissionRule, Record, ResourceFilter, Subject
from worldkit.world.state import WorldState


@dataclass(frozen=True)
class Grant:
    """Why an item is visible: `rule:<id>`, `owner`, `share`, `readable_by:role:<id>`,
    `readable_by:person:<id>`, `sender`, `recipient`, `channel`."""

    reason: str


_UNDECIDED = object()


def _node(kind: str, key: str) -> str:
    return f"{kind}:{key}"


class _Graph:
    """A directed graph as adjacency sets: the policy only asks what a node reaches, a plain
    breadth-first walk, so it needs no graph library (networkx alone costs ~0.1 s to import on
    every materialize)."""

    __slots__ = ("_succ",)

    def __init__(self) -> None:
        self._succ: dict[str, set[str]] = {}

    def add_node(self, node: str) -> None:
        self._succ.setdefault(node, set())

    def add_edge(self, source: str, target: str) -> None:
        self._succ.setdefault(source, set()).add(target)
        self._succ.setdefault(target, set())

    def __contains__(self, node: object) -> bool:
        return node in self._succ

    def descendants(self, start: str) -> set[str]:
        """Every node reachable from `start`, `start` excluded (as `networkx.descendants`)."""
        seen: set[str] = set()
        frontier = list(self._succ.get(start, ()))
        while frontier:
            node = frontier.pop()
            if node not in seen:
                seen.add(node)
                frontier.extend(self._succ[node] - seen)
        seen.discard(start)
        return seen


class Policy:
    """Access decisions for one revision; build once, ask many times."""

    def __init__(self, state: WorldState) -> None:
        self.state = state
        graph = _Graph()
        for person in state.people.values():
            graph.add_edge(_node("person", person.id), _node("dept", person.department))
            for role in person.roles:
                graph.add_edge(_node("person", person.id), _node("role", role))
        for role in state.roles.values():
            graph.add_node(_node("role", role.id))
            for implied in role.implies:
                graph.add_edge(_node("role", role.id), _node("role", implied))
        for dept in state.company.departments:
            graph.add_node(_node("dept", dept.id))
            if dept.parent:
                graph.add_edge(_node("dept", dept.id), _node("dept", dept.parent))
        for group in state.groups.values():
            target = _node("group", group.id)
            graph.add_node(target)
            for member in group.members:
                graph.add_edge(_node("person", member), target)
            for role in group.member_roles:
                graph.add_edge(_node("role", role), target)
            for dept in group.member_departments:
                graph.add_edge(_node("dept", dept), target)
        self.graph = graph
        self._rules: list[PermissionRule] = [state.permissions[k] for k in sorted(state.permissions)]
        self._principals: dict[str, frozenset[str]] = {}
        self._dept_ancestors: dict[str, frozenset[str]] = {}
        # Memos of person- and resource-independent parts of a decision (same answers, asked once).
        self._rules_by_system: dict[str, list[PermissionRule]] = {}
        self._reaches: dict[tuple[str, str], bool] = {}
        # Systems none of whose rules reads an item's path, and the decisions by rules there, by every
        # other field the rules read (an item shared with someone is decided on its own).
        self._pathless: set[str] = set()
        self._decided: dict[tuple[str, str, str, str, str | None, str | None], Grant | None] = {}

    # -- the graph ------------------------------------------------------------------------------

    def principals(self, person: str) -> frozenset[str]:
        """Every role, department, group (transitively) the person holds, and the person."""
        cached = self._principals.get(person)
        if cached is None:
            start = _node("person", person)
            reach = self.graph.descendants(start) if start in self.graph else set()
            cached = frozenset(reach | {start})
            self._principals[person] = cached
        return cached

    def roles_of(self, person: str) -> list[str]:
        return sorted(p.split(":", 1)[1] for p in self.principals(person) if p.startswith("role:"))

    def dept_ancestors(self, dept: str) -> frozenset[str]:
        cached = self._dept_ancestors.get(dept)
        if cached is None:
            node = _node("dept", dept)
            reach = {n for n in self.graph.descendants(node) if n.startswith("dept:")} if node in self.graph else set()
            cached = frozenset(n.split(":", 1)[1] for n in reach) | {dept}
            self._dept_ancestors[dept] = cached
        return cached

    @cached_property
    def group_members(self) -> dict[str, frozenset[str]]:
        members: dict[str, set[str]] = {g: set() for g in self.state.groups}
        for person in self.state.people:
            for principal in self.principals(person):
                if principal.startswith("group:"):
                    members[principal.split(":", 1)[1]].add(person)
        return {g: frozenset(m) for g, m in members.items()}

    # -- matching -------------------------------------------------------------------------------

    def subject_matches(self, subject: Subject, person: str, owner: str | None) -> bool:
        if subject.everyone or (subject.owner and owner == person):
            return True
        return self._held_match(subject, person)

    def _held_match(self, subject: Subject, person: str) -> bool:
        """The subject names the person, or a role, department or group the person holds."""
        held = self.principals(person)
        return (
            any(_node("person", p) in held for p in subject.persons)
            or any(_node("role", r) in held for r in subject.roles)
            or any(_node("dept", d) in held for d in subject.departments)
            or any(_node("group", g) in held for g in subject.groups)
        )

    def _resource_matches(
        self, res: ResourceFilter, kind: str, system: str, classification: str, dept: str | None, path: str | None
    ) -> bool:
        if res.kinds and kind not in res.kinds:
            return False
        if res.systems and system not in res.systems:
            return False
        if res.classifications and classification not in res.classifications:
            return False
        if res.departments and (dept is None or not (self.dept_ancestors(dept) & set(res.departments))):
            return False
        if res.path_prefixes and (path is None or not any(path.startswith(p) for p in res.path_prefixes)):
            return False
        return True

    def _by_rules(
        self,
        person: str,
        *,
        kind: str,
        system: str,
        classification: str,
        dept: str | None,
        owner: str | None,
        path: str | None,
        shares: list[Subject],
    ) -> Grant | None:
        rules = self._rules_by_system.get(system)
        if rules is None:  # the rules, in order, that can match this system at all
            rules = [r for r in self._rules if not r.resource.systems or system in r.resource.systems]
            self._rules_by_system[system] = rules
            if not any(r.resource.path_prefixes for r in rules):
                self._pathless.add(system)
        if not shares and system in self._pathless:
            # The rules read nothing else of the item: items alike in these fields get the same answer.
            key = (person, kind, system, classification, dept, owner)
            found = self._decided.get(key, _UNDECIDED)
            if found is _UNDECIDED:
                found = self._decided[key] = self._first_rule(rules, person, kind, system, classification, dept, owner, None)
            return found
        granted = self._first_rule(rules, person, kind, system, classification, dept, owner, path)
        if granted is not None:
            return granted
        for share in shares:
            if self.subject_matches(share, person, owner):
                return Grant("share")
        return None

    def _first_rule(
        self, rules: list[PermissionRule], person: str, kind: str, system: str, classification: str,
        dept: str | None, owner: str | None, path: str | None,
    ) -> Grant | None:
        """The grant of the first of `rules` that matches the item and reaches the person."""
        for rule in rules:
            if self._resource_matches(rule.resource, kind, system, classification, dept, path) and self._rule_reaches(
                rule, person, owner
            ):
                return Grant(f"rule:{rule.id}")
        return None

    def _rule_reaches(self, rule: PermissionRule, person: str, owner: str | None) -> bool:
        """`subject_matches(rule.subject, person, owner)`, with the principal part memoized per person."""
        subject = rule.subject
        if subject.everyone or (subject.owner and owner == person):
            return True
        key = (rule.id, person)
        found = self._reaches.get(key)
        if found is None:
            found = self._reaches[key] = self._held_match(subject, person)
        return found

    # -- decisions ------------------------------------------------------------------------------

    def document(self, person: str, doc: Document) -> Grant | None:
        """Permission rules first (in id order), then shares, then the document's own `readable_by`."""
        if doc.verifier_only:
            return None
        granted = self._by_rules(
            person,
            kind="document",
            system=doc.system,
            classification=doc.classification.value,
            dept=doc.department,
            owner=doc.owner,
            path=doc.path,
            shares=doc.shared_with,
        )
        if granted is not None or doc.readable_by is None:
            return granted
        return self.named_reader(person, doc)

    def named_reader(self, person: str, doc: Document) -> Grant | None:
        """The grant of the document's `readable_by`, if it names the person or a role they hold."""
        readers = doc.readable_by
        if readers is None:
            return None
        if person in readers.people:
            return Grant(f"readable_by:person:{person}")
        held = self.principals(person)
        for role in readers.roles:
            if _node("role", role) in held:
                return Grant(f"readable_by:role:{role}")
        return None

    def record(self, person: str, rec: Record) -> Grant | None:
        if rec.verifier_only:
            return None
        return self._by_rules(
            person,
            kind="record",
            system=rec.system,
            classification=rec.classification.value,
            dept=rec.department,
            owner=rec.owner,
            path=None,
            shares=rec.shared_with,
        )

    def message(self, person: str, msg: Message) -> Grant | None:
        """Mail reaches its sender and addressees (lists expanded); chat reaches channel members."""
        if msg.sender == person:
            return Grant("sender")
        if msg.kind == "chat":
            return Grant("channel") if msg.channel and person in self.group_members.get(msg.channel, ()) else None
        for address in (*msg.to, *msg.cc):
            if address == person or person in self.group_members.get(address, ()):
                return Grant("recipient")
        return None
