"""evalkit.config_keys describes every config key the code reads, and nothing else.

The keys the code reads are found in two independent ways, and the registry must match both:

* **Statically**: evalkit's sources are parsed with :mod:`ast`. The getters of ``Table`` are found from
  ``tasks/base.py`` itself (every method that records its first argument in ``self.read``, directly or through
  another getter: ``get``, ``str``, ``int``, ``fail_later``, ...), then the *reader helpers* of all modules
  (functions taking a ``Table`` parameter that pass one of their parameters to a getter or to another helper:
  ``Common.path``, ``form._bool``, ``checks._flag``, ...). A read is a call of a getter on a name known to hold a
  ``Table`` (a parameter annotated ``Table``, or a name assigned ``Table(...)``), or of a reader helper with such
  a name as its table; the key is the string literal passed, or the literal tuple a ``for`` loop or
  comprehension takes the key from (``for key in ("completion_code_pass", ...)``). A read whose key is none of
  these is *unresolved* and must be listed in :data:`UNRESOLVED` with the reason it is fine. When the ``Table``
  was built with a literal label (``Table(..., "[study]")``) the read is pinned to that table, else only the key
  name is checked. Raw probes of a table's data (``"claim_minutes" in t.data``, ``t.data.get("checks")``) never
  mark a key read (``Table.done`` would reject a key only probed), so they are only required to name keys that
  some getter reads too.
* **Dynamically**: every example study, the demo ``config.toml``, the test fixtures' and builders' studies and a
  few configs written here to reach the rarer keys are loaded with :func:`evalkit.config.load_study`, and every
  ``Table`` built meanwhile is recorded. ``load_study`` hands back no tables, and patching ``Table`` (or its
  module's names) would change the code under test, so the recording is done by a profile hook
  (:func:`sys.setprofile`) that only *observes*: at each return from ``Table.__init__`` (matched by its code
  object) it keeps a reference to the new table; once the config is loaded, each table's ``read`` set (every
  key the parser asked for, given or not: a getter records the key before looking it up) is compared with the
  registry's sections for that table, picked by the table's label (``"[study.session]"``,
  ``"[[tasks]] #2 (id 'x') scale #1"``) and its ``kind`` / ``type``. Every described key must be read by at
  least one of these tables, and every key read must be described.

The checks are functions of the registry (:func:`entry_problems`, :func:`static_problems`,
:func:`dynamic_problems`), so the bad-input tests run them on altered copies of it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalkit import config_keys
from evalkit.config import ConfigError, load_study
from evalkit.config_keys import SECTIONS, Key, Section
from evalkit.tasks.base import Table
from tests.helpers import ROOT, make_demo_with_items_tasks, make_study, make_token_study
from tests.item_study import make_items_study, task_block, write_items

SOURCE = ROOT / "evalkit"
BASE = SOURCE / "tasks" / "base.py"

#: reads whose key is not a literal: (module, function, the call as written) -> why that is fine
UNRESOLVED = {
    ("evalkit/config.py", "load_study", "names.str(key)"):
        "[study.domain_names]: every key is a domain name chosen by the researcher (the placeholder <domain>)",
}


# ----------------------------------------------------------------------------- static: what the sources read


@dataclass(frozen=True)
class Read:
    """One read of a key in the sources (``key`` None: not resolved; ``table`` None: the table is not known)."""

    module: str
    function: str
    line: int
    call: str
    key: str | None
    table: str | None


@dataclass(frozen=True)
class StaticReads:
    """What the sources read: the getters' names, every read, and the keys probed in a table's raw data."""

    getters: frozenset[str]
    helpers: Mapping[str, tuple[int, int]]
    reads: tuple[Read, ...]
    probes: frozenset[str]


def table_getters(tree: ast.Module) -> frozenset[str]:
    """The methods of ``class Table`` that record their first argument as read: ``self.read.add(key)``, or a call
    of another such method with it (``self.get(key, default)``)."""
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Table")
    methods = [f for f in cls.body if isinstance(f, ast.FunctionDef) and len(f.args.args) >= 2]
    getters: set[str] = set()
    changed = True
    while changed:
        changed = False
        for f in methods:
            key = f.args.args[1].arg
            if f.name in getters:
                continue
            for node in ast.walk(f):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                        and isinstance(node.args[0], ast.Name) and node.args[0].id == key):
                    continue
                owner, name = node.func.value, node.func.attr
                adds = (name == "add" and isinstance(owner, ast.Attribute) and owner.attr == "read"
                        and isinstance(owner.value, ast.Name) and owner.value.id == "self")
                if adds or (isinstance(owner, ast.Name) and owner.id == "self" and name in getters):
                    getters.add(f.name)
                    changed = True
                    break
    return frozenset(getters)


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with its qualified name."""
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield prefix + child.name, child
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
    yield from walk(tree, "")


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not descending into nested functions or classes (their own scopes)."""
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """The positional parameters, without ``self`` / ``cls``."""
    args = [*func.args.posonlyargs, *func.args.args]
    return args[1:] if args and args[0].arg in ("self", "cls") else args


def _is_table_annotation(node: ast.expr | None) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Table") or (
        isinstance(node, ast.Constant) and node.value == "Table")


def _tables_in(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str | None]:
    """The names holding a ``Table`` in ``func`` -> the TOML table when its label is a literal (else None)."""
    names: dict[str, str | None] = {a.arg: None for a in _params(func) if _is_table_annotation(a.annotation)}
    names.update({a.arg: None for a in func.args.kwonlyargs if _is_table_annotation(a.annotation)})
    for node in _own_nodes(func):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "Table"):
            label = node.value.args[2] if len(node.value.args) > 2 else None
            table = toml_table(label.value) if isinstance(label, ast.Constant) and isinstance(label.value, str) \
                else None
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = table
    return names


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    """Each node's parent."""
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _binding(target: ast.expr, name: str) -> tuple[bool, int | None]:
    """Whether a loop target binds ``name``, and at which place of a tuple target (None: the whole target)."""
    if isinstance(target, ast.Name):
        return target.id == name, None
    if isinstance(target, ast.Tuple):
        for place, element in enumerate(target.elts):
            if isinstance(element, ast.Name) and element.id == name:
                return True, place
    return False, None


def _strings(values: ast.expr, place: int | None) -> list[str] | None:
    """The strings of a literal tuple / list / set (at ``place`` of each element tuple); None if not literal."""
    if not isinstance(values, ast.Tuple | ast.List | ast.Set):
        return None
    out = []
    for element in values.elts:
        if place is not None:
            if not isinstance(element, ast.Tuple | ast.List) or len(element.elts) <= place:
                return None
            element = element.elts[place]
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return None
        out.append(element.value)
    return out


def _loop_keys(name: str, node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> list[str] | None:
    """The strings ``name`` takes at ``node`` when the nearest ``for`` loop or comprehension around it that binds
    ``name`` takes it from a literal tuple or list (of strings, or of tuples holding a string at its place);
    None otherwise (not bound by a loop, or from something else)."""
    while node in parents and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        node = parents[node]
        if isinstance(node, ast.For):
            loops: list[ast.For | ast.comprehension] = [node]
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            loops = list(node.generators)
        else:
            continue
        for loop in loops:
            bound, place = _binding(loop.target, name)
            if bound:
                return _strings(loop.iter, place)
    return None


def _keys_of(arg: ast.expr, at: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> list[str] | None:
    """The key(s) an argument names: a string literal, or a loop variable over literal strings; None otherwise."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.Name):
        return _loop_keys(arg.id, at, parents)
    return None


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def reader_helpers(trees: Mapping[str, ast.Module], getters: frozenset[str]) -> dict[str, tuple[int, int]]:
    """Functions that read a key of a ``Table`` they are given: name -> (place of the table, place of the key)
    among the positional arguments of a call (``self`` not counted)."""
    helpers: dict[str, tuple[int, int]] = {}
    changed = True
    while changed:
        changed = False
        for tree in trees.values():
            for _qualname, func in _functions(tree):
                if func.name in helpers:
                    continue
                params = [a.arg for a in _params(func)]
                tables = [k for k, a in enumerate(_params(func)) if _is_table_annotation(a.annotation)]
                for node in _own_nodes(func):
                    if not isinstance(node, ast.Call) or not tables:
                        continue
                    name = _called(node)
                    if name in getters and isinstance(node.func, ast.Attribute):
                        table_arg, key_arg = node.func.value, node.args[0] if node.args else None
                    elif name in helpers and len(node.args) > max(helpers[name]):
                        table_arg, key_arg = node.args[helpers[name][0]], node.args[helpers[name][1]]
                    else:
                        continue
                    if (isinstance(table_arg, ast.Name) and table_arg.id in params
                            and params.index(table_arg.id) in tables and isinstance(key_arg, ast.Name)
                            and key_arg.id in params):
                        helpers[func.name] = (params.index(table_arg.id), params.index(key_arg.id))
                        changed = True
                        break
    return helpers


def static_reads(root: Path = SOURCE) -> StaticReads:
    """Every read of a config key in the package folder ``root`` (module names relative to its parent; the
    ``Table`` class is read from its ``tasks/base.py``). See the module's docstring."""
    trees = {p.relative_to(root.parent).as_posix(): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
             for p in sorted(root.rglob("*.py"))}
    getters = table_getters(ast.parse((root / "tasks" / "base.py").read_text(encoding="utf-8")))
    helpers = reader_helpers(trees, getters)
    reads: list[Read] = []
    probes: set[str] = set()
    for module, tree in trees.items():
        parents = _parents(tree)
        for qualname, func in _functions(tree):
            if qualname.startswith("Table."):
                continue
            tables = _tables_in(func)
            own_keys = {a.arg for a in _params(func)} if func.name in helpers else set()
            for node in _own_nodes(func):
                probes.update(_probed(node, tables, parents))
                if not isinstance(node, ast.Call):
                    continue
                name = _called(node)
                if name in getters and isinstance(node.func, ast.Attribute):
                    owner, key_arg = node.func.value, node.args[0] if node.args else None
                elif name in helpers and len(node.args) > max(helpers[name]):
                    owner, key_arg = node.args[helpers[name][0]], node.args[helpers[name][1]]
                else:
                    continue
                if not (isinstance(owner, ast.Name) and owner.id in tables) or key_arg is None:
                    continue
                if isinstance(key_arg, ast.Name) and key_arg.id in own_keys:
                    continue  # a helper passing its own key on: the read is where the helper is called
                keys = _keys_of(key_arg, node, parents)
                for key in keys if keys is not None else [None]:
                    reads.append(Read(module, qualname, node.lineno, ast.unparse(node), key, tables[owner.id]))
    return StaticReads(getters, helpers, tuple(sorted(reads, key=lambda r: (r.module, r.line))), frozenset(probes))


def _probed(node: ast.AST, tables: Mapping[str, str | None], parents: Mapping[ast.AST, ast.AST]) -> list[str]:
    """Keys looked up in a table's raw data: ``"k" in t.data``, ``t.data.get("k")``, ``t.data["k"]``."""
    def is_data(expr: ast.expr) -> bool:
        return (isinstance(expr, ast.Attribute) and expr.attr == "data" and isinstance(expr.value, ast.Name)
                and expr.value.id in tables)

    key: ast.expr | None = None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn):
        key = node.left if is_data(node.comparators[0]) else None
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
          and is_data(node.func.value) and node.args):
        key = node.args[0]
    elif isinstance(node, ast.Subscript) and is_data(node.value):
        key = node.slice
    keys = _keys_of(key, node, parents) if key is not None else None
    return keys or []  # an unresolved probe marks nothing read, so it cannot hide a key


# ----------------------------------------------------------------------------- dynamic: what loading reads


@dataclass(frozen=True)
class TableRead:
    """One table the parser built while loading ``config``: its label, its data and the keys it asked for."""

    config: str
    where: str
    data: Mapping[str, Any]
    read: frozenset[str]


@contextmanager
def recording_tables() -> Iterator[list[Table]]:
    """Every :class:`Table` built in the block, kept as it was built (observed by a profile hook at the return of
    ``Table.__init__``; nothing of evalkit is replaced)."""
    made: list[Table] = []
    init = Table.__init__.__code__
    previous = sys.getprofile()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is init:
            table = frame.f_locals.get("self")
            if table is not None and hasattr(table, "read"):
                made.append(table)

    sys.setprofile(profile)
    try:
        yield made
    finally:
        sys.setprofile(previous)


def load_recording(config: Path, name: str) -> list[TableRead]:
    """The tables ``load_study`` builds for ``config`` (ConfigError: the config is broken, which fails the test)."""
    with recording_tables() as made:
        load_study(config)
    return [TableRead(name, t.where, t.data, frozenset(t.read)) for t in made]


_TASK = r"\[\[tasks\]\] #\d+(?: \(id '[^']*'\))?"
#: a table's label in messages -> the table as written in TOML
LABELS = (
    (re.compile(r"^top level$"), ""),
    (re.compile(r"^(\[[a-z_.]+\])$"), None),  # [study], [study.session], [pool], ...: the label itself
    (re.compile(rf"^{_TASK}$"), "[[tasks]]"),
    (re.compile(rf"^{_TASK} scale #\d+$"), "[[tasks.scales]]"),
    (re.compile(rf"^{_TASK} metric #\d+$"), "[[tasks.metrics]]"),
    (re.compile(rf"^{_TASK} familiarity$"), "[tasks.familiarity]"),
    (re.compile(rf"^{_TASK} system_label$"), "[tasks.system_label]"),
    (re.compile(rf"^{_TASK} field #\d+(?: \(id '[^']*'\))?$"), "[[tasks.fields]]"),
)


def toml_table(where: str) -> str | None:
    """The TOML table a ``Table`` labelled ``where`` is (None: a label this test does not know)."""
    for pattern, table in LABELS:
        match = pattern.match(where)
        if match:
            return match.group(1) if table is None else table
    return None


# ----------------------------------------------------------------------------- the checks


def _sections_of(sections: Sequence[Section], table: str, data: Mapping[str, Any]) -> list[Section]:
    return [s for s in sections if config_keys.applies(s, table, dict(data))]


def entry_problems(sections: Sequence[Section]) -> list[str]:
    """What is wrong with the registry itself: a key without a description, type or default, a section id used
    twice, a ``see`` naming no section, two sections giving one table the same key, an example that is not TOML
    or shows a key its table does not take."""
    problems = []
    ids = [s.id for s in sections]
    problems += [f"section id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for sec in sections:
        if not sec.title.strip() or not sec.intro.strip():
            problems.append(f"section {sec.id!r} has no title or no introduction")
        for key in sec.keys:
            for what in ("description", "type", "default"):
                if not getattr(key, what).strip():
                    problems.append(f"{sec.table or 'top level'} ({sec.id}): key {key.name!r} has no {what}")
            if key.see and key.see not in ids:
                problems.append(f"{sec.id}: key {key.name!r} refers to section {key.see!r}, which does not exist")
            if "|" in key.description + key.type + key.default:
                problems.append(f"{sec.id}: key {key.name!r}: a '|' would break the reference's table")
    for table in sorted({s.table for s in sections}):
        whens = [s.when for s in sections if s.table == table and s.when is not None]
        for selector in ({(w[0], v) for w in whens for v in w[1]} or {("", "")}):
            names = [k.name for s in _sections_of(sections, table, {selector[0]: selector[1]}) for k in s.keys]
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                problems.append(f"{table} with {selector[0]} = {selector[1]!r}: keys {repeated} are described by "
                                "more than one section")
    for sec in sections:
        if sec.example:
            problems += _example_problems(sections, sec)
    return problems


def _example_problems(sections: Sequence[Section], sec: Section) -> list[str]:
    try:
        doc = tomllib.loads(sec.example)
    except tomllib.TOMLDecodeError as exc:
        return [f"{sec.id}: the example is not valid TOML: {exc}"]
    found: list[dict[str, Any]] = [doc]
    for part in sec.table.strip("[]").split(".") if sec.table else ():
        nxt: list[dict[str, Any]] = []
        for t in found:
            value = t.get(part)
            nxt.extend([value] if isinstance(value, dict) else [v for v in value or () if isinstance(v, dict)])
        found = nxt
    problems = []
    if not any(config_keys.applies(sec, sec.table, t) for t in found):
        problems.append(f"{sec.id}: the example has no {sec.table} table this section describes")
    for t in found:
        mine = [k for s in _sections_of(sections, sec.table, t) for k in s.keys]
        if any(k.placeholder for k in mine):
            continue
        known = {k.name for k in mine}
        problems += [f"{sec.id}: the example's key {k!r} is not described for {sec.table}" for k in t
                     if k not in known]
    return problems


def static_problems(sections: Sequence[Section], found: StaticReads) -> list[str]:
    """A key the sources read that no section describes (for its table, when the read names the table), a
    described key no source reads, a raw probe of a key no getter reads, an unresolved read not in
    :data:`UNRESOLVED`."""
    problems = []
    described = {k.name for s in sections for k in s.keys if not k.placeholder}
    read = {r.key for r in found.reads if r.key is not None}
    for r in found.reads:
        where = f"{r.module}:{r.line} ({r.function}): {r.call}"
        if r.key is None:
            if (r.module, r.function, r.call) not in UNRESOLVED:
                problems.append(f"{where}: reads a key that is not a literal; resolve it or list it in UNRESOLVED")
        elif r.key not in described:
            problems.append(f"{where}: reads {r.key!r}, which evalkit/config_keys.py does not describe")
        elif r.table is not None:
            names = {k.name for s in sections if s.table == r.table for k in s.keys}
            if r.key not in names:
                problems.append(f"{where}: reads {r.key!r} of {r.table}, which evalkit/config_keys.py does not "
                                f"describe for {r.table}")
    for name in sorted(described - read):
        owners = ", ".join(s.id for s in sections for k in s.keys if k.name == name)
        problems.append(f"{name!r} ({owners}) is described, but no source reads it (stale)")
    problems += [f"the sources probe {name!r} in a table's data, but no getter reads it" for name in
                 sorted(found.probes - read)]
    seen = {(r.module, r.function, r.call) for r in found.reads if r.key is None}
    problems += [f"UNRESOLVED lists {entry}, which the sources no longer hold" for entry in UNRESOLVED
                 if entry not in seen]
    return problems


def dynamic_problems(sections: Sequence[Section], tables: Sequence[TableRead]) -> list[str]:
    """A key a loaded table asked for that no section of that table describes, a table no section describes, and
    a described key that no loaded table asked for (stale, or reached by none of the configs)."""
    problems = []
    used: set[tuple[str, str]] = set()
    for t in tables:
        table = toml_table(t.where)
        mine = [] if table is None else _sections_of(sections, table, t.data)
        if not mine:
            problems.append(f"{t.config}: {t.where}: no section of evalkit/config_keys.py describes this table")
            continue
        for sec in mine:
            used.update((sec.id, k.name) for k in sec.keys if k.placeholder)
        names = {k.name: sec.id for sec in mine for k in sec.keys}
        if any(k.placeholder for sec in mine for k in sec.keys):
            continue
        for key in sorted(t.read):
            if key in names:
                used.add((names[key], key))
            else:
                problems.append(f"{t.config}: {t.where}: the parser reads {key!r}, which evalkit/config_keys.py "
                                f"does not describe for {table or 'the top level'}")
    for sec in sections:
        for key in sec.keys:
            if (sec.id, key.name) not in used:
                problems.append(f"{sec.id}: {key.name!r} is described, but loading the configs never read it "
                                "(stale, or no config reaches it: extend COVERAGE)")
    return problems


# ----------------------------------------------------------------------------- the configs loaded

#: configs written here for the keys the examples and the test builders do not reach
COVERAGE_STUDY = """
[study]
title = "Every key"
description = "One line."
datasets = "datasets"
database = "responses.sqlite"
seed = 3
estimated_minutes = 5
consent = "consent.md"
record_user_agent = true
participants = "invited"
positions = "shuffle"
completion_url = "https://example.org/done?cc={code}"
completion_code_pass = "PASS1"
completion_code_fail = "FAIL1"
completion_code_full = "FULL1"
redirect_seconds = 0
media = "media"
allow_remote_media = true

[study.quality]
max_failed_checks = 1

[study.session]
max_minutes = 30
questions = 40
pause_every = 10
abandon_minutes = 0

[study.domain_names]
alpha = "Alphas"

[pool]
max_sentences = 4
min_sentences = 1
min_chars = 40
max_chars = 600

[bias]
length_tolerance = 0.5
sentence_tolerance = 2
truncate = [0.9, 1.0]

[[tasks]]
kind = "triplet"
id = "spot"
title = "Spot it"
instructions = "Pick one."
question = "Which one?"
sources = ["real", "gen", "base"]
target = "real"
domains = ["alpha", "beta"]
selection = "shared"
order = "fixed"
checks = "checks.jsonl"
tutorial = ["c1"]
tutorial_skippable = true
attention_checks = ["c2"]
attention_feedback = true

[[tasks]]
kind = "realfake"
id = "pools"
sources = ["real", "gen"]
domains = ["alpha", "beta"]
target = "real"
confidence = []
question = "Real?"
input_label = "Prompt"
output_label = "Text"

[[tasks]]
kind = "rating"
id = "rate"
items = "datasets/items.jsonl"
min_items = 1
suggested_items = 2

[tasks.familiarity]
id = "known"
label = "Known"
question = "Do you know it?"
anchors = ["No", "Yes"]

[tasks.system_label]
heading = "Verdict"
scale = [0, 1]
names = ["No", "Yes"]
probability = "Chance"

[[tasks.metrics]]
id = "quality"
label = "Quality"
question = "How good is it?"
anchors = ["bad", "good"]

[[tasks]]
kind = "score"
id = "scores"
items = "items.jsonl"
questions = 2
judgments_per_item = 2
claim_minutes = 15
outputs_per_question = 2
textfield = "post-edit"
input_label = "Source"
output_label = "Summary"
question = "How good?"

[[tasks.scales]]
id = "overall"
label = "Overall"
type = "slider"
min = 1
max = 10

[[tasks]]
kind = "score"
id = "fixed"
items = "items.jsonl"
assignment = "fixed"
assignments = "assignments.csv"
shuffle = false
require_full_play = true

[[tasks.scales]]
id = "overall"
label = "Overall"
type = "slider"

[[tasks]]
kind = "form"
id = "about"
submit = "Go on"

[[tasks.fields]]
id = "age"
label = "Age"
type = "number"
optional = true
help = "In years."
min = 18
max = 99
integer = false

[[tasks.fields]]
id = "mood"
type = "likert"
min = 1
max = 5
min_label = "Low"
max_label = "High"
"""
COVERAGE_CHECKS = [{"id": "c1", "reviews": ["real/alpha/ra0", "gen/alpha/ga0", "base/alpha/ba0"], "expect": "real"},
                   {"id": "c2", "reviews": ["real/beta/rb0", "gen/beta/gb0", "base/beta/bb0"], "expect": "real",
                    "feedback": "Look again."}]


def write_coverage_study(folder: Path) -> Path:
    """:data:`COVERAGE_STUDY` in ``folder`` with the files it names (load_study checks that they exist)."""
    config = make_study(folder, config=COVERAGE_STUDY)
    write_items(folder / "items.jsonl", 4)
    (folder / "consent.md").write_text("You agree.\n", encoding="utf-8")
    (folder / "assignments.csv").write_text("participant_id,item_id\nP01,r1\nP01,r0\n", encoding="utf-8")
    (folder / "checks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in COVERAGE_CHECKS), encoding="utf-8")
    return config


def study_configs(tmp: Path) -> list[tuple[str, Path]]:
    """(name, config) of every study loaded: the examples, the demo, the test fixtures, the test builders' studies
    and :data:`COVERAGE_STUDY`."""
    found = [(str(p.relative_to(ROOT)), p) for p in
             [ROOT / "config.toml", *sorted((ROOT / "examples").glob("*/config.toml")),
              *sorted((ROOT / "tests" / "fixtures").glob("*/config.toml"))]]
    builders = {
        "make_study": lambda d: make_study(d),
        "make_token_study (slider)": lambda d: make_token_study(d, response="slider"),
        "make_demo_with_items_tasks": make_demo_with_items_tasks,
        "make_items_study (every kind)": lambda d: make_items_study(
            d, task_block("compare"), task_block("score", textfield="comment"), task_block("rank"),
            task_block("realfake")),
        "COVERAGE_STUDY": write_coverage_study,
    }
    for k, (name, build) in enumerate(builders.items()):
        folder = tmp / f"study{k}"
        folder.mkdir()
        found.append((name, build(folder)))
    return found


@pytest.fixture(scope="module")
def loaded_tables(tmp_path_factory: pytest.TempPathFactory) -> list[TableRead]:
    tables: list[TableRead] = []
    for name, config in study_configs(tmp_path_factory.mktemp("configs")):
        try:
            tables += load_recording(config, name)
        except ConfigError as exc:  # pragma: no cover - a broken config is a failure with its message
            pytest.fail(f"{name}: {exc}")
    return tables


@pytest.fixture(scope="module")
def found() -> StaticReads:
    return static_reads()


# ----------------------------------------------------------------------------- the tests


def test_every_key_has_a_description_type_and_default() -> None:
    assert entry_problems(SECTIONS) == []


def test_every_key_the_sources_read_is_described_and_every_described_key_is_read(found: StaticReads) -> None:
    assert static_problems(SECTIONS, found) == []


def test_every_key_loading_reads_is_described_and_every_described_key_is_read(
        loaded_tables: list[TableRead]) -> None:
    assert dynamic_problems(SECTIONS, loaded_tables) == []


def test_the_static_reader_sees_every_way_the_code_reads_a_key(found: StaticReads) -> None:
    """The extractor is not vacuous: the getters, the helpers and the keys read through loops and helpers."""
    assert {"get", "str", "int", "float", "strs", "choice", "ident", "fail_later"} <= found.getters
    assert {"path", "_bool", "_flag", "_number", "_options"} <= set(found.helpers)
    keys = {r.key for r in found.reads}
    assert {"completion_code_full",  # a loop over a literal tuple
            "pause_every",  # a dict comprehension over one
            "output_label",  # a loop over a tuple of (key, default) pairs
            "items",  # Common.path(t, "items")
            "optional", "tutorial_skippable", "integer",  # reader helpers
            "claim_minutes"} <= keys  # fail_later
    pinned = {(r.table, r.key) for r in found.reads if r.table is not None}
    assert {("[study]", "seed"), ("[study.session]", "abandon_minutes"), ("[bias]", "truncate")} <= pinned
    assert {"checks", "claim_minutes", "sources"} <= found.probes


def test_the_recorder_sees_every_table_of_a_config(loaded_tables: list[TableRead]) -> None:
    tables = {toml_table(t.where) for t in loaded_tables}
    assert tables == {s.table for s in SECTIONS}
    kinds = {t.data.get("kind") for t in loaded_tables if toml_table(t.where) == "[[tasks]]"}
    assert kinds == set(config_keys.KINDS)
    assert all(toml_table(t.where) is not None for t in loaded_tables)


def test_the_registry_lists_the_kinds_the_code_registers() -> None:
    from evalkit.tasks import KINDS

    assert tuple(KINDS) == config_keys.KINDS
    from evalkit.checks import CHECK_KINDS

    assert set(config_keys.CHECK_KINDS) == set(CHECK_KINDS)


# ----------------------------------------------------------------------------- bad input: altered copies


def _with_key(sections: Sequence[Section], section_id: str, key: Key) -> list[Section]:
    return [dataclasses.replace(s, keys=(*s.keys, key)) if s.id == section_id else s for s in sections]


def _without_key(sections: Sequence[Section], section_id: str, name: str) -> list[Section]:
    return [dataclasses.replace(s, keys=tuple(k for k in s.keys if k.name != name)) if s.id == section_id else s
            for s in sections]


def _edited_key(sections: Sequence[Section], section_id: str, name: str, **changes: str) -> list[Section]:
    return [dataclasses.replace(s, keys=tuple(dataclasses.replace(k, **changes) if k.name == name else k
                                              for k in s.keys)) if s.id == section_id else s for s in sections]


def test_a_made_up_key_in_the_registry_is_caught_both_ways(found: StaticReads,
                                                           loaded_tables: list[TableRead]) -> None:
    altered = _with_key(SECTIONS, "study.session", Key("made_up_key", "integer", "0", "Not read by anything."))
    static = static_problems(altered, found)
    assert len(static) == 1 and "'made_up_key'" in static[0] and "stale" in static[0]
    dynamic = dynamic_problems(altered, loaded_tables)
    assert len(dynamic) == 1 and "study.session: 'made_up_key'" in dynamic[0]
    assert SECTIONS == config_keys.SECTIONS and "made_up_key" not in {k.name for s in SECTIONS for k in s.keys}


def test_a_key_moved_to_the_wrong_table_is_caught(found: StaticReads, loaded_tables: list[TableRead]) -> None:
    """``seed`` described under [pool] instead of [study]: the name is still described somewhere, but the static
    read pins it to [study], and the recorded [study] tables read it."""
    altered = _with_key(_without_key(SECTIONS, "study", "seed"), "pool",
                        Key("seed", "integer", "0", "The seed, in the wrong table."))
    assert any("reads 'seed' of [study]" in p for p in static_problems(altered, found))
    dynamic = dynamic_problems(altered, loaded_tables)
    assert any("[study]: the parser reads 'seed'" in p for p in dynamic)
    assert any("pool: 'seed' is described, but loading the configs never read it" in p for p in dynamic)


def test_a_removed_key_is_caught_both_ways(found: StaticReads, loaded_tables: list[TableRead]) -> None:
    altered = _without_key(SECTIONS, "tasks.items", "claim_minutes")
    static = static_problems(altered, found)
    assert static and all("'claim_minutes'" in p and "does not describe" in p for p in static)
    dynamic = dynamic_problems(altered, loaded_tables)
    assert dynamic and all("reads 'claim_minutes'" in p for p in dynamic)


def test_a_key_described_for_one_kind_only_is_caught_for_the_other(loaded_tables: list[TableRead]) -> None:
    """``question`` left out of the rank section: still described for other kinds (the static check, by name,
    cannot tell), but the recorded rank tasks read it."""
    altered = _without_key(SECTIONS, "tasks.rank", "question")
    problems = dynamic_problems(altered, loaded_tables)
    assert problems and all("reads 'question'" in p and "[[tasks]]" in p for p in problems)


@pytest.mark.parametrize("field", ["description", "type", "default"])
def test_a_removed_description_is_caught(field: str) -> None:
    altered = _edited_key(SECTIONS, "study", "seed", **{field: " "})
    assert entry_problems(altered) == [f"[study] (study): key 'seed' has no {field}"]
    assert all(getattr(k, field).strip() for k in config_keys.section("study").keys)  # the module is untouched


def test_a_broken_example_or_reference_is_caught() -> None:
    altered = [dataclasses.replace(s, example=s.example + "made_up = 1\n") if s.id == "study.session" else s
               for s in SECTIONS]
    assert entry_problems(altered) == ["study.session: the example's key 'made_up' is not described for "
                                       "[study.session]"]
    altered = _edited_key(SECTIONS, "study", "session", see="study.sessions")
    assert entry_problems(altered) == ["study: key 'session' refers to section 'study.sessions', which does not "
                                       "exist"]


def test_an_unresolved_read_is_reported(tmp_path: Path) -> None:
    """A getter called with a computed key is an unresolved read (reported unless UNRESOLVED gives a reason); a
    literal one is resolved."""
    pkg = tmp_path / "evalkit"
    (pkg / "tasks").mkdir(parents=True)
    (pkg / "tasks" / "base.py").write_text(BASE.read_text(encoding="utf-8"), encoding="utf-8")
    (pkg / "odd.py").write_text(
        "from .tasks.base import Table\n\n\ndef parse(t: Table, name: str) -> None:\n"
        "    t.int(name + '_count')\n    t.str('title')\n", encoding="utf-8")
    found = static_reads(pkg)
    reads = [(r.key, r.call) for r in found.reads if r.module == "evalkit/odd.py"]
    assert reads == [(None, "t.int(name + '_count')"), ("title", "t.str('title')")]
    problems = static_problems(SECTIONS, found)
    assert any("evalkit/odd.py:5 (parse): t.int(name + '_count'): reads a key that is not a literal" in p
               for p in problems)


# ----------------------------------------------------------------------------- the generated reference pages


def _hook() -> Any:
    """``docs/hooks/reference.py``, imported from its file (it is not a package module)."""
    import importlib.util

    path = ROOT / "docs" / "hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("evalkit_docs_reference_hook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_reference_shows_every_section_and_key() -> None:
    hook = _hook()
    page = hook.on_page_markdown(f"# Configuration keys\n\n{hook.CONFIG_MARKER}\n", page=None)
    assert hook.CONFIG_MARKER not in page
    for sec in SECTIONS:
        assert f"{{#{hook.section_anchor(sec.id)}}}" in page
        for key in sec.keys:
            assert f"| `{key.name}` |" in page, (sec.id, key.name)
        if sec.example:
            assert sec.example.rstrip("\n") in page
    anchors = re.findall(r"\{#([a-z0-9-]+)\}", page)
    assert len(anchors) == len(set(anchors)) == len(SECTIONS)
    assert set(re.findall(r"\]\(#([a-z0-9-]+)\)", page)) <= set(anchors)  # every link lands on a section


def test_the_command_line_reference_is_walked_from_the_parser() -> None:
    """Every subcommand and option of the real parser, and a made-up parser's prog, choices, defaults, required
    arguments, mutually exclusive group and nested subcommand: nothing is hard-coded."""
    import argparse

    from evalkit.__main__ import build_parser

    hook = _hook()
    page = hook.on_page_markdown(f"# Command line\n\n{hook.CLI_MARKER}\n")
    parser = build_parser()
    assert f"`{parser.prog}`" in page
    for name, _help, sub in hook.subcommands(parser):
        assert f"## `{name}` {{#command-{name}}}" in page
        for action in sub._actions:
            for option in action.option_strings:
                assert option in page or option in ("-h", "--help")

    made = argparse.ArgumentParser(prog="evalkit", description="Made up.")
    subs = made.add_subparsers(dest="command", required=True)
    tool = subs.add_parser("tool", help="do a thing")
    tool.add_argument("--level", choices=("low", "high"), default="low", help="how much (default: %(default)s)")
    tool.add_argument("--name", required=True, metavar="NAME", help="who")
    either = tool.add_mutually_exclusive_group(required=True)
    either.add_argument("--all", action="store_true", help="every one")
    either.add_argument("--some", nargs="+", metavar="ID", help="these")
    inner = tool.add_subparsers(dest="inner").add_parser("deep", help="go deeper")
    inner.add_argument("path", help="a file")
    text = hook.cli_reference(made)
    assert "Every command of `evalkit`" in text and "Made up." in text
    assert "## `tool` {#command-tool}" in text and "### deep {#command-tool-deep}" in text
    assert "| `--level {low,high}` | `low` | How much (default: low). One of `low`, `high`. |" in text
    assert "| `--name NAME` | **required** | Who. |" in text
    assert "Exactly one of `--all`, `--some` is given." in text and "`--some ID [ID ...]`" in text
    assert "| `path` | **required** | A file. |" in text
    assert "usage: evalkit tool deep [-h] path" in text


def test_the_pearmut_key_tables_show_every_key_the_importer_knows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key of TOP_KEYS, INFO_KEYS and ITEM_KEYS is a row with what it becomes, in three tables; a key added to
    the importer appears without touching the hook."""
    from evalkit import pearmut_import

    hook = _hook()
    page = hook.on_page_markdown(f"# Coming from Pearmut\n\n{hook.PEARMUT_MARKER}\n", page=None)
    assert hook.PEARMUT_MARKER not in page
    assert len(re.findall(r"^\| [^|]+ \| In evalkit \|$", page, flags=re.M)) == 3
    for keys in (pearmut_import.TOP_KEYS, pearmut_import.INFO_KEYS, pearmut_import.ITEM_KEYS):
        for key, text in keys.items():
            shown = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
            assert f"| `{key}` | {shown} |" in page, key
    monkeypatch.setitem(pearmut_import.INFO_KEYS, "made_up_key", "a <b>made up</b> | key")
    page = hook.on_page_markdown(hook.PEARMUT_MARKER)
    assert "| `made_up_key` | a &lt;b&gt;made up&lt;/b&gt; \\| key |" in page


def test_the_hook_leaves_other_pages_alone() -> None:
    page = "# Other\n\nNo marker here: <!-- something else -->\n"
    assert _hook().on_page_markdown(page, page=None, config=None, files=None) == page
